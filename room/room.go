// Package room keeps the rooms a trainer runs a workshop in. A room holds one view, the
// trainer's (a permalink's query: the state, the step, the tab), and tells everyone who joined it
// when the trainer moves, so that a learner's page follows the presenter's. Learners who go off
// to try something are counted apart ("on their own"); the room counts, it never names.
//
// Only the trainer moves a room: whoever holds the token Create returned. The hub keeps the
// token's hash, never the token.
//
// Rooms live in memory, bounded: so many rooms per hub, so many learners per room, and a room
// nobody moved for Limits.Idle is gone. The hub knows nothing of HTTP; package handlers serves
// it (the pages, the event streams, the API).
package room

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"time"
)

// The hub's refusals, which handlers word and answer with a status.
var (
	// ErrNoRoom: no room has the code (it never had, or it expired, or the hub closed).
	ErrNoRoom = errors.New("no such room")
	// ErrNotTrainer: the token is not the room's.
	ErrNotTrainer = errors.New("not this room's trainer")
	// ErrTooManyRooms: the hub holds Limits.Rooms rooms already.
	ErrTooManyRooms = errors.New("too many rooms")
	// ErrRoomFull: the room has Limits.Learners learners already.
	ErrRoomFull = errors.New("the room is full")
)

// Limits bound a hub. Zero fields take DefaultLimits' values.
type Limits struct {
	// Rooms is how many rooms the hub holds at once.
	Rooms int
	// Learners is how many learners one room takes at once (event streams, following or on
	// their own); a trainer's own streams are bounded apart (trainerStreams).
	Learners int
	// Idle is how long a room lives after its last move.
	Idle time.Duration
	// Poll is how often a learner's page without JavaScript reloads itself: the hub counts the
	// reloads of the last Poll as that many learners following.
	Poll time.Duration
}

// DefaultLimits are a hub's limits when its Limits leave them zero: a workshop of a few hundred,
// a morning's pause, a reload every 10 s (200 learners without JavaScript behind one address make
// 1,200 requests a minute, well under the server's per-address limit).
func DefaultLimits() Limits {
	return Limits{Rooms: 100, Learners: 500, Idle: 3 * time.Hour, Poll: 10 * time.Second}
}

// trainerStreams bounds the event streams one room's trainer may hold (a few tabs, a presenter
// screen and a laptop).
const trainerStreams = 8

// Mode is how a stream joined its room.
type Mode int

const (
	// Following: a learner whose page shows the trainer's view.
	Following Mode = iota
	// Own: a learner who went off to try something; told of moves, not moved.
	Own
	// Trainer: the trainer's own page, told the counts.
	Trainer
)

// Snapshot is what a room shows at one moment.
type Snapshot struct {
	Code string
	// View is the trainer's view as Move last stored it, and Seq how many moves made it (the
	// room's creation is move 1).
	View string
	Seq  uint64
	// Following and Own count the learners: those whose page follows (streams, and the reloads
	// of pages without JavaScript in the last Limits.Poll), and those on their own.
	Following, Own int
	// Ended is set once the room is gone (expired, or the hub closed): streams end.
	Ended bool
}

// Hub holds the rooms of one server.
type Hub struct {
	lim Limits
	now func() time.Time

	mu     sync.Mutex
	rooms  map[string]*room
	closed bool
}

type room struct {
	code    string
	token   [sha256.Size]byte
	view    string
	seq     uint64
	moved   time.Time
	streams map[*Stream]struct{}
	n       [3]int // streams by Mode
	// polls are the times of the last reloads of pages without JavaScript, oldest first.
	polls []time.Time
	ended bool
	// allowed is what the trainer last chose to show as it is although it looks secret (Allow).
	allowed string
}

// New returns an empty hub. now is its clock (time.Now in a server; a test's own clock).
func New(lim Limits, now func() time.Time) *Hub {
	d := DefaultLimits()
	if lim.Rooms <= 0 {
		lim.Rooms = d.Rooms
	}
	if lim.Learners <= 0 {
		lim.Learners = d.Learners
	}
	if lim.Idle <= 0 {
		lim.Idle = d.Idle
	}
	if lim.Poll <= 0 {
		lim.Poll = d.Poll
	}
	return &Hub{lim: lim, now: now, rooms: map[string]*room{}}
}

// Limits are the hub's limits, defaults filled in.
func (h *Hub) Limits() Limits { return h.lim }

// codeEncoding is Crockford's base32 alphabet in lower case (no i, l, o or u to misread), the
// alphabet of short links.
var codeEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// codeLen is a code's length: 8 characters, 40 bits, short enough to read out and type, too
// many to guess at any rate a server lets a client ask.
const codeLen = 8

// NormalizeCode is a code as a person may type it (upper case, a space or dash between its
// halves) as the hub keeps it, or "" when it is not a code.
func NormalizeCode(s string) string {
	s = strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(s))
	if len(s) != codeLen {
		return ""
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefghjkmnpqrstvwxyz", c) {
			return ""
		}
	}
	return s
}

// Create opens a room showing view and returns its code and its trainer's token.
func (h *Hub) Create(view string) (code, token string, err error) {
	var b [5 + 32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	code = codeEncoding.EncodeToString(b[:5])
	token = base64.RawURLEncoding.EncodeToString(b[5:])
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", "", ErrNoRoom
	}
	h.sweep()
	if len(h.rooms) >= h.lim.Rooms {
		return "", "", ErrTooManyRooms
	}
	if _, taken := h.rooms[code]; taken {
		// One in a trillion with a hundred rooms: a person tries again.
		return "", "", ErrTooManyRooms
	}
	h.rooms[code] = &room{code: code, token: sha256.Sum256([]byte(token)), view: view, seq: 1, moved: h.now(), streams: map[*Stream]struct{}{}}
	return code, token, nil
}

// Trainer reports whether token is the trainer's of the room with code (ErrNoRoom when there
// is none).
func (h *Hub) Trainer(code, token string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := h.find(code)
	if err != nil {
		return false, err
	}
	return r.trainer(token), nil
}

// Move shows view in the room, if token is its trainer's, and tells every stream.
func (h *Hub) Move(code, token, view string) (Snapshot, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := h.find(code)
	if err != nil {
		return Snapshot{}, err
	}
	if !r.trainer(token) {
		return Snapshot{}, ErrNotTrainer
	}
	r.moved = h.now()
	if view != r.view {
		r.view = view
		r.seq++
		r.notify(func(Mode) bool { return true })
	}
	return h.snapshot(r), nil
}

// Allow remembers that the trainer chose to show what key names (a state's hash) as it is, so
// that the moves through its steps are not held again; Allowed asks. One choice is kept: the
// state being presented.
func (h *Hub) Allow(code, token, key string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := h.find(code)
	if err != nil {
		return err
	}
	if !r.trainer(token) {
		return ErrNotTrainer
	}
	r.allowed = key
	return nil
}

// Allowed reports whether the trainer of the room with code chose to show key as it is.
func (h *Hub) Allowed(code, key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := h.find(code)
	return err == nil && key != "" && r.allowed == key
}

// Get is the room's snapshot now.
func (h *Hub) Get(code string) (Snapshot, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := h.find(code)
	if err != nil {
		return Snapshot{}, err
	}
	return h.snapshot(r), nil
}

// Polled counts one reload of a page without JavaScript following the room: for Limits.Poll,
// it counts as a learner following.
func (h *Hub) Polled(code string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := h.find(code)
	if err != nil {
		return
	}
	// The list is bounded by what the room takes: past it, the oldest reload is forgotten.
	if len(r.polls) >= h.lim.Learners {
		r.polls = r.polls[1:]
	}
	r.polls = append(r.polls, h.now())
	r.notify(func(m Mode) bool { return m == Trainer })
}

// Stream is one page's subscription to its room: C has a value whenever the room changed for it
// (a move; the counts, for a trainer; its end), coalesced, so that a slow reader misses nothing
// but intermediate states.
type Stream struct {
	C    <-chan struct{}
	c    chan struct{}
	mode Mode
	hub  *Hub
	room *room
}

// Join subscribes a page to the room with code. A learner past Limits.Learners is refused
// (ErrRoomFull), and so is a trainer's stream past trainerStreams; the rest are served.
func (h *Hub) Join(code string, m Mode) (*Stream, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := h.find(code)
	if err != nil {
		return nil, err
	}
	if m == Trainer && r.n[Trainer] >= trainerStreams || m != Trainer && r.n[Following]+r.n[Own] >= h.lim.Learners {
		return nil, ErrRoomFull
	}
	c := make(chan struct{}, 1)
	s := &Stream{C: c, c: c, mode: m, hub: h, room: r}
	r.streams[s] = struct{}{}
	r.n[m]++
	if m != Trainer {
		r.notify(func(m Mode) bool { return m == Trainer })
	}
	return s, nil
}

// Snapshot is the stream's room now (Ended once it is gone).
func (s *Stream) Snapshot() Snapshot {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if !s.room.ended && s.hub.now().Sub(s.room.moved) >= s.hub.lim.Idle {
		s.hub.sweep()
	}
	return s.hub.snapshot(s.room)
}

// Leave ends the subscription.
func (s *Stream) Leave() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if _, ok := s.room.streams[s]; !ok {
		return
	}
	delete(s.room.streams, s)
	s.room.n[s.mode]--
	if s.mode != Trainer {
		s.room.notify(func(m Mode) bool { return m == Trainer })
	}
}

// Close ends every room: their streams are told (Ended) and the hub refuses new rooms. A
// server calls it when it shuts down, so that long-lived streams do not hold the shutdown.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for code, r := range h.rooms {
		r.end()
		delete(h.rooms, code)
	}
}

// Len is how many rooms the hub holds.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweep()
	return len(h.rooms)
}

// find is the live room with code; h.mu is held.
func (h *Hub) find(code string) (*room, error) {
	r, ok := h.rooms[code]
	if !ok {
		return nil, ErrNoRoom
	}
	if h.now().Sub(r.moved) >= h.lim.Idle {
		r.end()
		delete(h.rooms, code)
		return nil, ErrNoRoom
	}
	return r, nil
}

// sweep forgets the rooms idle past Limits.Idle, ending their streams; h.mu is held.
func (h *Hub) sweep() {
	now := h.now()
	for code, r := range h.rooms {
		if now.Sub(r.moved) >= h.lim.Idle {
			r.end()
			delete(h.rooms, code)
		}
	}
}

// snapshot is r now; h.mu is held.
func (h *Hub) snapshot(r *room) Snapshot {
	since := h.now().Add(-h.lim.Poll)
	for len(r.polls) > 0 && !r.polls[0].After(since) {
		r.polls = r.polls[1:]
	}
	return Snapshot{Code: r.code, View: r.view, Seq: r.seq, Following: r.n[Following] + len(r.polls), Own: r.n[Own], Ended: r.ended}
}

// trainer reports whether token is r's trainer's.
func (r *room) trainer(token string) bool {
	sum := sha256.Sum256([]byte(token))
	return token != "" && subtle.ConstantTimeCompare(sum[:], r.token[:]) == 1
}

// notify tells the streams whose mode is chosen that the room changed; the hub's lock is held.
// It never blocks: a stream already told has not read since, and will read the latest.
func (r *room) notify(chosen func(Mode) bool) {
	for s := range r.streams {
		if chosen(s.mode) {
			select {
			case s.c <- struct{}{}:
			default:
			}
		}
	}
}

// end marks r gone and tells every stream; the hub's lock is held.
func (r *room) end() {
	r.ended = true
	r.notify(func(Mode) bool { return true })
}
