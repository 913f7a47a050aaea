package room

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// memStore is a store that servers' fake replicas share, with the news each is yet to hear.
type memStore struct {
	mu      sync.Mutex
	rooms   map[string]Record
	version int64
	fail    bool
	hubs    map[string]*Hub
	news    []func()
}

func newMemStore() *memStore { return &memStore{rooms: map[string]Record{}, hubs: map[string]*Hub{}} }

// deliver hands out the news so far, as a listener would.
func (m *memStore) deliver() {
	m.mu.Lock()
	news := m.news
	m.news = nil
	m.mu.Unlock()
	for _, f := range news {
		f()
	}
}

// memReplica is one server's replica over a memStore.
type memReplica struct {
	id string
	m  *memStore
}

func (m *memStore) replica(id string, h *Hub) *memReplica {
	m.hubs[id] = h
	r := &memReplica{id: id, m: m}
	h.Share(r)
	return r
}

var errDown = errors.New("the store does not answer")

// tell queues news for every other server; m.mu is held.
func (r *memReplica) tell(f func(*Hub)) {
	for id, h := range r.m.hubs {
		if id != r.id {
			r.m.news = append(r.m.news, func() { f(h) })
		}
	}
}

func (r *memReplica) Create(rec Record) error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if r.m.fail {
		return errDown
	}
	r.m.version++
	rec.Version = r.m.version
	r.m.rooms[rec.Code] = rec
	return nil
}

func (r *memReplica) Move(code, view string, moved time.Time) (int64, error) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	rec, ok := r.m.rooms[code]
	if r.m.fail || !ok {
		return 0, errDown
	}
	r.m.version++
	rec.View, rec.Moved, rec.Version = view, moved, r.m.version
	r.m.rooms[code] = rec
	r.tell(func(h *Hub) { h.Apply(rec) })
	return rec.Version, nil
}

func (r *memReplica) Allow(code, key string) error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	rec := r.m.rooms[code]
	rec.Allowed = key
	r.m.rooms[code] = rec
	return nil
}

func (r *memReplica) Load(code string) (Record, bool, error) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if r.m.fail {
		return Record{}, false, errDown
	}
	rec, ok := r.m.rooms[code]
	return rec, ok, nil
}

func (r *memReplica) Counts(code string, following, own int) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.tell(func(h *Hub) { h.RemoteCounts(code, r.id, following, own) })
}

func (r *memReplica) Shared() bool {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return !r.m.fail
}

// TestSharedRooms: two servers share their rooms: a learner served by one follows the trainer
// served by the other, whichever the trainer moves through, and each trainer's counts are the
// room's; with the store down, each server's rooms work alone and say so.
func TestSharedRooms(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)}
	a, b := New(Limits{}, clk.now), New(Limits{}, clk.now)
	store := newMemStore()
	store.replica("a", a)
	store.replica("b", b)

	code, token, err := a.Create("s=0")
	fatal(t, err)
	// b has never seen the room: it loads it from the store, the trainer's token with it.
	if snap := get(t, b, code); snap.View != "s=0" || snap.Alone {
		t.Fatalf("b's copy: %+v", snap)
	}
	if !trainer(t, b, code, token) {
		t.Fatal("b does not know the trainer")
	}
	learner := join(t, b, code, Following)
	store.deliver()
	if snap := get(t, a, code); snap.Following != 1 {
		t.Fatalf("a's trainer does not count b's learner: %+v", snap)
	}

	move(t, a, code, token, "s=1")
	if told(learner) {
		t.Fatal("b's learner was told before the news reached b")
	}
	store.deliver()
	if !told(learner) || learner.Snapshot().View != "s=1" {
		t.Fatalf("b's learner after a's move: %+v", learner.Snapshot())
	}
	// The trainer moves through b now; a follows.
	aLearner := join(t, a, code, Own)
	move(t, b, code, token, "s=2")
	store.deliver()
	if snap := aLearner.Snapshot(); snap.View != "s=2" || !told(aLearner) {
		t.Fatalf("a after b's move: %+v", snap)
	}
	if snap := get(t, b, code); snap.Following != 1 || snap.Own != 1 {
		t.Fatalf("b's counts of the room: %+v", snap)
	}
	// Old news does not move a room back.
	a.Apply(Record{Code: code, View: "s=old", Version: 1})
	if get(t, a, code).View != "s=2" {
		t.Fatal("an older version moved the room back")
	}
	learner.Leave()
	store.deliver()
	if snap := get(t, a, code); snap.Following != 0 || snap.Own != 1 {
		t.Fatalf("after b's learner left: %+v", snap)
	}

	// Another server's counts stand until they are old, unless said again.
	join(t, b, code, Following)
	store.deliver()
	clk.add(remoteTTL - time.Second)
	b.Recount()
	store.deliver()
	clk.add(2 * time.Second)
	if snap := get(t, a, code); snap.Following != 1 {
		t.Fatalf("counts said again: %+v", snap)
	}
	clk.add(remoteTTL)
	if snap := get(t, a, code); snap.Following != 0 {
		t.Fatalf("counts %v old: %+v", remoteTTL, snap)
	}

	// The store down: rooms work on each server alone, and say so.
	store.fail = true
	alone, aloneToken, err := a.Create("s=alone")
	fatal(t, err)
	if snap := get(t, a, alone); !snap.Alone {
		t.Fatalf("with the store down: %+v", snap)
	}
	move(t, a, alone, aloneToken, "s=alone2")
	if _, err := b.Get(alone); !errors.Is(err, ErrNoRoom) {
		t.Fatalf("b found a room the store never had: %v", err)
	}
	store.fail = false
	if snap := get(t, a, alone); snap.Alone || snap.View != "s=alone2" {
		t.Fatalf("the store back: %+v", snap)
	}
}
