package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// postgresDSN is the test database (testkit.PostgresDSN).
func postgresDSN(t *testing.T) string { return testkit.PostgresDSN(t) }

// TestID: a store's ids are its state's HMAC under the database's key: the same state the same
// id from every connection to one database (a restart, another replica, replicas opening a new
// database at once), another database another id, and never the state's plain SHA-256, which
// anyone could compute.
func TestID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	openAt := func(name string) *SQL {
		s, err := OpenSQLite(ctx, filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	state := []byte(`{"v":1,"manifest":"a"}`)
	s := openAt("one.db")
	a, b := s.ID(state), s.ID([]byte(`{"v":1,"manifest":"b"}`))
	if a != s.ID(state) {
		t.Fatal("same state, different ids")
	}
	if a == b {
		t.Fatal("different states, same id")
	}
	if len(a) != IDLength || !ValidID(a) || strings.ContainsAny(a, "ilou") {
		t.Fatalf("id %q", a)
	}
	sum := sha256.Sum256(state)
	if a == idEncoding.EncodeToString(sum[:])[:IDLength] {
		t.Fatal("the id is the state's plain SHA-256: not keyed")
	}
	if openAt("one.db").ID(state) != a {
		t.Fatal("another connection to the same database gives another id")
	}
	if openAt("two.db").ID(state) == a {
		t.Fatal("another database gives the same id: the key is not the database's own")
	}
	// Processes that open a new database at once agree on its key. (The file is made first, in
	// WAL mode, as the first open makes it: SQLite does not wait for a lock to change the journal
	// mode, and that race is not the key's.)
	path := filepath.Join(dir, "race.db")
	if db, err := sql.Open("sqlite", "file:"+path); err != nil {
		t.Fatal(err)
	} else if _, err := db.Exec("PRAGMA journal_mode=WAL"); err != nil {
		t.Fatal(err)
	} else {
		db.Close()
	}
	ids := make(chan string, 4)
	for range 4 {
		go func() {
			r, err := OpenSQLite(ctx, path)
			if err != nil {
				ids <- err.Error()
				return
			}
			defer r.Close()
			ids <- r.ID(state)
		}()
	}
	first := <-ids
	for range 3 {
		if id := <-ids; id != first {
			t.Fatalf("replicas opening one new database at once: ids %q and %q", first, id)
		}
	}
	for _, bad := range []string{"", "../../etc/passwd", "1' OR '1'='1", strings.Repeat("a", 10240), "ABCDEFGHJKMNPQRS", "iiiiiiiiiiiiiiii"} {
		if ValidID(bad) {
			t.Errorf("%q passes as an id", bad[:min(20, len(bad))])
		}
	}
}

// TestPostgresReplicasAgree: two connections to one PostgreSQL (two replicas) give one id for
// one state.
func TestPostgresReplicasAgree(t *testing.T) {
	dsn := postgresDSN(t)
	var ids []string
	for range 2 {
		s, err := OpenPostgres(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ids = append(ids, s.ID([]byte(`{"v":1}`)))
	}
	if ids[0] != ids[1] {
		t.Fatalf("two replicas on one PostgreSQL: ids %q and %q", ids[0], ids[1])
	}
}

// testStore runs the same checks on any store; reopen returns a second connection to the same data.
func testStore(t *testing.T, s *SQL, reopen func() *SQL) {
	ctx := context.Background()
	l := Link{ID: s.ID([]byte("state-1")), State: []byte(`{"v":1}`), Istio: "1.31", OutputHash: "abc"}
	if err := s.Put(ctx, l); err != nil {
		t.Fatal(err)
	}
	// Never overwritten: a second Put with the same id keeps the first.
	if err := s.Put(ctx, Link{ID: l.ID, State: []byte(`{"v":2}`), Istio: "9.9", OutputHash: "zzz"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.State) != `{"v":1}` || got.Istio != "1.31" || got.OutputHash != "abc" || got.Created.IsZero() {
		t.Fatalf("got %+v", got)
	}
	if _, err := s.Get(ctx, s.ID([]byte("never stored"))); err != ErrNotFound {
		t.Fatalf("missing id: %v", err)
	}
	for _, hostile := range []string{"1' OR '1'='1", "../../etc/passwd", strings.Repeat("x", 10240)} {
		if _, err := s.Get(ctx, hostile); err != ErrNotFound {
			t.Fatalf("hostile id %q: %v", hostile[:min(20, len(hostile))], err)
		}
	}
	if err := s.Put(ctx, Link{ID: "'; DROP TABLE links; --", State: []byte("x")}); err == nil {
		t.Fatal("an invalid id was stored")
	}
	// Another connection (a restart, or a second replica) sees it.
	other := reopen()
	defer other.Close()
	got, err = other.Get(ctx, l.ID)
	if err != nil || string(got.State) != `{"v":1}` {
		t.Fatalf("from a second connection: %+v %v", got, err)
	}
}

func TestSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "links.db")
	s, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	testStore(t, s, func() *SQL {
		s.Close() // a restart: the first process is gone
		r, err := OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
	var mode string
	r, _ := OpenSQLite(context.Background(), path)
	defer r.Close()
	if err := r.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q (%v), want wal", mode, err)
	}
}

func TestPostgres(t *testing.T) {
	dsn := postgresDSN(t)
	s, err := OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.db.Exec("DELETE FROM links"); err != nil {
		t.Fatal(err)
	}
	testStore(t, s, func() *SQL {
		r, err := OpenPostgres(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}

// backends opens each store the tests run on: SQLite always, PostgreSQL when there is one.
func backends(t *testing.T) map[string]func(t *testing.T) *SQL {
	return map[string]func(t *testing.T) *SQL{
		"sqlite": func(t *testing.T) *SQL {
			s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "links.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(t *testing.T) *SQL {
			s, err := OpenPostgres(context.Background(), postgresDSN(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

// TestQuota: past the quota a new link is ErrFull, and nothing is written; a link already stored
// is still answered with its id (Put succeeds), and every link still reads. Under it, Put stores.
func TestQuota(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			ctx := context.Background()
			size, err := s.Size(ctx)
			if err != nil || size <= 0 {
				t.Fatalf("size %d, %v", size, err)
			}
			// Room for a few 20 KB states (PostgreSQL compresses; random-ish text does not).
			s.Quota = size + 100<<10
			state := func(i int) []byte {
				var b strings.Builder
				for j := 0; b.Len() < 20<<10; j++ {
					fmt.Fprintf(&b, "%s-%d-%d-%x ", t.Name(), i, j, (i+1)*(j+7)*2654435761)
				}
				return []byte(b.String())
			}
			var stored []string
			var full error
			for i := range 200 {
				st := state(i)
				if err := s.Put(ctx, Link{ID: s.ID(st), State: st}); err != nil {
					full = err
					break
				}
				stored = append(stored, s.ID(st))
			}
			if !errors.Is(full, ErrFull) {
				t.Fatalf("after %d links: %v, want ErrFull", len(stored), full)
			}
			if len(stored) == 0 {
				t.Fatal("the quota refused the first link")
			}
			after, _ := s.Size(ctx)
			if after > s.Quota+40<<10 {
				t.Fatalf("size %d, quota %d", after, s.Quota)
			}
			if err := s.Put(ctx, Link{ID: stored[0], State: state(0)}); err != nil {
				t.Fatalf("a link already stored, past the quota: %v", err)
			}
			if _, err := s.Get(ctx, stored[len(stored)-1]); err != nil {
				t.Fatalf("reading past the quota: %v", err)
			}
			// Without a quota the same store takes it.
			s.Quota = 0
			if st := state(999); s.Put(ctx, Link{ID: s.ID(st), State: st}) != nil {
				t.Fatal("no quota, still refused")
			}
		})
	}
}

// TestWriteFailures: the database's own "disk full" and "read-only" come back as ErrFull and
// ErrReadOnly (they answer 507 and 503 at the edge); other failures are neither.
func TestWriteFailures(t *testing.T) {
	ctx := context.Background()
	st := []byte(strings.Repeat("x", 64<<10))
	t.Run("sqlite disk full", func(t *testing.T) {
		s := backends(t)["sqlite"](t)
		s.db.SetMaxOpenConns(1) // the pragma below is the connection's
		if _, err := s.db.Exec("PRAGMA max_page_count = 4"); err != nil {
			t.Fatal(err)
		}
		err := s.Put(ctx, Link{ID: s.ID(st), State: st})
		if !errors.Is(err, ErrFull) || errors.Is(err, ErrReadOnly) {
			t.Fatalf("%v, want ErrFull", err)
		}
	})
	t.Run("sqlite read-only", func(t *testing.T) {
		s := backends(t)["sqlite"](t)
		s.db.SetMaxOpenConns(1)
		if _, err := s.db.Exec("PRAGMA query_only = 1"); err != nil {
			t.Fatal(err)
		}
		err := s.Put(ctx, Link{ID: s.ID(st), State: st})
		if !errors.Is(err, ErrReadOnly) || errors.Is(err, ErrFull) {
			t.Fatalf("%v, want ErrReadOnly", err)
		}
	})
	t.Run("postgres read-only", func(t *testing.T) {
		s := backends(t)["postgres"](t)
		s.db.SetMaxOpenConns(1)
		if _, err := s.db.Exec("SET default_transaction_read_only = on"); err != nil {
			t.Fatal(err)
		}
		err := s.Put(ctx, Link{ID: s.ID(st), State: st})
		if !errors.Is(err, ErrReadOnly) || errors.Is(err, ErrFull) {
			t.Fatalf("%v, want ErrReadOnly", err)
		}
	})
	t.Run("a closed database", func(t *testing.T) {
		s := backends(t)["sqlite"](t)
		s.Close()
		if err := s.Put(ctx, Link{ID: s.ID(st), State: st}); err == nil || errors.Is(err, ErrFull) || errors.Is(err, ErrReadOnly) {
			t.Fatalf("%v, want another error", err)
		}
	})
}

// TestOpenHungPostgres: a server that accepts and never answers does not hold the opening past
// its context.
func TestOpenHungPostgres(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepted, never answered
		}
	}()
	// The server never answers, so only the context ends the opening; a generous cap (far above
	// any machine's time) turns a hang into a failure instead of go test's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	opened := make(chan error, 1)
	go func() {
		db, err := OpenPostgres(ctx, "postgres://u:p@"+ln.Addr().String()+"/links?sslmode=disable")
		if err == nil {
			db.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if err == nil {
			t.Fatal("opened a server that never answered")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the opening outlived its context by minutes")
	}
}

// freshPostgres makes a new, empty database on the test server, named at random (dropped when
// the test ends), and returns its DSN: a fresh PostgreSQL as replicas meet it on their first start.
func freshPostgres(t *testing.T) string {
	dsn := postgresDSN(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("sidecarlab_test_%x", rand.Uint64())
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// TestPostgresReplicasStartTogether: replicas that start at once on a fresh PostgreSQL all open
// it and store their first link. (Without the schema lock their CREATE TABLE IF NOT EXISTS race:
// PostgreSQL answers all but one with a unique violation on pg_type, SQLSTATE 23505.)
func TestPostgresReplicasStartTogether(t *testing.T) {
	dsn := freshPostgres(t)
	const replicas = 3
	start := make(chan struct{})
	errs := make(chan error, replicas)
	for i := range replicas {
		go func() {
			<-start
			s, err := OpenPostgres(context.Background(), dsn)
			if err != nil {
				errs <- fmt.Errorf("replica %d: open: %w", i, err)
				return
			}
			defer s.Close()
			st := fmt.Appendf(nil, `{"replica":%d}`, i)
			if err := s.Put(context.Background(), Link{ID: s.ID(st), State: st}); err != nil {
				errs <- fmt.Errorf("replica %d: first Put: %w", i, err)
				return
			}
			errs <- nil
		}()
	}
	close(start)
	for range replicas {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
