package handlers

// Rooms: a trainer's presenter view that learners' pages follow (package room keeps them). The
// trainer starts a room from presenter mode (POST /rooms) or the API (POST /api/v1/rooms), and
// every view the trainer's page shows after that moves the room (POST /r/{code}/move, or PUT
// /api/v1/rooms/{code}). Learners open /r/{code}: a page that follows through its event stream
// (/r/{code}/events), or without JavaScript reloads itself. A move's page is rendered once per
// language, not once per learner (roomPages). A room's view is public to its learners, so each
// move passes the secrets gate a share passes.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/room"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

var errNoRooms = httpError{status: http.StatusNotFound, id: "errors.room.off"}

// roomError is a refusal of the hub's as the person is told it.
func (s *server) roomError(code string, err error) error {
	shown := displayCode(code)
	switch {
	case errors.Is(err, room.ErrNoRoom):
		return httpError{status: http.StatusNotFound, id: "errors.room.none", args: []any{"Code", shown, "Minutes", int(s.cfg.Rooms.Limits().Idle / time.Minute)}}
	case errors.Is(err, room.ErrNotTrainer):
		return httpError{status: http.StatusForbidden, id: "errors.room.not-trainer", args: []any{"Code", shown}}
	case errors.Is(err, room.ErrTooManyRooms):
		return httpError{status: http.StatusServiceUnavailable, retryAfter: "60", id: "errors.room.too-many", args: []any{"Max", s.cfg.Rooms.Limits().Rooms}}
	case errors.Is(err, room.ErrRoomFull):
		return httpError{status: http.StatusServiceUnavailable, retryAfter: "60", id: "errors.room.full", args: []any{"Code", shown, "Max", s.cfg.Rooms.Limits().Learners}}
	}
	return err
}

// displayCode is a code as a person reads it out: upper case, in two halves (K7QM-2XD9).
func displayCode(code string) string {
	c := strings.ToUpper(code)
	if len(c) != 8 {
		return web.Bound(c, 16)
	}
	return c[:4] + "-" + c[4:]
}

// roomCode is the {code} of a room's route, as the hub keeps it ("" when it is no code).
func roomCode(r *http.Request) string { return room.NormalizeCode(chi.URLParam(r, "code")) }

// trainerCookie names the cookie that holds a room's token in its trainer's browser: HttpOnly,
// SameSite=Strict, for the browser's session.
func trainerCookie(code string) string { return "sidecarlab-room-" + code }

// isTrainer reports whether r comes from the browser of code's trainer.
func (s *server) isTrainer(r *http.Request, code string) bool {
	c, err := r.Cookie(trainerCookie(code))
	if err != nil {
		return false
	}
	ok, _ := s.cfg.Rooms.Trainer(code, c.Value)
	return ok
}

// roomViewOf is what a room keeps of a view: its state, step and tab, as a permalink's query
// (nothing of the reader's own: the language, presenter mode, the panel's search).
func roomViewOf(v view) string {
	return strings.TrimPrefix(view{state: v.state, tab: v.tab, step: v.step}.permalink(), "/?")
}

// roomViewStep is the step a room's view shows. Every event of every stream says it, so it is
// read off the query without decoding the rest (the state may be as large as --max-body).
func roomViewStep(q string) int {
	for rest := q; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if v, ok := strings.CutPrefix(pair, "step="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// postedView reads the view a room's form posts (its "view" field: a view's address, or its
// query) and the trainer's choice about values that look secret (its "secrets" field), the form
// read as every form is (readForm: at most --max-body, UTF-8).
func (s *server) postedView(w http.ResponseWriter, r *http.Request) (view, secretsChoice, error) {
	f, err := s.readForm(w, r)
	if err != nil {
		return view{}, "", err
	}
	raw := f.Get("view")
	query := raw
	if _, after, ok := strings.Cut(raw, "?"); ok {
		query = after
	}
	q, err := url.ParseQuery(query)
	if err != nil || q.Get("s") == "" {
		return view{}, "", httpError{status: http.StatusBadRequest, id: "errors.room.view", args: []any{"Field", `"view"`}}
	}
	v, err := readViewQuery(q)
	if err != nil {
		return v, "", err
	}
	choice, err := readSecretsChoice(f.Get("secrets"))
	return v, choice, err
}

// gated is a room's view past the secrets gate: the view as the room may show it (redacted
// when the trainer chose so), and, when the trainer chose to show it as it is, the key that choice
// is kept under (room.Hub.Allow); or, when the gate holds it, the findings.
type gated struct {
	view     view
	allowKey string
	findings []secrets.Finding
	total    int
}

// roomGate is the secrets gate of a room's view. A state the trainer chose to show as it is
// stays chosen for the moves through its steps: in room code (the trainer's token) it is kept
// now; a room about to be made keeps it from gated.allowKey (startRoom).
func (s *server) roomGate(v view, choice secretsChoice, code, token string) (gated, error) {
	st := canonical(v.state)
	js := permalink.JSON(st)
	if err := s.shareable(st, js); err != nil {
		return gated{}, err
	}
	key := stateKey(js)
	if choice == secretsAsk && code != "" && s.cfg.Rooms.Allowed(code, key) {
		choice = secretsAllow
	}
	st, findings, total, err := secretsGate(st, choice)
	if err != nil || total > 0 {
		return gated{findings: findings, total: total}, err
	}
	g := gated{view: v}
	g.view.state = st
	if choice == secretsAllow {
		g.allowKey = key
		if code != "" {
			if err := s.cfg.Rooms.Allow(code, token, key); err != nil {
				return gated{}, s.roomError(code, err)
			}
		}
	}
	return g, nil
}

// startRoom makes a room showing g's view (and keeping the trainer's choice to show it as it is)
// and answers its code and its trainer's token.
func (s *server) startRoom(g gated) (code, token string, err error) {
	code, token, err = s.cfg.Rooms.Create(roomViewOf(g.view))
	if err != nil {
		return "", "", s.roomError("", err)
	}
	if g.allowKey != "" {
		_ = s.cfg.Rooms.Allow(code, token, g.allowKey)
	}
	return code, token, nil
}

// stateKey names a state's JSON for room.Hub.Allow.
func stateKey(js []byte) string {
	sum := sha256.Sum256(js)
	return hex.EncodeToString(sum[:])
}

// trainerView is the address of the trainer's page for v in room code: presenter mode, with
// the room's bar.
func trainerView(v view, code string) string {
	v.present, v.room = true, code
	return v.permalink()
}

// handleRoomStart is POST /rooms: presenter mode's "start a room" with the view shown. The
// browser gets the trainer's token in a cookie and goes to its view in the room.
func (s *server) handleRoomStart() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Rooms == nil {
			return errNoRooms
		}
		v, choice, err := s.postedView(w, r)
		if err != nil {
			return err
		}
		g, err := s.roomGate(v, choice, "", "")
		if err != nil {
			return err
		}
		if g.total > 0 {
			return s.roomSecretsPage(w, r, v, "/rooms", g)
		}
		code, token, err := s.startRoom(g)
		if err != nil {
			return err
		}
		s.setTrainerCookie(w, r, code, token)
		http.Redirect(w, r, web.CarryLang(r.Context(), trainerView(g.view, code)), http.StatusSeeOther)
		return nil
	})
}

// setTrainerCookie keeps the room's token in the trainer's browser.
func (s *server) setTrainerCookie(w http.ResponseWriter, r *http.Request, code, token string) {
	http.SetCookie(w, &http.Cookie{Name: trainerCookie(code), Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: strings.HasPrefix(s.origin(r), "https:")})
}

// roomSecretsPage is the page that holds a room's start or move: what looks secret, and the
// choice (redact, or show as is), posted to action again with the view.
func (s *server) roomSecretsPage(w http.ResponseWriter, r *http.Request, v view, action string, g gated) error {
	p := shareSecretsView(wording.For(r.Context()), v, g.findings, g.total)
	p.Action, p.View = action, roomViewOf(v)
	p.Cancel = v.permalink()
	return render(w, r, http.StatusConflict, web.ShareSecretsPage(p, versionLine()))
}

// handleRoomMove is POST /r/{code}/move: the trainer's page shows a view, and the room moves to
// it. The page's script asks after every view it shows (partialHeader: the answer is JSON, a
// held move a 409 whose page says why); without it, a button does, and the answer goes back to
// the trainer's view.
func (s *server) handleRoomMove() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Rooms == nil {
			return errNoRooms
		}
		code := roomCode(r)
		c, err := r.Cookie(trainerCookie(code))
		if err != nil {
			return s.roomError(code, room.ErrNotTrainer)
		}
		v, choice, err := s.postedView(w, r)
		if err != nil {
			return err
		}
		if ok, err := s.cfg.Rooms.Trainer(code, c.Value); err != nil || !ok {
			return s.roomError(code, cmp.Or(err, room.ErrNotTrainer))
		}
		g, err := s.roomGate(v, choice, code, c.Value)
		if err != nil {
			return err
		}
		if g.total > 0 {
			return s.roomSecretsPage(w, r, v, "/r/"+code+"/move", g)
		}
		snap, err := s.cfg.Rooms.Move(code, c.Value, roomViewOf(g.view))
		if err != nil {
			return s.roomError(code, err)
		}
		if r.Header.Get(partialHeader) != "" {
			return writeJSON(w, http.StatusOK, s.roomResponse(r, snap, ""))
		}
		http.Redirect(w, r, web.CarryLang(r.Context(), trainerView(g.view, code)), http.StatusSeeOther)
		return nil
	})
}

// roomResponse is the API's answer about a room.
func (s *server) roomResponse(r *http.Request, snap room.Snapshot, token string) api.RoomResponse {
	return api.RoomResponse{Code: snap.Code, URL: s.roomURL(r, snap.Code), Token: token, Seq: snap.Seq,
		Step: roomViewStep(snap.View), Following: snap.Following, Own: snap.Own}
}

// roomURL is the learners' page of a room, absolute: under the server's public address, or
// the one the trainer's browser asked (origin).
func (s *server) roomURL(r *http.Request, code string) string { return s.origin(r) + "/r/" + code }

// handleRoomPage is GET /r/{code}: the learners' page, the room's view as the trainer shows it,
// with a bar that says so. Its script follows the room's events; without it, the page reloads
// itself every room.Limits.Poll (?poll=1, which the room counts as a learner following).
func (s *server) handleRoomPage() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Rooms == nil {
			return errNoRooms
		}
		code := roomCode(r)
		snap, err := s.cfg.Rooms.Get(code)
		if err != nil {
			return s.roomError(chi.URLParam(r, "code"), err)
		}
		if r.URL.Query().Get("poll") == "1" {
			s.cfg.Rooms.Polled(code)
		}
		partial := r.Header.Get(partialHeader) != ""
		l := i18n.FromContext(r.Context())
		key := roomPageKey{code: code, seq: snap.Seq, lang: l.Lang(), urlLang: queryLang(r), partial: partial}
		pg, err := s.roomPages.get(r.Context(), key, func() *roomPage { return s.renderRoomPage(r, snap, partial) })
		if err != nil {
			return err
		}
		for k, vs := range pg.header {
			if k == "Vary" {
				// Beside what the middleware says the answer varies by (the language).
				w.Header()[k] = append(w.Header()[k], vs...)
				continue
			}
			w.Header()[k] = vs
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(pg.status)
		_, err = w.Write(bytes.ReplaceAll(pg.body, []byte(s.roomPages.nonce), []byte(templ.GetNonce(r.Context()))))
		return err
	})
}

// renderRoomPage renders a room's page for every learner of its move: with a stand-in nonce
// (each answer gets its own) and a context of its own, so that the first learner going away
// does not fail the others.
func (s *server) renderRoomPage(r *http.Request, snap room.Snapshot, partial bool) *roomPage {
	q, err := url.ParseQuery(snap.View)
	var v view
	if err == nil {
		v, err = readViewQuery(q)
	}
	if err != nil {
		return &roomPage{err: err}
	}
	v.room = snap.Code
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.cfg.RequestTimeout)
	defer cancel()
	// A document of its own (templ keeps the nonce in a value the request's context shares).
	ctx = templ.WithNonce(templ.InitializeDocumentContext(web.WithBack(ctx, "/r/"+snap.Code)), s.roomPages.nonce)
	rr := r.Clone(ctx)
	rr.Header = http.Header{}
	if partial {
		rr.Header.Set(partialHeader, "1")
	}
	rec := &pageRecorder{header: http.Header{}}
	err = s.renderViewWith(rec, rr, v, func(p *pageExtras, _ *engine.Timeline) {
		p.room = &web.Room{Role: web.RoomFollowing, Code: displayCode(snap.Code), Href: "/r/" + snap.Code,
			Events: "/r/" + snap.Code + "/events", Step: roomViewStep(snap.View), Seq: snap.Seq, Fork: ownView(v, snap.Code)}
		p.refresh = fmt.Sprintf("%d;url=/r/%s?poll=1", int(s.cfg.Rooms.Limits().Poll/time.Second), snap.Code)
	})
	if err != nil {
		return &roomPage{err: err}
	}
	return &roomPage{status: rec.status, header: rec.header, body: rec.body.Bytes()}
}

// ownView is a room's view as a learner's own: the same state and step, outside the room's
// page, with a way back.
func ownView(v view, code string) string {
	v.room = code
	return v.permalink()
}

// roomBarFor is the room bar of a view outside /r/{code}: in a room (?room=), the trainer's bar
// for the trainer's browser and a learner's "back to the room" for anyone else; in presenter
// mode outside one, "start a room". Nil when there is nothing to show.
func (s *server) roomBarFor(r *http.Request, v view) *web.Room {
	if s.cfg.Rooms == nil {
		return nil
	}
	if v.room == "" {
		if !v.present {
			return nil
		}
		return &web.Room{Role: web.RoomStart, View: roomViewOf(v)}
	}
	code := v.room
	bar := &web.Room{Code: displayCode(code), Href: "/r/" + code}
	snap, err := s.cfg.Rooms.Get(code)
	if err != nil {
		bar.Role = web.RoomEnded
		return bar
	}
	bar.Step, bar.Seq = roomViewStep(snap.View), snap.Seq
	if !s.isTrainer(r, code) {
		bar.Role, bar.Events = web.RoomOwn, "/r/"+code+"/events?as=own"
		return bar
	}
	bar.Role, bar.Events = web.RoomTrainer, "/r/"+code+"/events?as=trainer"
	bar.URL = s.roomURL(r, code)
	bar.QR = qrOf(bar.URL)
	bar.Following, bar.Own, bar.Alone = snap.Following, snap.Own, snap.Alone
	bar.View = roomViewOf(v)
	return bar
}

// qrOf is the QR code of u (medium error correction) as one SVG path: each row's runs of dark
// modules as rectangles. A URL too long for a QR code gets none (Size 0).
func qrOf(u string) web.QR {
	q, err := qrcode.New(u, qrcode.Medium)
	if err != nil {
		return web.QR{}
	}
	bits := q.Bitmap()
	var b strings.Builder
	for y, row := range bits {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			start := x
			for x < len(row) && row[x] {
				x++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", start, y, x-start, x-start)
		}
	}
	return web.QR{Size: len(bits), Path: b.String()}
}

// roomEvent is what a room's event stream sends: the move the room is at, and, to its
// trainer, the counts.
type roomEvent struct {
	Seq       uint64 `json:"seq"`
	Step      int    `json:"step"`
	Following *int   `json:"following,omitempty"`
	Own       *int   `json:"own,omitempty"`
}

// keepAlive is how often an idle event stream sends a comment, so that proxies between it and
// the browser do not take it for dead.
const keepAlive = 25 * time.Second

// handleRoomEvents is GET /r/{code}/events: a room's server-sent events, for a learner's page
// that follows (?as= nothing), one on its own (?as=own) or the trainer's (?as=trainer, from
// the trainer's browser). Each event is the room's move ("room"), or its end ("end"). The
// stream lives as long as the page: it has no deadline, is never compressed, and holds no work
// slot.
func (s *server) handleRoomEvents() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Rooms == nil {
			return errNoRooms
		}
		code := roomCode(r)
		mode := room.Following
		switch r.URL.Query().Get("as") {
		case "own":
			mode = room.Own
		case "trainer":
			if !s.isTrainer(r, code) {
				return s.roomError(code, cmp.Or(s.roomExists(code), room.ErrNotTrainer))
			}
			mode = room.Trainer
		}
		st, err := s.cfg.Rooms.Join(code, mode)
		if err != nil {
			return s.roomError(chi.URLParam(r, "code"), err)
		}
		defer st.Leave()
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Type", "text/event-stream")
			return nil // the headers alone: a stream has no end to wait for
		}
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{}) // the server's write timeout is for answers, not streams
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no") // an nginx in front passes each event on at once
		w.WriteHeader(http.StatusOK)
		var sent roomEvent
		// send writes what changed for this stream since the last event; false: the stream is
		// over (the room ended, or the client went away).
		send := func(snap room.Snapshot) bool {
			if snap.Ended {
				_, _ = fmt.Fprint(w, "event: end\ndata: {}\n\n")
				_ = rc.Flush()
				return false
			}
			ev := roomEvent{Seq: snap.Seq, Step: roomViewStep(snap.View)}
			if mode == room.Trainer {
				ev.Following, ev.Own = &snap.Following, &snap.Own
			}
			if sent.Seq != 0 && eventEqual(ev, sent) {
				return true
			}
			sent = ev
			js, _ := json.Marshal(ev)
			if _, err := fmt.Fprintf(w, "retry: 2000\nevent: room\ndata: %s\n\n", js); err != nil {
				return false
			}
			return rc.Flush() == nil
		}
		if !send(st.Snapshot()) {
			return nil
		}
		tick := time.NewTicker(keepAlive)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return nil
			case <-st.C:
				if !send(st.Snapshot()) {
					return nil
				}
			case <-tick.C:
				if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
					return nil
				}
				if snap := st.Snapshot(); snap.Ended {
					send(snap)
					return nil
				}
			}
		}
	})
}

func eventEqual(a, b roomEvent) bool {
	eq := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Seq == b.Seq && a.Step == b.Step && eq(a.Following, b.Following) && eq(a.Own, b.Own)
}

// roomExists is nil when the room with code is there, else the hub's refusal.
func (s *server) roomExists(code string) error {
	_, err := s.cfg.Rooms.Get(code)
	return err
}

// apiTrainer is the room of an API request and its trainer's token, the request's Authorization:
// Bearer: 401 without one, 403 with another room's or none, 404 for a room that is not there.
func (s *server) apiTrainer(w http.ResponseWriter, r *http.Request) (code, token string, err error) {
	if s.cfg.Rooms == nil {
		return "", "", errNoRooms
	}
	if token, err = bearer(w, r); err != nil {
		return "", "", err
	}
	code = roomCode(r)
	if ok, err := s.cfg.Rooms.Trainer(code, token); err != nil || !ok {
		return "", "", s.roomError(chi.URLParam(r, "code"), cmp.Or(err, room.ErrNotTrainer))
	}
	return code, token, nil
}

// bearer is the token of r's Authorization: Bearer header; 401 without one.
func bearer(w http.ResponseWriter, r *http.Request) (string, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sidecarlab rooms"`)
		return "", httpError{status: http.StatusUnauthorized, id: "errors.room.no-token", args: []any{"Header", "Authorization: Bearer <token>"}}
	}
	return strings.TrimSpace(token), nil
}

// apiRoomView reads a room request's view: the state as the share API takes it, its step (the
// first annotation's by default, as a presentation starts) and tab, through the secrets gate.
// With findings, the 422 a share answers is written and ok is false.
func (s *server) apiRoomView(w http.ResponseWriter, r *http.Request, code, token string) (g gated, ok bool, err error) {
	var v view
	var req api.RoomRequest
	if err := readJSONBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		return g, false, err
	}
	choice, err := s.apiShareChoice(r, &req.ShareRequest)
	if err != nil {
		return g, false, err
	}
	st := api.State{Version: permalink.Version, Istio: engine.Version().Istio, Manifest: req.Manifest, Steps: req.Steps, Settings: req.Settings}
	v = view{state: st, tab: req.Tab, step: firstSlide(st)}
	if req.Step != nil {
		if *req.Step < 0 {
			return g, false, httpError{status: http.StatusBadRequest, id: "errors.form.step", args: []any{"Param", `"step"`}}
		}
		v.step = *req.Step
	}
	if v.tab != "" && !validTab(v.tab) {
		return g, false, httpError{status: http.StatusBadRequest, id: "errors.room.tab", args: []any{"Field", `"tab"`}}
	}
	if g, err = s.roomGate(v, choice, code, token); err != nil {
		return g, false, err
	}
	if g.total > 0 {
		return g, false, writeSecretsFound(w, r, g.findings, g.total)
	}
	return g, true, nil
}

// handleAPIRoomCreate is POST /api/v1/rooms: a room showing the state, answered with its code,
// its learners' URL and, once, the trainer's token.
func (s *server) handleAPIRoomCreate() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Rooms == nil {
			return errNoRooms
		}
		g, ok, err := s.apiRoomView(w, r, "", "")
		if !ok {
			return err
		}
		code, token, err := s.startRoom(g)
		if err != nil {
			return err
		}
		snap, err := s.cfg.Rooms.Get(code)
		if err != nil {
			return s.roomError(code, err)
		}
		return writeJSON(w, http.StatusCreated, s.roomResponse(r, snap, token))
	})
}

// handleAPIRoomMove is PUT /api/v1/rooms/{code}: the trainer (Authorization: Bearer <token>)
// moves the room to a state, as the trainer's page does.
func (s *server) handleAPIRoomMove() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		code, token, err := s.apiTrainer(w, r)
		if err != nil {
			return err
		}
		g, ok, err := s.apiRoomView(w, r, code, token)
		if !ok {
			return err
		}
		snap, err := s.cfg.Rooms.Move(code, token, roomViewOf(g.view))
		if err != nil {
			return s.roomError(code, err)
		}
		return writeJSON(w, http.StatusOK, s.roomResponse(r, snap, ""))
	})
}

// handleAPIRoom is GET /api/v1/rooms/{code}: the room's move, step and counts, for its trainer.
func (s *server) handleAPIRoom() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		code, _, err := s.apiTrainer(w, r)
		if err != nil {
			return err
		}
		snap, err := s.cfg.Rooms.Get(code)
		if err != nil {
			return s.roomError(code, err)
		}
		return writeJSON(w, http.StatusOK, s.roomResponse(r, snap, ""))
	})
}

// roomPages keeps each room's page as rendered for its current move: learners are many and
// moves few, so a move's page is rendered once per language and kind (the whole page, or the
// fragment the script swaps in), and learners who ask while it renders wait for it. A room's
// older moves are dropped when a newer one renders; past maxRoomPages bytes, it starts over.
type roomPages struct {
	// nonce stands in for each answer's CSP nonce in a kept page.
	nonce string
	mu    sync.Mutex
	m     map[roomPageKey]*roomPage
	bytes int
}

// maxRoomPages bounds what roomPages keeps.
const maxRoomPages = 64 << 20

type roomPageKey struct {
	code    string
	seq     uint64
	lang    string
	urlLang string
	partial bool
}

// roomPage is one rendered page; done is closed once it is.
type roomPage struct {
	done   chan struct{}
	status int
	header http.Header
	body   []byte
	err    error
}

func newRoomPages() *roomPages {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &roomPages{nonce: "room-nonce-" + hex.EncodeToString(b[:]), m: map[roomPageKey]*roomPage{}}
}

// get is the page of key, rendered by render unless it is kept or rendering; ctx bounds the wait.
func (c *roomPages) get(ctx context.Context, key roomPageKey, render func() *roomPage) (*roomPage, error) {
	c.mu.Lock()
	p, ok := c.m[key]
	if !ok {
		for k, old := range c.m {
			if k.code == key.code && k.seq < key.seq {
				c.bytes -= len(old.body)
				delete(c.m, k)
			}
		}
		p = &roomPage{done: make(chan struct{})}
		c.m[key] = p
	}
	c.mu.Unlock()
	if ok {
		select {
		case <-p.done:
			return p, p.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	out := render()
	p.status, p.header, p.body, p.err = out.status, out.header, out.body, out.err
	close(p.done)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case p.err != nil:
		// Not kept: the next learner tries again (the server was busy, say).
		if c.m[key] == p {
			delete(c.m, key)
		}
	case c.m[key] == p:
		c.bytes += len(p.body)
		if c.bytes > maxRoomPages {
			c.m, c.bytes = map[roomPageKey]*roomPage{key: p}, len(p.body)
		}
	}
	return p, p.err
}

// pageRecorder is a ResponseWriter that keeps the answer, for roomPages.
type pageRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (p *pageRecorder) Header() http.Header { return p.header }
func (p *pageRecorder) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}
func (p *pageRecorder) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return p.body.Write(b)
}
