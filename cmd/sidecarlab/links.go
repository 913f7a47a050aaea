package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sidecarlab/sidecarlab/handlers"
	"github.com/sidecarlab/sidecarlab/store"
)

// sqlLinks is the link store of the handlers (handlers.LinkStore) on package store's SQLite or
// PostgreSQL: the id of a link is the store's ID of its state (keyed with its secret), and store.ErrNotFound, which the store
// also answers for an id it could never have made, is handlers.ErrLinkNotFound. The store's
// ErrFull and ErrReadOnly become the handlers' ErrLinkStoreFull and ErrLinkStoreReadOnly; any
// other failure the handlers take as "the link store does not answer".
type sqlLinks struct{ db *store.SQL }

func (s sqlLinks) Put(ctx context.Context, l handlers.Link) (string, error) {
	id := s.db.ID(l.State)
	if err := s.db.Put(ctx, store.Link{ID: id, State: l.State, Istio: l.Istio, OutputHash: l.OutputHash}); err != nil {
		return "", storeError(err)
	}
	return id, nil
}

func (s sqlLinks) Get(ctx context.Context, id string) (handlers.Link, error) {
	l, err := s.db.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return handlers.Link{}, handlers.ErrLinkNotFound
	}
	if err != nil {
		return handlers.Link{}, storeError(err)
	}
	return handlers.Link{State: l.State, Istio: l.Istio, OutputHash: l.OutputHash}, nil
}

// storeError maps package store's failures to the handlers' (which must not import store).
func storeError(err error) error {
	switch {
	case errors.Is(err, store.ErrFull):
		return fmt.Errorf("%w: %w", handlers.ErrLinkStoreFull, err)
	case errors.Is(err, store.ErrReadOnly):
		return fmt.Errorf("%w: %w", handlers.ErrLinkStoreReadOnly, err)
	}
	return err
}

// reconnectingLinks is the link store as serve runs it: the playground does not need it, so a
// database that cannot be opened at start (an unwritable directory, PostgreSQL down) or that
// stops answering later does not stop the server. It is first opened when Begin is called (serve
// calls it once the engine is ready, so that opening SQLite does not share the cores with the
// engine's start); a call before that attempt has ended waits for it. Until it is open every
// call is handlers.ErrLinkStoreUnavailable (sharing answers 503) while a goroutine opens it again
// every retry; once open, it is pinged as often, and Health says what the last call or ping found.
type reconnectingLinks struct {
	open  func(context.Context) (*store.SQL, error)
	log   *slog.Logger
	retry time.Duration

	mu     sync.Mutex
	db     *store.SQL
	health error
	cause  error // the database's own error behind health, for the log

	begin sync.Once
	first chan struct{} // closed when the first attempt to open the store has ended
	stop  chan struct{}
	done  chan struct{}
}

// errNotOpenedYet is the store's health before the first attempt to open it has ended.
var errNotOpenedYet = fmt.Errorf("%w: not opened yet", handlers.ErrLinkStoreUnavailable)

// openTimeout bounds one attempt to open or ping the database.
const openTimeout = 5 * time.Second

// newReconnectingLinks is the store, not opened yet: see Begin.
func newReconnectingLinks(open func(context.Context) (*store.SQL, error), logger *slog.Logger, retry time.Duration) *reconnectingLinks {
	// Until the first attempt ends the store is not open: /readyz?verbose and /metrics say
	// unavailable, never ok (on a busy machine the server is ready before the attempt ends).
	return &reconnectingLinks{open: open, log: logger, retry: retry, health: errNotOpenedYet,
		first: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
}

// Begin opens the store in the background (bounded by openTimeout), logs why if it could not,
// and keeps trying until Close. Calls after the first do nothing.
func (l *reconnectingLinks) Begin() {
	l.begin.Do(func() {
		go func() {
			if !l.connect() {
				l.log.Error("link store: sharing is unavailable until it can be opened; retrying", "err", l.lastErr(), "every", l.retry)
			}
			close(l.first)
			l.keep()
		}()
	})
}

// lastErr is the database's error behind health, for the log.
func (l *reconnectingLinks) lastErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cause
}

// connect tries to open the store once and reports whether it is open.
func (l *reconnectingLinks) connect() bool {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	db, err := l.open(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.health, l.cause = fmt.Errorf("%w: %w", handlers.ErrLinkStoreUnavailable, err), err
		return false
	}
	l.db, l.health, l.cause = db, nil, nil
	return true
}

// keep reopens a store that is not open, and pings one that is, every retry.
func (l *reconnectingLinks) keep() {
	defer close(l.done)
	t := time.NewTicker(l.retry)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		db := l.db
		l.mu.Unlock()
		if db == nil {
			if l.connect() {
				l.log.Info("link store: open again; sharing is available")
			}
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		err := db.Ping(ctx)
		if err == nil && db.Quota > 0 {
			// A full store reads fine: only its size says it is full.
			var size int64
			if size, err = db.Size(ctx); err == nil && size >= db.Quota {
				err = fmt.Errorf("%w: %d of %d bytes used", handlers.ErrLinkStoreFull, size, db.Quota)
			}
		}
		cancel()
		l.record(err)
	}
}

// recordCall records what a Put or Get with the context ctx found (record), unless it failed
// after ctx ended by its caller's doing: the client went away or the request's deadline passed
// (the handlers' ctx then ends with another cause than handlers.ErrLinkStoreTimeout). That
// failure says nothing about the store; the store's own timeout and its errors do.
func (l *reconnectingLinks) recordCall(ctx context.Context, err error) {
	if err != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), handlers.ErrLinkStoreTimeout) {
		return
	}
	l.record(err)
}

// record keeps what a call or a ping found as the store's health, logging each change. A link
// not found says nothing about the store and is not recorded.
func (l *reconnectingLinks) record(err error) {
	switch {
	case errors.Is(err, handlers.ErrLinkNotFound):
		return
	case err == nil:
	case errors.Is(err, handlers.ErrLinkStoreFull), errors.Is(err, handlers.ErrLinkStoreReadOnly):
	default:
		err = fmt.Errorf("%w: %w", handlers.ErrLinkStoreUnavailable, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cause = err
	if (l.health == nil) != (err == nil) {
		if err == nil {
			l.log.Info("link store: answering again; sharing is available")
		} else {
			l.log.Error("link store: sharing is unavailable", "err", err)
		}
	}
	l.health = err
}

func (l *reconnectingLinks) current() *store.SQL {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.db
}

// opened is the store once the first attempt to open it has ended: nil if it is not open, and
// ctx's error if ctx ends first. Once the attempt has ended it answers the store whatever ctx
// (the call then fails on ctx, as any call to the database would).
func (l *reconnectingLinks) opened(ctx context.Context) (*store.SQL, error) {
	select {
	case <-l.first:
		return l.current(), nil
	default:
	}
	select {
	case <-l.first:
		return l.current(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *reconnectingLinks) Put(ctx context.Context, link handlers.Link) (string, error) {
	db, err := l.opened(ctx)
	if err != nil {
		return "", err
	}
	if db == nil {
		return "", handlers.ErrLinkStoreUnavailable
	}
	id, err := sqlLinks{db}.Put(ctx, link)
	l.recordCall(ctx, err)
	return id, err
}

func (l *reconnectingLinks) Get(ctx context.Context, id string) (handlers.Link, error) {
	db, err := l.opened(ctx)
	if err != nil {
		return handlers.Link{}, err
	}
	if db == nil {
		return handlers.Link{}, handlers.ErrLinkStoreUnavailable
	}
	link, err := sqlLinks{db}.Get(ctx, id)
	if err != nil {
		// A read that works says nothing about room for writes; one that fails does.
		l.recordCall(ctx, err)
	}
	return link, err
}

// Health is the last state a call, an attempt to open or a ping found (handlers.LinkStoreHealth);
// nil before the first attempt has ended, since calls wait for it.
func (l *reconnectingLinks) Health() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.health
}

// Close stops reconnecting and closes the store.
func (l *reconnectingLinks) Close() error {
	l.begin.Do(func() { close(l.done) }) // never begun: nothing runs
	close(l.stop)
	<-l.done
	if db := l.current(); db != nil {
		return db.Close()
	}
	return nil
}
