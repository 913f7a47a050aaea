package room

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres shares a hub's rooms through PostgreSQL, so that every replica of a server serves
// every room: a table keeps each room (its view, its trainer's token hash, its version), and
// NOTIFY on one channel tells every replica of the moves and the counts. LISTEN holds a
// connection of its own for as long as the replica runs (a database/sql pool cannot listen);
// the queries go through a small pool. When the database does not answer, each replica's rooms
// work on it alone (Shared is false, and the trainer is told), and the listener connects again.
type Postgres struct {
	hub     *Hub
	pool    *pgxpool.Pool
	listenC *pgx.ConnConfig
	// id names this replica in the news it sends (and the news it hears back is skipped).
	id      string
	timeout time.Duration
	retry   time.Duration
	shared  atomic.Bool
	counts  chan news
	logf    func(msg string, args ...any)
	stop    context.CancelFunc
	done    sync.WaitGroup
}

// channel is the NOTIFY channel of the rooms' news.
const channel = "sidecarlab_rooms"

// news is one NOTIFY payload: a room's new version (Version), or a replica's counts (Counts).
type news struct {
	Code    string  `json:"c"`
	From    string  `json:"f"`
	Version int64   `json:"v,omitempty"`
	Counts  *[2]int `json:"n,omitempty"`
}

// SharePostgres makes hub share its rooms through the PostgreSQL at dsn, from now on, and
// returns at once: the listener connects in the background (and again whenever it is cut), and
// until it has, the rooms are this replica's only. timeout bounds each query; logf reports what
// fails. Close stops it.
func SharePostgres(dsn string, hub *Hub, timeout time.Duration, logf func(msg string, args ...any)) (*Postgres, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	pc.MaxConns = 4
	lc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	// A wait for news that times out leaves the connection as it was (a read deadline), so that
	// the listener can ping the database between waits.
	lc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		return nil, err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	ctx, cancel := context.WithCancel(context.Background())
	p := &Postgres{hub: hub, pool: pool, listenC: lc, id: hex.EncodeToString(b[:]), timeout: timeout, retry: 2 * time.Second,
		counts: make(chan news, 4096), logf: logf, stop: cancel}
	hub.Share(p)
	p.done.Add(3)
	go p.listen(ctx)
	go p.publish(ctx)
	go p.recount(ctx)
	return p, nil
}

// Close stops sharing: the listener and the publisher end, and the pool closes.
func (p *Postgres) Close() {
	p.stop()
	p.done.Wait()
	p.pool.Close()
}

// Shared reports whether the listener is connected.
func (p *Postgres) Shared() bool { return p.shared.Load() }

// schema creates the rooms' table unless it is there, under a transaction-level advisory lock
// (replicas that start together would otherwise race on the catalog).
const schema = `CREATE TABLE IF NOT EXISTS sidecarlab_rooms (
	code text PRIMARY KEY,
	token bytea NOT NULL,
	view text NOT NULL,
	version bigint NOT NULL,
	moved timestamptz NOT NULL,
	allowed text NOT NULL DEFAULT ''
)`

// schemaLock is the advisory lock the table is created under (the bytes of "slrooms").
const schemaLock int64 = 0x736c726f6f6d73

func (p *Postgres) createTable(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", schemaLock); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, schema); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// listen holds the LISTEN connection, connecting again after p.retry whenever it is cut.
func (p *Postgres) listen(ctx context.Context) {
	defer p.done.Done()
	for {
		err := p.listenOnce(ctx)
		p.shared.Store(false)
		if ctx.Err() != nil {
			return
		}
		p.logf("rooms are this server's only: PostgreSQL does not answer; trying again", "err", err, "in", p.retry)
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.retry):
		}
	}
}

// idleWait is how long the listener waits for news before it pings the database.
const idleWait = 15 * time.Second

func (p *Postgres) listenOnce(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, p.timeout)
	conn, err := pgx.ConnectConfig(cctx, p.listenC)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	cctx, cancel = context.WithTimeout(ctx, p.timeout)
	err = p.createTable(cctx, conn)
	if err == nil {
		_, err = conn.Exec(cctx, "LISTEN "+channel)
	}
	cancel()
	if err != nil {
		return err
	}
	if !p.shared.Swap(true) {
		p.logf("rooms are shared through PostgreSQL")
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, idleWait)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
			// No news for a while: is the database still there?
			pctx, cancel := context.WithTimeout(ctx, p.timeout)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		var m news
		if json.Unmarshal([]byte(n.Payload), &m) != nil || m.From == p.id {
			continue
		}
		if m.Counts != nil {
			p.hub.RemoteCounts(m.Code, m.From, m.Counts[0], m.Counts[1])
			continue
		}
		if rec, ok, err := p.Load(m.Code); err == nil && ok {
			p.hub.Apply(rec)
		}
	}
}

// query runs fn with a context bounded by p.timeout.
func (p *Postgres) query(fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	return fn(ctx)
}

// Create keeps a new room, and forgets the rooms nobody moved for the hub's idle time.
func (p *Postgres) Create(r Record) error {
	return p.query(func(ctx context.Context) error {
		if _, err := p.pool.Exec(ctx, "DELETE FROM sidecarlab_rooms WHERE moved < $1", r.Moved.Add(-p.hub.Limits().Idle)); err != nil {
			return err
		}
		_, err := p.pool.Exec(ctx, "INSERT INTO sidecarlab_rooms (code, token, view, version, moved) VALUES ($1, $2, $3, 1, $4)",
			r.Code, r.Token[:], r.View, r.Moved)
		return err
	})
}

// Move keeps a room's view, and tells the other replicas its new version.
func (p *Postgres) Move(code, view string, moved time.Time) (int64, error) {
	var version int64
	err := p.query(func(ctx context.Context) error {
		err := p.pool.QueryRow(ctx, "UPDATE sidecarlab_rooms SET view = $2, moved = $3, version = version + 1 WHERE code = $1 RETURNING version",
			code, view, moved).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("room %s is not kept (it was made while PostgreSQL did not answer)", code)
		}
		if err != nil {
			return err
		}
		return p.notify(ctx, news{Code: code, From: p.id, Version: version})
	})
	return version, err
}

// Allow keeps the trainer's choice, for the moves other replicas serve.
func (p *Postgres) Allow(code, key string) error {
	return p.query(func(ctx context.Context) error {
		_, err := p.pool.Exec(ctx, "UPDATE sidecarlab_rooms SET allowed = $2 WHERE code = $1", code, key)
		return err
	})
}

// Load is the room kept under code.
func (p *Postgres) Load(code string) (Record, bool, error) {
	r := Record{Code: code}
	var token []byte
	err := p.query(func(ctx context.Context) error {
		return p.pool.QueryRow(ctx, "SELECT token, view, version, moved, allowed FROM sidecarlab_rooms WHERE code = $1", code).
			Scan(&token, &r.View, &r.Version, &r.Moved, &r.Allowed)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, false, nil
	}
	if err != nil || len(token) != len(r.Token) {
		return Record{}, false, cmp.Or(err, errors.New("a room's token hash is not one"))
	}
	copy(r.Token[:], token)
	return r, true, nil
}

// Counts queues this replica's counts of a room for the publisher; when the queue is full (the
// database is slow), they are dropped: the next change, or the next recount, says them.
func (p *Postgres) Counts(code string, following, own int) {
	select {
	case p.counts <- news{Code: code, From: p.id, Counts: &[2]int{following, own}}:
	default:
	}
}

// publish sends the queued counts, the last of each room only when several are queued.
func (p *Postgres) publish(ctx context.Context) {
	defer p.done.Done()
	for {
		var first news
		select {
		case <-ctx.Done():
			return
		case first = <-p.counts:
		}
		last := map[string]news{first.Code: first}
		order := []string{first.Code}
	drain:
		for {
			select {
			case m := <-p.counts:
				if _, ok := last[m.Code]; !ok {
					order = append(order, m.Code)
				}
				last[m.Code] = m
			default:
				break drain
			}
		}
		// Sent even before the listener is connected: the pool may well reach the database.
		for _, code := range order {
			_ = p.query(func(ctx context.Context) error { return p.notify(ctx, last[code]) })
		}
	}
}

// recount says this replica's counts again every RecountEvery, so that the others' stay fresh.
func (p *Postgres) recount(ctx context.Context) {
	defer p.done.Done()
	t := time.NewTicker(RecountEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.hub.Recount()
		}
	}
}

func (p *Postgres) notify(ctx context.Context, m news) error {
	js, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = p.pool.Exec(ctx, "SELECT pg_notify($1, $2)", channel, string(js))
	return err
}
