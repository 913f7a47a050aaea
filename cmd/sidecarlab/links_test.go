package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/handlers"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/store"
)

// TestSQLLinks: the adapter keeps handlers.LinkStore's contract on SQLite, and on PostgreSQL when
// SIDECARLAB_TEST_POSTGRES names one (`make test` starts one; under it or CI a missing DSN fails):
// ids from the state, never overwritten, visible from a second connection (a restart, another
// replica), and ErrLinkNotFound for an unknown or impossible id.
func TestSQLLinks(t *testing.T) {
	// Each backend gives a function that opens a new connection to the same database.
	backends := map[string]func(t *testing.T) func() (*store.SQL, error){
		"sqlite": func(t *testing.T) func() (*store.SQL, error) {
			path := filepath.Join(t.TempDir(), "links.db")
			return func() (*store.SQL, error) { return store.OpenSQLite(context.Background(), path) }
		},
		"postgres": func(t *testing.T) func() (*store.SQL, error) {
			dsn := testkit.PostgresDSN(t)
			return func() (*store.SQL, error) { return store.OpenPostgres(context.Background(), dsn) }
		},
	}
	for name, backend := range backends {
		t.Run(name, func(t *testing.T) {
			connect := backend(t)
			open := func() *store.SQL {
				s, err := connect()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			ctx := context.Background()
			one := sqlLinks{open()}
			// A state of its own per run, so a shared PostgreSQL holds no earlier run's link.
			state := []byte(`{"v":1,"manifest":"` + t.Name() + ` ` + filepath.Base(t.TempDir()) + `"}`)
			want := handlers.Link{State: state, Istio: "1.31", OutputHash: "abc"}
			id, err := one.Put(ctx, want)
			if err != nil {
				t.Fatal(err)
			}
			if id != one.db.ID(state) || !store.ValidID(id) {
				t.Fatalf("id %q, want the store's ID of the state, %q", id, one.db.ID(state))
			}
			again, err := one.Put(ctx, handlers.Link{State: state, Istio: "9.9", OutputHash: "zzz"})
			if err != nil || again != id {
				t.Fatalf("the same state again: id %q, %v", again, err)
			}
			other, err := one.Put(ctx, handlers.Link{State: append(state[:len(state):len(state)], ' ')})
			if err != nil || other == id {
				t.Fatalf("another state: id %q, %v", other, err)
			}
			two := sqlLinks{open()}
			if two.db.ID(state) != id {
				t.Fatalf("a second connection (another replica) gives the state id %q, not %q", two.db.ID(state), id)
			}
			got, err := two.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("from a second connection (-want +got):\n%s", diff)
			}
			for _, bad := range []string{two.db.ID([]byte("nobody stored this")), "", "../../etc/passwd", "1' OR '1'='1", strings.Repeat("a", 10240)} {
				if _, err := two.Get(ctx, bad); !errors.Is(err, handlers.ErrLinkNotFound) {
					t.Errorf("Get(%.20q): %v, want ErrLinkNotFound", bad, err)
				}
			}
			closed := open()
			closed.Close()
			if _, err := (sqlLinks{closed}).Get(ctx, id); err == nil || errors.Is(err, handlers.ErrLinkNotFound) {
				t.Errorf("a closed database: %v, want an error other than ErrLinkNotFound", err)
			}
		})
	}
}
