package room

import (
	"errors"
	"testing"
	"time"
)

// clock is a test's clock: it moves only when the test says.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newHub(lim Limits) (*Hub, *clock) {
	c := &clock{t: time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)}
	return New(lim, c.now), c
}
func told(s *Stream) bool {
	select {
	case <-s.C:
		return true
	default:
		return false
	}
}
func fatal(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func join(t *testing.T, h *Hub, code string, m Mode) *Stream {
	t.Helper()
	s, err := h.Join(code, m)
	fatal(t, err)
	return s
}

func move(t *testing.T, h *Hub, code, token, view string) Snapshot {
	t.Helper()
	snap, err := h.Move(code, token, view)
	fatal(t, err)
	return snap
}

func get(t *testing.T, h *Hub, code string) Snapshot {
	t.Helper()
	snap, err := h.Get(code)
	fatal(t, err)
	return snap
}

func trainer(t *testing.T, h *Hub, code, token string) bool {
	t.Helper()
	ok, err := h.Trainer(code, token)
	fatal(t, err)
	return ok
}

func TestMoveTellsEveryStream(t *testing.T) {
	h, _ := newHub(Limits{})
	code, token, err := h.Create("s=a&step=1")
	if err != nil {
		t.Fatal(err)
	}
	if NormalizeCode(code) != code || len(code) != codeLen {
		t.Fatalf("code %q is not one NormalizeCode keeps", code)
	}
	trainer := join(t, h, code, Trainer)
	follow := join(t, h, code, Following)
	own := join(t, h, code, Own)
	// The learners' joins told the trainer (the counts), not each other.
	if told(follow) || told(own) {
		t.Error("a learner's join told the learners")
	}
	if !told(trainer) {
		t.Error("a learner's join did not tell the trainer")
	}
	snap := move(t, h, code, token, "s=a&step=2")
	if snap.Seq != 2 || snap.View != "s=a&step=2" || snap.Following != 1 || snap.Own != 1 {
		t.Errorf("after a move: %+v", snap)
	}
	for name, s := range map[string]*Stream{"following": follow, "own": own, "trainer": trainer} {
		if !told(s) {
			t.Errorf("the move did not tell the %s stream", name)
		}
		if got := s.Snapshot(); got.Seq != 2 || got.View != "s=a&step=2" {
			t.Errorf("the %s stream reads %+v", name, got)
		}
	}
	// The same view again is no move: nobody is told, the sequence stays.
	if snap := move(t, h, code, token, "s=a&step=2"); snap.Seq != 2 || told(follow) {
		t.Errorf("moving to the view shown: seq %d, told %v", snap.Seq, told(follow))
	}
	// Moves coalesce: a stream that has not read is told once and reads the last.
	move(t, h, code, token, "s=a&step=3")
	move(t, h, code, token, "s=a&step=4")
	if !told(follow) || told(follow) || follow.Snapshot().View != "s=a&step=4" {
		t.Error("two moves were not one notice of the last")
	}
	follow.Leave()
	follow.Leave() // twice is once
	if snap := get(t, h, code); snap.Following != 0 || snap.Own != 1 {
		t.Errorf("after leaving: %+v", snap)
	}
}

func TestOnlyTheTrainerMoves(t *testing.T) {
	h, _ := newHub(Limits{})
	code, token := must2(t, h.Create)
	other, otherToken := must2(t, h.Create)
	for _, tok := range []string{"", "x", otherToken, token[:len(token)-1]} {
		if _, err := h.Move(code, tok, "s=b"); !errors.Is(err, ErrNotTrainer) {
			t.Errorf("token %q: %v, want ErrNotTrainer", tok, err)
		}
		if ok, _ := h.Trainer(code, tok); ok {
			t.Errorf("token %q is taken as the trainer's", tok)
		}
	}
	if ok := trainer(t, h, code, token); !ok {
		t.Error("the trainer's own token is refused")
	}
	if err := h.Allow(code, otherToken, "k"); !errors.Is(err, ErrNotTrainer) || h.Allowed(code, "k") {
		t.Errorf("another room's trainer chose for this one: %v", err)
	}
	fatal(t, h.Allow(code, token, "k"))
	if !h.Allowed(code, "k") || h.Allowed(code, "other") || h.Allowed(other, "k") || h.Allowed(code, "") {
		t.Error("Allowed does not answer what Allow chose, for that room alone")
	}
	if _, err := h.Move(other, token, "s=b"); !errors.Is(err, ErrNotTrainer) {
		t.Errorf("a room's token moved another room: %v", err)
	}
	if _, err := h.Move("zzzzzzzz", token, "s=b"); !errors.Is(err, ErrNoRoom) {
		t.Errorf("a code no room has: %v", err)
	}
	if snap := get(t, h, code); snap.Seq != 1 || snap.View != "s=0" {
		t.Errorf("refused moves moved the room: %+v", snap)
	}
}

// must2 creates a room with a view of its own.
func must2(t *testing.T, create func(string) (string, string, error)) (string, string) {
	t.Helper()
	code, token, err := create("s=0")
	if err != nil {
		t.Fatal(err)
	}
	return code, token
}

func TestLimits(t *testing.T) {
	h, _ := newHub(Limits{Rooms: 2, Learners: 2})
	code, _ := must2(t, h.Create)
	must2(t, h.Create)
	if _, _, err := h.Create("s=0"); !errors.Is(err, ErrTooManyRooms) {
		t.Errorf("a third room: %v, want ErrTooManyRooms", err)
	}
	a := join(t, h, code, Following)
	join(t, h, code, Own)
	if _, err := h.Join(code, Following); !errors.Is(err, ErrRoomFull) {
		t.Errorf("a third learner: %v, want ErrRoomFull", err)
	}
	// The trainer's streams are bounded apart: a full room still takes its trainer.
	for i := range trainerStreams {
		if _, err := h.Join(code, Trainer); err != nil {
			t.Fatalf("trainer stream %d: %v", i+1, err)
		}
	}
	if _, err := h.Join(code, Trainer); !errors.Is(err, ErrRoomFull) {
		t.Errorf("trainer stream %d: %v, want ErrRoomFull", trainerStreams+1, err)
	}
	// A learner who leaves makes room for another.
	a.Leave()
	if _, err := h.Join(code, Following); err != nil {
		t.Errorf("after one left: %v", err)
	}
	if _, err := h.Join("zzzzzzzz", Following); !errors.Is(err, ErrNoRoom) {
		t.Errorf("joining no room: %v", err)
	}
}

func TestIdleRoomsEnd(t *testing.T) {
	h, clk := newHub(Limits{Rooms: 1, Idle: time.Hour})
	code, token := must2(t, h.Create)
	s := join(t, h, code, Following)
	clk.add(59 * time.Minute)
	move(t, h, code, token, "s=1") // a move keeps it
	told(s)
	clk.add(59 * time.Minute)
	if _, err := h.Get(code); err != nil {
		t.Fatalf("59 minutes after a move: %v", err)
	}
	clk.add(time.Minute)
	// Its stream learns it is gone as soon as it looks; the room no longer counts.
	if snap := s.Snapshot(); !snap.Ended {
		t.Errorf("an hour idle, the stream reads %+v", snap)
	}
	if !told(s) {
		t.Error("the stream was not told its room ended")
	}
	if _, err := h.Get(code); !errors.Is(err, ErrNoRoom) {
		t.Errorf("an hour idle: %v, want ErrNoRoom", err)
	}
	if _, _, err := h.Create("s=0"); err != nil {
		t.Errorf("the idle room still counts against the limit: %v", err)
	}
	s.Leave() // leaving a gone room is harmless
}

func TestReloadsCountAsFollowing(t *testing.T) {
	h, clk := newHub(Limits{Poll: 10 * time.Second, Learners: 3})
	code, _ := must2(t, h.Create)
	trainer := join(t, h, code, Trainer)
	h.Polled(code)
	clk.add(5 * time.Second)
	h.Polled(code)
	if !told(trainer) {
		t.Error("a reload did not tell the trainer")
	}
	if snap := get(t, h, code); snap.Following != 2 {
		t.Errorf("two reloads within %v: following %d", h.Limits().Poll, snap.Following)
	}
	clk.add(5 * time.Second)
	if snap := get(t, h, code); snap.Following != 1 {
		t.Errorf("a reload %v ago still counts: following %d", h.Limits().Poll, snap.Following)
	}
	for range 10 {
		h.Polled(code)
	}
	if snap := get(t, h, code); snap.Following != 3 {
		t.Errorf("reloads are bounded by the room's learners: following %d", snap.Following)
	}
	h.Polled("zzzzzzzz") // no room: nothing
}

func TestCloseEndsStreams(t *testing.T) {
	h, _ := newHub(Limits{})
	code, _ := must2(t, h.Create)
	s := join(t, h, code, Following)
	h.Close()
	if !told(s) || !s.Snapshot().Ended {
		t.Error("a closed hub's stream was not ended")
	}
	if _, _, err := h.Create("s=0"); !errors.Is(err, ErrNoRoom) {
		t.Errorf("a closed hub made a room: %v", err)
	}
}

func TestNormalizeCode(t *testing.T) {
	for in, want := range map[string]string{
		"k7qm2xd9": "k7qm2xd9", "K7QM-2XD9": "k7qm2xd9", "k7qm 2xd9": "k7qm2xd9",
		"k7qm2xd": "", "k7qm2xd9a": "", "k7qm2xdu": "", "": "", "../../x": "", "ｋ7qm2xd9": "",
	} {
		if got := NormalizeCode(in); got != want {
			t.Errorf("NormalizeCode(%q) = %q, want %q", in, got, want)
		}
	}
}
