package room

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// waitTold waits for a notice on s (the database's news arrives when it arrives) and returns
// the stream's snapshot once ok holds of it.
func waitTold(t *testing.T, s *Stream, what string, ok func(Snapshot) bool) Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
	defer cancel()
	for {
		if snap := s.Snapshot(); ok(snap) {
			return snap
		}
		select {
		case <-s.C:
		case <-ctx.Done():
			t.Fatalf("%s: never; the stream reads %+v", what, s.Snapshot())
		}
	}
}

// waitShared waits for the listener to connect.
func waitShared(t *testing.T, p *Postgres) {
	t.Helper()
	testkit.WaitFor(t, "the listener connects", p.Shared)
}

// TestPostgresSharesRooms: two servers on one PostgreSQL: a learner of one follows the trainer of
// the other, and the trainer's counts are the room's; a server whose PostgreSQL does not answer
// keeps its rooms alone and says so.
func TestPostgresSharesRooms(t *testing.T) {
	dsn := testkit.PostgresDSN(t)
	a, b := New(Limits{}, time.Now), New(Limits{}, time.Now)
	pa, err := SharePostgres(dsn, a, 5*time.Second, logTo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pa.Close()
	pb, err := SharePostgres(dsn, b, 5*time.Second, logTo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	waitShared(t, pa)
	waitShared(t, pb)

	code, token, err := a.Create("s=0")
	fatal(t, err)
	trainerA := join(t, a, code, Trainer)
	learnerB := join(t, b, code, Following) // b loads the room from the database
	if snap := learnerB.Snapshot(); snap.View != "s=0" || snap.Alone {
		t.Fatalf("b's copy: %+v", snap)
	}
	waitTold(t, trainerA, "a's trainer counts b's learner", func(s Snapshot) bool { return s.Following == 1 })
	move(t, a, code, token, "s=1")
	waitTold(t, learnerB, "b's learner follows a's move", func(s Snapshot) bool { return s.View == "s=1" })
	// The trainer moves through b now (the token is the database's too).
	move(t, b, code, token, "s=2")
	waitTold(t, trainerA, "a follows b's move", func(s Snapshot) bool { return s.View == "s=2" })
	learnerB.Leave()
	waitTold(t, trainerA, "a's trainer sees b's learner leave", func(s Snapshot) bool { return s.Following == 0 })
	if _, err := b.Move(code, "not-the-token", "s=3"); err == nil {
		t.Fatal("b took another token for the trainer's")
	}

	// A server whose database does not answer: its rooms are its own, and say so.
	alone := New(Limits{}, time.Now)
	pd, err := SharePostgres("postgres://nobody@"+closedAddr(t)+"/x?sslmode=disable&connect_timeout=1", alone, time.Second, logTo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pd.Close()
	c2, tok2, err := alone.Create("s=alone")
	fatal(t, err)
	if snap := get(t, alone, c2); !snap.Alone {
		t.Fatalf("with PostgreSQL down: %+v", snap)
	}
	if snap := move(t, alone, c2, tok2, "s=alone2"); snap.View != "s=alone2" || snap.Seq != 2 {
		t.Fatalf("a move with PostgreSQL down: %+v", snap)
	}
	if _, err := a.Get(c2); err == nil {
		t.Fatal("a found a room its database never had")
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// logTo is a Postgres logger that writes to the test's log.
func logTo(t *testing.T) func(msg string, args ...any) {
	return func(msg string, args ...any) { t.Log(append([]any{msg}, args...)...) }
}
