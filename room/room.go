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
	// Alone is set when the hub shares its rooms with other servers but cannot now: the
	// learners another server serves do not follow (its trainer is told).
	Alone bool
}

// Hub holds the rooms of one server.
type Hub struct {
	lim Limits
	now func() time.Time

	mu     sync.Mutex
	rooms  map[string]*room
	closed bool
	// replica shares the rooms with other servers (nil: this server's only).
	replica Replica
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
	// version is the replica's version of the room this hub last had (Replica.Move), and remote
	// the learners other servers serve in it, by server (Hub.RemoteCounts).
	version int64
	remote  map[string]remoteCount
}

// remoteCount is another server's learners in a room, as it last said.
type remoteCount struct {
	following, own int
	at             time.Time
}

// remoteTTL is how long another server's counts stand without being said again (a server that
// stopped says nothing more); RecountEvery is how often a server says them again while it
// serves learners (Hub.Recount).
const (
	remoteTTL    = 90 * time.Second
	RecountEvery = 30 * time.Second
)

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
	r := &room{code: code, token: sha256.Sum256([]byte(token)), view: view, seq: 1, moved: h.now(), streams: map[*Stream]struct{}{}}
	h.rooms[code] = r
	if h.replica != nil {
		rec := Record{Code: code, Token: r.token, View: view, Moved: r.moved}
		h.mu.Unlock()
		// Failing, the room is this server's only (Snapshot.Alone says so).
		_ = h.replica.Create(rec)
		h.mu.Lock()
	}
	return code, token, nil
}

// Trainer reports whether token is the trainer's of the room with code (ErrNoRoom when there
// is none).
func (h *Hub) Trainer(code, token string) (bool, error) {
	r, err := h.lock(code)
	defer h.mu.Unlock()
	if err != nil {
		return false, err
	}
	return r.trainer(token), nil
}

// Move shows view in the room, if token is its trainer's, and tells every stream. With its
// rooms shared, the other servers are told too (Replica.Move).
func (h *Hub) Move(code, token, view string) (Snapshot, error) {
	r, err := h.lock(code)
	if err != nil {
		h.mu.Unlock()
		return Snapshot{}, err
	}
	if !r.trainer(token) {
		h.mu.Unlock()
		return Snapshot{}, ErrNotTrainer
	}
	r.moved = h.now()
	if view != r.view {
		r.view = view
		r.seq++
		r.notify(func(Mode) bool { return true })
	}
	moved, snap := r.moved, h.snapshot(r)
	h.mu.Unlock()
	if h.replica != nil {
		// Also when the view is the same: the move keeps the room alive on every server.
		if v, err := h.replica.Move(code, view, moved); err == nil {
			h.mu.Lock()
			r.version = max(r.version, v)
			h.mu.Unlock()
		}
	}
	return snap, nil
}

// Allow remembers that the trainer chose to show what key names (a state's hash) as it is, so
// that the moves through its steps are not held again; Allowed asks. One choice is kept: the
// state being presented.
func (h *Hub) Allow(code, token, key string) error {
	r, err := h.lock(code)
	defer h.mu.Unlock()
	if err != nil {
		return err
	}
	if !r.trainer(token) {
		return ErrNotTrainer
	}
	r.allowed = key
	if h.replica != nil {
		// Another server's moves read it from the store; failing, this server's still do.
		go func() { _ = h.replica.Allow(code, key) }()
	}
	return nil
}

// Allowed reports whether the trainer of the room with code chose to show key as it is.
func (h *Hub) Allowed(code, key string) bool {
	r, err := h.lock(code)
	defer h.mu.Unlock()
	return err == nil && key != "" && r.allowed == key
}

// Get is the room's snapshot now.
func (h *Hub) Get(code string) (Snapshot, error) {
	r, err := h.lock(code)
	defer h.mu.Unlock()
	if err != nil {
		return Snapshot{}, err
	}
	return h.snapshot(r), nil
}

// Polled counts one reload of a page without JavaScript following the room: for Limits.Poll,
// it counts as a learner following.
func (h *Hub) Polled(code string) {
	r, err := h.lock(code)
	defer h.mu.Unlock()
	if err != nil {
		return
	}
	// The list is bounded by what the room takes: past it, the oldest reload is forgotten.
	if len(r.polls) >= h.lim.Learners {
		r.polls = r.polls[1:]
	}
	r.polls = append(r.polls, h.now())
	r.notify(func(m Mode) bool { return m == Trainer })
	h.publish(r)
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
	r, err := h.lock(code)
	defer h.mu.Unlock()
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
		h.publish(r)
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
		s.hub.publish(s.room)
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

// lock takes the hub's lock and finds the room with code: one this hub has, or, when its rooms
// are shared and it has none, the replica's (another server's room, kept here from then on). The
// lock is held on return, whatever the error.
func (h *Hub) lock(code string) (*room, error) {
	h.mu.Lock()
	r, err := h.find(code)
	if err == nil || h.replica == nil || h.closed || code == "" {
		return r, err
	}
	h.mu.Unlock()
	rec, ok, lerr := h.replica.Load(code)
	h.mu.Lock()
	if lerr != nil || !ok || h.now().Sub(rec.Moved) >= h.lim.Idle || h.closed {
		return nil, ErrNoRoom
	}
	if r, err := h.find(code); err == nil {
		return r, nil // another request kept it meanwhile
	}
	h.sweep()
	if len(h.rooms) >= h.lim.Rooms {
		return nil, ErrTooManyRooms
	}
	r = &room{code: code, token: rec.Token, view: rec.View, seq: 1, version: rec.Version, moved: rec.Moved, allowed: rec.Allowed, streams: map[*Stream]struct{}{}}
	h.rooms[code] = r
	return r, nil
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
	snap := Snapshot{Code: r.code, View: r.view, Seq: r.seq, Following: r.n[Following] + len(r.polls), Own: r.n[Own], Ended: r.ended}
	for from, c := range r.remote {
		if h.now().Sub(c.at) >= remoteTTL {
			delete(r.remote, from)
			continue
		}
		snap.Following += c.following
		snap.Own += c.own
	}
	snap.Alone = h.replica != nil && !h.replica.Shared()
	return snap
}

// publish tells the other servers how many learners this one serves in r; h.mu is held.
func (h *Hub) publish(r *room) {
	if h.replica != nil {
		h.replica.Counts(r.code, r.n[Following]+len(r.polls), r.n[Own])
	}
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

// Replica shares a hub's rooms with other servers' hubs, so that a learner served by one server
// follows a trainer served by another (PostgreSQL: Postgres). The hub calls it outside its lock
// and keeps working when it fails: its rooms are then this server's only, and its snapshots say
// so (Alone).
type Replica interface {
	// Create keeps a new room; Move a room's view and the time of its trainer's move, answering
	// the room's version (which orders every server's moves); Allow the trainer's choice.
	Create(r Record) error
	Move(code, view string, moved time.Time) (version int64, err error)
	Allow(code, key string) error
	// Load is the room kept under code (ok false when there is none).
	Load(code string) (r Record, ok bool, err error)
	// Counts tells the other servers how many learners this one serves in a room. It must not
	// block (the hub's lock is held).
	Counts(code string, following, own int)
	// Shared reports whether the rooms are shared now. It must not block.
	Shared() bool
}

// Record is a room as a Replica keeps it.
type Record struct {
	Code string
	// Token is the hash of the trainer's token.
	Token   [sha256.Size]byte
	View    string
	Version int64
	Moved   time.Time
	Allowed string
}

// Share makes the hub share its rooms through r, from now on.
func (h *Hub) Share(r Replica) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.replica = r
}

// Apply takes a room as another server left it (a Replica's news): a newer version of a room
// this hub has moves it here too. A room this hub does not have is loaded when asked for.
func (h *Hub) Apply(rec Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := h.find(rec.Code)
	if err != nil || rec.Version <= r.version {
		return
	}
	r.version = rec.Version
	r.allowed = rec.Allowed
	if rec.Moved.After(r.moved) {
		r.moved = rec.Moved
	}
	if rec.View != r.view {
		r.view = rec.View
		r.seq++
		r.notify(func(Mode) bool { return true })
	}
}

// RemoteCounts takes another server's counts of a room (a Replica's news): from names the
// server. They stand for remoteTTL unless said again.
func (h *Hub) RemoteCounts(code, from string, following, own int) {
	r, err := h.lock(code)
	defer h.mu.Unlock()
	if err != nil {
		return
	}
	if r.remote == nil {
		r.remote = map[string]remoteCount{}
	}
	r.remote[from] = remoteCount{following: following, own: own, at: h.now()}
	r.notify(func(m Mode) bool { return m == Trainer })
}

// Recount says again, through the replica, the counts of every room this server serves learners
// in (Replica.Counts), so that the other servers' stay fresh (RecountEvery).
func (h *Hub) Recount() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.rooms {
		if r.n[Following]+r.n[Own]+len(r.polls) > 0 {
			h.publish(r)
		}
	}
}
