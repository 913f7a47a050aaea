package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// postgresDSN is the test database, SIDECARLAB_TEST_POSTGRES: `make test` (scripts/testenv.sh) starts
// a throwaway PostgreSQL and sets it, and sets SIDECARLAB_REQUIRE_POSTGRES so that a missing DSN
// fails the test there; a plain `go test ./store` without it skips.
func postgresDSN(t *testing.T) string {
	dsn := os.Getenv("SIDECARLAB_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("SIDECARLAB_REQUIRE_POSTGRES") != "" || os.Getenv("CI") != "" {
			t.Fatal("SIDECARLAB_TEST_POSTGRES is not set; scripts/testenv.sh (make test) must start PostgreSQL")
		}
		t.Skip("SIDECARLAB_TEST_POSTGRES not set; `make test` starts a throwaway PostgreSQL and sets it")
	}
	return dsn
}

func TestID(t *testing.T) {
	a, b := ID([]byte(`{"v":1,"manifest":"a"}`)), ID([]byte(`{"v":1,"manifest":"b"}`))
	if a != ID([]byte(`{"v":1,"manifest":"a"}`)) {
		t.Fatal("same state, different ids")
	}
	if a == b {
		t.Fatal("different states, same id")
	}
	if len(a) != IDLength || !ValidID(a) || strings.ContainsAny(a, "ilou") {
		t.Fatalf("id %q", a)
	}
	for _, bad := range []string{"", "../../etc/passwd", "1' OR '1'='1", strings.Repeat("a", 10240), "ABCDEFGHJKMNPQRS", "iiiiiiiiiiiiiiii"} {
		if ValidID(bad) {
			t.Errorf("%q passes as an id", bad[:min(20, len(bad))])
		}
	}
}

// testStore runs the same checks on any store; reopen returns a second connection to the same data.
func testStore(t *testing.T, s *SQL, reopen func() *SQL) {
	ctx := context.Background()
	l := Link{ID: ID([]byte("state-1")), State: []byte(`{"v":1}`), Istio: "1.31", OutputHash: "abc"}
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
	if _, err := s.Get(ctx, ID([]byte("never stored"))); err != ErrNotFound {
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
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	testStore(t, s, func() *SQL {
		s.Close() // a restart: the first process is gone
		r, err := OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
	var mode string
	r, _ := OpenSQLite(path)
	defer r.Close()
	if err := r.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q (%v), want wal", mode, err)
	}
}

func TestPostgres(t *testing.T) {
	dsn := postgresDSN(t)
	s, err := OpenPostgres(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.db.Exec("DELETE FROM links"); err != nil {
		t.Fatal(err)
	}
	testStore(t, s, func() *SQL {
		r, err := OpenPostgres(dsn)
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}
