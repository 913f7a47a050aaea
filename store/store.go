// Package store keeps shared links: a state stored once under an id derived from its content,
// never overwritten. It speaks to an embedded SQLite file by default (pure Go, no cgo) or to
// PostgreSQL, so several replicas can share links.
package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"modernc.org/sqlite"               // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotFound is Get's answer for an id nobody stored, and for a string that is not an id at all
// (ValidID), which is never looked up.
var ErrNotFound = errors.New("no such link")

// The failures a caller tells apart: Put wraps the database's error in one of them when it is
// one of these, and returns other errors (connection refused, a timeout, …) as they are.
var (
	// ErrFull: the store's quota is used up, or the database's disk is full.
	ErrFull = errors.New("the link store is full")
	// ErrReadOnly: the database can be read but not written (a read-only file or replica).
	ErrReadOnly = errors.New("the link store is read-only")
)

// classify wraps the database's "disk full" and "read-only" errors in ErrFull and ErrReadOnly,
// for SQLite (result codes 13 and 8, with their extended codes) and PostgreSQL (SQLSTATE 53100,
// and 25006).
func classify(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("%w: %w", ErrFull, err)
		case sqlite3.SQLITE_READONLY:
			return fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "53100": // disk_full
			return fmt.Errorf("%w: %w", ErrFull, err)
		case "25006": // read_only_sql_transaction (a hot standby, default_transaction_read_only)
			return fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
	}
	return err
}

// Link is one stored state.
type Link struct {
	ID string
	// State is the state's JSON, exactly as it was shared.
	State []byte
	// Istio is the Istio release the link was made with; OutputHash the hash of the output it
	// showed then, so a later Istio can say whether its output differs.
	Istio      string
	OutputHash string
	Created    time.Time
}

// idEncoding is Crockford's base32 alphabet in lower case (no i, l, o or u to misread), unpadded.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// IDLength is 16 characters: 80 bits of an HMAC-SHA-256, far beyond any chance of a collision
// here.
const IDLength = 16

var idRE = regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{16}$`)

// ID derives a link's id from its content, keyed with the store's secret (HMAC-SHA-256): the same
// state always gets the same id from every replica on one database, and nobody without the
// secret can compute it, so an id says nothing about whether a guessable state (a known manifest
// with a known password) was shared. (Links made before the key, plain SHA-256, still open: an
// id is only ever looked up.)
func (s *SQL) ID(state []byte) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write(state)
	return idEncoding.EncodeToString(mac.Sum(nil))[:IDLength]
}

// ValidID reports whether s could be an id (anything else is not looked up at all).
func ValidID(s string) bool { return idRE.MatchString(s) }

// SQL is a store on a database/sql database: SQLite or PostgreSQL.
type SQL struct {
	db      *sql.DB
	dialect string
	// key is the secret ID is keyed with, made once per database and kept in it (linkKey).
	key []byte
	// Quota bounds the database's size in bytes (0: no bound): Put refuses a new link with
	// ErrFull once the size plus the new state would pass it. Set it before the first Put. The
	// size is the database's own (Size), so the bound holds for what is on disk; concurrent Puts
	// may pass it by at most one state each.
	Quota int64
}

// OpenSQLite opens (creating on first use) the SQLite file at path, in WAL mode. ctx bounds the
// opening.
func OpenSQLite(ctx context.Context, path string) (*SQL, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, err
	}
	return open(ctx, db, "sqlite")
}

// OpenPostgres connects to PostgreSQL with a DSN ("postgres://user@host:5432/db?sslmode=disable").
// ctx bounds the connecting (a server that accepts and never answers included).
func OpenPostgres(ctx context.Context, dsn string) (*SQL, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	return open(ctx, db, "postgres")
}

func open(ctx context.Context, db *sql.DB, dialect string) (*SQL, error) {
	s := &SQL{db: db, dialect: dialect}
	if err := s.createTables(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("create the tables: %w", classify(err))
	}
	var err error
	if s.key, err = s.linkKey(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("the link key: %w", classify(err))
	}
	return s, nil
}

// schemaLock is the PostgreSQL advisory lock the tables are created under: an arbitrary
// constant (the bytes of "sidecarl"), the same in every replica.
const schemaLock int64 = 0x73696465636172_6c

// createTables creates the links and secrets tables unless they exist. On PostgreSQL, CREATE
// TABLE IF NOT EXISTS is not safe against itself: replicas that start together on a fresh
// database all see no table, all create one, and all but the first fail on the catalog's unique
// index (SQLSTATE 23505 on pg_type, or 42P07/42710). So the creation runs in one transaction
// that first takes a transaction-level advisory lock: the replicas create the tables one after
// another, the later ones finding them there; the lock goes with the commit or rollback, so a
// replica that dies holding it holds nobody up. (A retry on those codes would work too, but
// would leave the race in place and need a bound on its tries.) SQLite takes the database's
// write lock for the statement, so it needs no more.
func (s *SQL) createTables(ctx context.Context) error {
	ts := "TEXT"
	if s.dialect == "postgres" {
		ts = "TIMESTAMPTZ"
	}
	tables := []string{`CREATE TABLE IF NOT EXISTS links (
		id          TEXT PRIMARY KEY,
		state       TEXT NOT NULL,
		istio       TEXT NOT NULL,
		output_hash TEXT NOT NULL,
		created     ` + ts + ` NOT NULL
	)`, `CREATE TABLE IF NOT EXISTS secrets (
		name  TEXT PRIMARY KEY,
		value TEXT NOT NULL
	)`}
	if s.dialect != "postgres" {
		for _, stmt := range tables {
			if _, err := s.db.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op once committed
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLock); err != nil {
		return err
	}
	for _, stmt := range tables {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// linkKey is the database's secret for ids (in the secrets table): 32 random bytes, made by the
// first process that opens the database and read by every later one (replicas that open it at
// once agree: the first insert wins and all read it back). A read-only database that has none
// yet opens without one: it can be read, and Put fails there anyway (ErrReadOnly).
func (s *SQL) linkKey(ctx context.Context) ([]byte, error) {
	read := func() (string, error) {
		var v string
		err := s.db.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = 'link-key'`).Scan(&v)
		return v, err
	}
	v, err := read()
	if errors.Is(err, sql.ErrNoRows) {
		fresh := make([]byte, 32)
		_, _ = rand.Read(fresh) // crypto/rand never fails (Go 1.24+)
		_, err = s.db.ExecContext(ctx, s.q(`INSERT INTO secrets (name, value) VALUES ('link-key', ?) ON CONFLICT (name) DO NOTHING`),
			hex.EncodeToString(fresh))
		if errors.Is(classify(err), ErrReadOnly) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		v, err = read()
	}
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(v)
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("the stored link key is not 32 bytes of hex")
	}
	return key, nil
}

// Size is the database's size in bytes as the database counts it: SQLite's pages (the file, WAL
// included), PostgreSQL's links table with its index and TOAST.
func (s *SQL) Size(ctx context.Context) (int64, error) {
	query := `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`
	if s.dialect == "postgres" {
		query = `SELECT pg_total_relation_size('links')`
	}
	var n int64
	err := s.db.QueryRowContext(ctx, query).Scan(&n)
	return n, err
}

func (s *SQL) q(query string) string {
	if s.dialect != "postgres" {
		return query
	}
	n := 0
	var b strings.Builder
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Put stores a link unless its id is already stored: stored states are never overwritten. Past
// the quota, a link already stored is still "stored" (its id works); a new one is ErrFull.
func (s *SQL) Put(ctx context.Context, l Link) error {
	if !ValidID(l.ID) {
		return fmt.Errorf("invalid id %q", l.ID)
	}
	if s.Quota > 0 {
		size, err := s.Size(ctx)
		if err != nil {
			return classify(err)
		}
		if size+int64(len(l.State)) > s.Quota {
			if _, err := s.Get(ctx, l.ID); err == nil {
				return nil
			}
			return fmt.Errorf("%w: %d of %d bytes used", ErrFull, size, s.Quota)
		}
	}
	created := l.Created
	if created.IsZero() {
		created = time.Now().UTC()
	}
	var when any = created.Format(time.RFC3339Nano)
	if s.dialect == "postgres" {
		when = created
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO links (id, state, istio, output_hash, created) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		l.ID, string(l.State), l.Istio, l.OutputHash, when)
	return classify(err)
}

// Get loads a link.
func (s *SQL) Get(ctx context.Context, id string) (Link, error) {
	if !ValidID(id) {
		return Link{}, ErrNotFound
	}
	var l Link
	var state string
	var created any
	err := s.db.QueryRowContext(ctx, s.q(`SELECT id, state, istio, output_hash, created FROM links WHERE id = ?`), id).
		Scan(&l.ID, &state, &l.Istio, &l.OutputHash, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Link{}, ErrNotFound
	}
	if err != nil {
		return Link{}, err
	}
	l.State = []byte(state)
	switch c := created.(type) {
	case time.Time:
		l.Created = c
	case string:
		l.Created, _ = time.Parse(time.RFC3339Nano, c)
	}
	return l, nil
}

// Ping checks the database answers.
func (s *SQL) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database.
func (s *SQL) Close() error { return s.db.Close() }
