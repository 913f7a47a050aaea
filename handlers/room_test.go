package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/room"
)

// roomServer is a server with rooms over the real engine, counting its timelines.
func roomServer(t *testing.T, cfg Config) (http.Handler, *room.Hub, *countingEngine) {
	t.Helper()
	newServer(t)
	if cfg.Rooms == nil {
		cfg.Rooms = room.New(room.Limits{}, time.Now)
	}
	ce := &countingEngine{Engine: eng}
	return New(slog.New(slog.NewTextHandler(io.Discard, nil)), func() Engine { return ce }, testConfig(cfg)), cfg.Rooms, ce
}

var roomSteps = []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "sidecar.istio.io/proxyMemory", Value: "256Mi"}}

func roomRequest(t *testing.T, method, target, token string, body any) *http.Request {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(method, target, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

func roomAnswer(t *testing.T, r response, want int) api.RoomResponse {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
	var rr api.RoomResponse
	if err := json.Unmarshal([]byte(r.body), &rr); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	return rr
}

func stepPtr(n int) *int { return &n }

// TestRoomAPI: a trainer scripts a workshop: POST makes a room (its token once), PUT with the
// token moves it, GET reads the counts; without the token 401, with another 403.
func TestRoomAPI(t *testing.T) {
	h, _, _ := roomServer(t, Config{PublicURL: "https://lab.example.com"})
	req := api.RoomRequest{ShareRequest: api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, Steps: roomSteps}}}
	made := roomAnswer(t, do(t, h, roomRequest(t, http.MethodPost, "/api/v1/rooms", "", req)), http.StatusCreated)
	if room.NormalizeCode(made.Code) != made.Code || made.Token == "" || made.URL != "https://lab.example.com/r/"+made.Code || made.Seq != 1 || made.Step != 1 {
		t.Fatalf("made %+v", made)
	}
	other := roomAnswer(t, do(t, h, roomRequest(t, http.MethodPost, "/api/v1/rooms", "", req)), http.StatusCreated)

	req.Step = stepPtr(2)
	for _, c := range []struct {
		name, code, token string
		status            int
	}{
		{"no token", made.Code, "", http.StatusUnauthorized},
		{"another room's token", made.Code, other.Token, http.StatusForbidden},
		{"a token cut short", made.Code, made.Token[:10], http.StatusForbidden},
		{"no such room", "zzzzzzzz", made.Token, http.StatusNotFound},
	} {
		r := do(t, h, roomRequest(t, http.MethodPut, "/api/v1/rooms/"+c.code, c.token, req))
		if r.status != c.status || !strings.Contains(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s, want %d", c.name, r.status, r.body, c.status)
		}
		if c.status == http.StatusUnauthorized && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q", c.name, r.header.Get("WWW-Authenticate"))
		}
	}
	if got := roomAnswer(t, do(t, h, roomRequest(t, http.MethodGet, "/api/v1/rooms/"+made.Code, made.Token, nil)), http.StatusOK); got.Seq != 1 {
		t.Fatalf("refused moves moved the room: %+v", got)
	}
	moved := roomAnswer(t, do(t, h, roomRequest(t, http.MethodPut, "/api/v1/rooms/"+made.Code, made.Token, req)), http.StatusOK)
	if moved.Seq != 2 || moved.Step != 2 || moved.Token != "" {
		t.Fatalf("moved %+v", moved)
	}
	// The learners' page shows step 2 of the state.
	if r := get(t, h, "/r/"+made.Code); r.status != http.StatusOK || testid(r, "room-bar").AttrOr("data-step", "") != "2" {
		t.Fatalf("/r/%s: %d step %q", made.Code, r.status, testid(r, "room-bar").AttrOr("data-step", ""))
	}
	if r := do(t, h, roomRequest(t, http.MethodGet, "/api/v1/rooms/"+made.Code, "", nil)); r.status != http.StatusUnauthorized {
		t.Errorf("the counts without the token: %d", r.status)
	}
	for _, bad := range []api.RoomRequest{
		{ShareRequest: req.ShareRequest, Step: stepPtr(-1)},
		{ShareRequest: req.ShareRequest, Tab: "nope"},
	} {
		if r := do(t, h, roomRequest(t, http.MethodPut, "/api/v1/rooms/"+made.Code, made.Token, bad)); r.status != http.StatusBadRequest {
			t.Errorf("%+v: %d %s", bad, r.status, r.body)
		}
	}

	// Rooms off: the routes say so.
	off := serverConfig(t, Config{})
	if r := do(t, off, roomRequest(t, http.MethodPost, "/api/v1/rooms", "", req)); r.status != http.StatusNotFound || !strings.Contains(r.body, "Rooms are off") {
		t.Errorf("rooms off: %d %s", r.status, r.body)
	}
}

// TestRoomSecrets: a room's view is public to its learners, so a state with values that look
// secret is held as a share is, until the trainer redacts it or shows it as it is; a state
// shown as it is stays chosen for the moves through its steps.
func TestRoomSecrets(t *testing.T) {
	h, hub, _ := roomServer(t, Config{})
	req := api.RoomRequest{ShareRequest: api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: secretYAML}}}
	r := do(t, h, roomRequest(t, http.MethodPost, "/api/v1/rooms", "", req))
	var held api.SecretsResponse
	if err := json.Unmarshal([]byte(r.body), &held); r.status != http.StatusUnprocessableEntity || err != nil || held.Total == 0 {
		t.Fatalf("a state with secrets: %d %s", r.status, r.body)
	}
	if hub.Len() != 0 {
		t.Fatal("a held state made a room")
	}
	req.Redact = true
	made := roomAnswer(t, do(t, h, roomRequest(t, http.MethodPost, "/api/v1/rooms", "", req)), http.StatusCreated)
	if page := get(t, h, "/r/"+made.Code); strings.Contains(page.body, "hunter2") || !strings.Contains(page.body, "&lt;redacted&gt;") {
		t.Fatal("the redacted room shows the password, or no redaction")
	}

	// The form: presenter mode's "start a room" with the same state is held on a page that asks.
	link := stateLink(t, api.State{Manifest: secretYAML})
	start := func(form url.Values) response {
		req := httptest.NewRequest(http.MethodPost, "/rooms", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return do(t, h, req)
	}
	r = start(url.Values{"view": {link + "&step=0&present=1"}})
	if r.status != http.StatusConflict || testid(r, "share-secrets-form").AttrOr("action", "") != "/rooms" ||
		testid(r, "share-secrets-form").Find(`input[name="view"]`).Length() != 1 || strings.Contains(testid(r, "share-secrets-list").Text(), "hunter2") {
		t.Fatalf("start with secrets: %d %s", r.status, r.body)
	}
	r = start(url.Values{"view": {link + "&step=0"}, "secrets": {"allow"}})
	loc := r.header.Get("Location")
	if r.status != http.StatusSeeOther || !strings.Contains(loc, "present=1") || !strings.Contains(loc, "room=") {
		t.Fatalf("start as is: %d %q", r.status, loc)
	}
	u, _ := url.Parse(loc)
	code := u.Query().Get("room")
	cookie := r.header.Get("Set-Cookie")
	if !strings.HasPrefix(cookie, trainerCookie(code)+"=") || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
		t.Fatalf("the trainer's cookie: %q", cookie)
	}
	if page := get(t, h, "/r/"+code); !strings.Contains(page.body, "hunter2") {
		t.Fatal("shown as is, the room's page does not show it")
	}
	// A move to another step of the state chosen as is goes through; another state with secrets is held.
	move := func(view string) response {
		req := httptest.NewRequest(http.MethodPost, "/r/"+code+"/move", strings.NewReader(url.Values{"view": {view}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Cookie", strings.Split(cookie, ";")[0])
		req.Header.Set(partialHeader, "1")
		return do(t, h, req)
	}
	if r := move(link + "&step=0&tab=yaml"); r.status != http.StatusOK {
		t.Fatalf("a move through the allowed state: %d %s", r.status, r.body)
	}
	if r := move(stateLink(t, api.State{Manifest: secretYAML + "        - name: API_TOKEN\n          value: s3cr3t-t0ken-value\n"})); r.status != http.StatusConflict {
		t.Fatalf("a move to another state with secrets: %d", r.status)
	}
}

// TestRoomPages: the trainer's view has the room's bar (code, address, QR code, counts) in the
// trainer's browser alone; anyone else's is a learner's own, with the way back; the learners'
// page follows, reloads itself without JavaScript, and is rendered once per move and language
// whatever the number of learners, each answer with its own nonce.
func TestRoomPages(t *testing.T) {
	h, hub, ce := roomServer(t, Config{})
	link := stateLink(t, api.State{Manifest: testkit.Deployment, Steps: roomSteps})
	// Presenter mode offers a room; the playground does not.
	if r := get(t, h, link+"&present=1"); testid(r, "room-bar").AttrOr("data-role", "") != "start" || testid(r, "room-start").Length() != 1 {
		t.Fatalf("presenter mode: %q", testid(r, "room-bar").AttrOr("data-role", ""))
	}
	if r := get(t, h, link); testid(r, "room-bar").Length() != 0 {
		t.Fatal("the playground offers a room")
	}
	req := httptest.NewRequest(http.MethodPost, "/rooms", strings.NewReader(url.Values{"view": {link + "&step=1&present=1"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r := do(t, h, req)
	loc := r.header.Get("Location")
	u, _ := url.Parse(loc)
	code := u.Query().Get("room")
	if r.status != http.StatusSeeOther || code == "" {
		t.Fatalf("start: %d %q", r.status, loc)
	}
	cookie := strings.Split(r.header.Get("Set-Cookie"), ";")[0]
	asTrainer := httptest.NewRequest(http.MethodGet, loc, nil)
	asTrainer.Header.Set("Cookie", cookie)
	r = do(t, h, asTrainer)
	bar := testid(r, "room-bar")
	if bar.AttrOr("data-role", "") != "trainer" || testid(r, "room-code").Text() != displayCode(code) || testid(r, "room-url").Text() != "http://example.com/r/"+code ||
		testid(r, "room-following").Text() != "0" || testid(r, "room-own").Text() != "0" || testid(r, "room-qr").Find("path").AttrOr("d", "") == "" {
		t.Fatalf("the trainer's bar: %s", bar.Text())
	}
	if r := get(t, h, loc); testid(r, "room-bar").AttrOr("data-role", "") != "own" || testid(r, "room-back").AttrOr("href", "") != "/r/"+code {
		t.Fatalf("without the cookie: %q", testid(r, "room-bar").AttrOr("data-role", ""))
	}
	// Learners: many answers, one render per move and kind.
	before := ce.timelines.Load()
	var nonces []string
	for range 5 {
		r := get(t, h, "/r/"+code)
		if r.status != http.StatusOK || testid(r, "room-bar").AttrOr("data-role", "") != "following" {
			t.Fatalf("/r/%s: %d", code, r.status)
		}
		nonce := r.doc.Find(`meta[name="csp-nonce"]`).AttrOr("content", "")
		if nonce == "" || !strings.Contains(r.header.Get("Content-Security-Policy"), "'nonce-"+nonce+"'") || strings.Contains(r.body, "room-nonce-") {
			t.Fatalf("the page's nonce %q is not its answer's: %s", nonce, r.header.Get("Content-Security-Policy"))
		}
		nonces = append(nonces, nonce)
		if vary := strings.Join(r.header.Values("Vary"), ", "); !strings.Contains(vary, "Accept-Language") || !strings.Contains(vary, partialHeader) {
			t.Fatalf("the kept page's Vary: %q", vary)
		}
		if fork := testid(r, "room-fork").AttrOr("href", ""); !strings.Contains(fork, "room="+code) || !strings.Contains(fork, "step=1") {
			t.Fatalf("try it myself: %q", fork)
		}
		// (An HTML parser that runs scripts reads <noscript> as text.)
		if refresh := r.doc.Find("head noscript").Text(); refresh != `<meta http-equiv="refresh" content="10;url=/r/`+code+`?poll=1">` {
			t.Fatalf("the reload without JavaScript: %q", refresh)
		}
	}
	if nonces[0] == nonces[1] {
		t.Fatal("two answers share a nonce")
	}
	if n := ce.timelines.Load() - before; n != 1 {
		t.Fatalf("5 learners' pages took %d renders, want 1", n)
	}
	partial := httptest.NewRequest(http.MethodGet, "/r/"+code, nil)
	partial.Header.Set(partialHeader, "1")
	if r := do(t, h, partial); r.status != http.StatusOK || r.doc.Find("#fragment").Length() != 1 || ce.timelines.Load()-before != 2 {
		t.Fatalf("the fragment: %d, renders %d", r.status, ce.timelines.Load()-before)
	}
	// A move: one more render for everyone.
	moveReq := httptest.NewRequest(http.MethodPost, "/r/"+code+"/move", strings.NewReader(url.Values{"view": {link + "&step=2&present=1&room=" + code}}.Encode()))
	moveReq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	moveReq.Header.Set("Cookie", cookie)
	if r := do(t, h, moveReq); r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "step=2") {
		t.Fatalf("the move without the script: %d %q", r.status, r.header.Get("Location"))
	}
	for range 3 {
		if r := get(t, h, "/r/"+code+"?poll=1"); testid(r, "room-bar").AttrOr("data-step", "") != "2" {
			t.Fatal("the learners' page did not move")
		}
	}
	if n := ce.timelines.Load() - before; n != 3 {
		t.Fatalf("after a move, 3 pages took %d renders in all, want 3", n)
	}
	// Reloads without JavaScript count as following.
	if snap, _ := hub.Get(code); snap.Following != 3 {
		t.Fatalf("3 reloads: following %d", snap.Following)
	}
	// Without the trainer's cookie, no move.
	moveReq = httptest.NewRequest(http.MethodPost, "/r/"+code+"/move", strings.NewReader(url.Values{"view": {link}}.Encode()))
	moveReq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if r := do(t, h, moveReq); r.status != http.StatusForbidden {
		t.Fatalf("a learner's move: %d", r.status)
	}
	if r := get(t, h, "/r/ZZZZ-ZZZZ"); r.status != http.StatusNotFound || !strings.Contains(testid(r, "error-message").Text(), "ZZZZ-ZZZZ") {
		t.Fatalf("no room: %d %s", r.status, testid(r, "error-message").Text())
	}
}

// sseReader reads a room's event stream.
type sseReader struct {
	t    *testing.T
	body io.ReadCloser
	sc   *bufio.Scanner
}

func openStream(t *testing.T, ctx context.Context, srv *httptest.Server, path, cookie string) (*http.Response, *sseReader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res, &sseReader{t: t, body: res.Body, sc: bufio.NewScanner(res.Body)}
}

// next is the next event's name and data.
func (s *sseReader) next() (string, roomEvent) {
	s.t.Helper()
	var name string
	var ev roomEvent
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "" && name != "":
			return name, ev
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	s.t.Fatalf("the stream ended: %v", s.sc.Err())
	return "", ev
}

// TestRoomEvents: each stream is told the room's moves as they happen, the trainer's the counts
// too; a stream outlives the request timeout and is never compressed; a full room refuses a
// learner and serves the rest; the hub's close ends every stream.
func TestRoomEvents(t *testing.T) {
	hub := room.New(room.Limits{Learners: 2}, time.Now)
	// A request timeout already past: any route under it would be cut at once.
	h, _, _ := roomServer(t, Config{Rooms: hub, RequestTimeout: time.Nanosecond})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	link := stateLink(t, api.State{Manifest: testkit.Deployment, Steps: roomSteps})
	q, _ := url.ParseQuery(strings.TrimPrefix(link, "/?"))
	q.Set("step", "1")
	code, token, err := hub.Create(q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	cookie := trainerCookie(code) + "=" + token

	if res, _ := openStream(t, ctx, srv, "/r/"+code+"/events?as=trainer", ""); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a trainer's stream without the token: %d", res.StatusCode)
	}
	res, trainer := openStream(t, ctx, srv, "/r/"+code+"/events?as=trainer", cookie)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" || res.Header.Get("Content-Encoding") != "" {
		t.Fatalf("the stream: %d %q, encoding %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Encoding"))
	}
	if name, ev := trainer.next(); name != "room" || ev.Seq != 1 || ev.Step != 1 || ev.Following == nil || *ev.Following != 0 {
		t.Fatalf("the trainer's first event: %s %+v", name, ev)
	}
	_, follower := openStream(t, ctx, srv, "/r/"+code+"/events", "")
	if name, ev := follower.next(); name != "room" || ev.Seq != 1 || ev.Following != nil {
		t.Fatalf("a learner's first event: %s %+v (no counts for learners)", name, ev)
	}
	if _, ev := trainer.next(); *ev.Following != 1 || *ev.Own != 0 {
		t.Fatalf("after a learner joined: %+v", ev)
	}
	_, own := openStream(t, ctx, srv, "/r/"+code+"/events?as=own", "")
	own.next()
	if _, ev := trainer.next(); *ev.Following != 1 || *ev.Own != 1 {
		t.Fatalf("after a learner went their own way: %+v", ev)
	}
	// The room takes 2 learners: a third is refused, the others stay.
	if res, _ := openStream(t, ctx, srv, "/r/"+code+"/events", ""); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third learner: %d", res.StatusCode)
	}
	q.Set("step", "2")
	if _, err := hub.Move(code, token, q.Encode()); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*sseReader{"follower": follower, "own": own, "trainer": trainer} {
		if _, ev := s.next(); ev.Seq != 2 || ev.Step != 2 {
			t.Fatalf("the %s's event after the move: %+v", name, ev)
		}
	}
	hub.Close()
	for name, s := range map[string]*sseReader{"follower": follower, "own": own, "trainer": trainer} {
		if got, _ := s.next(); got != "end" {
			t.Fatalf("the %s's stream after the close: %q", name, got)
		}
	}
}

func TestIsEventStream(t *testing.T) {
	for path, want := range map[string]bool{
		"/r/k7qm2xd9/events": true, "/r/x/events": true,
		"/r/k7qm2xd9": false, "/r/k7qm2xd9/move": false, "/r/a/b/events": false, "/events": false, "/api/v1/r/x/events": false,
	} {
		if got := isEventStream(path); got != want {
			t.Errorf("isEventStream(%q) = %v", path, got)
		}
	}
}

// TestRoomLimits: a server over its rooms refuses a new one with a clear message and keeps the
// others.
func TestRoomLimits(t *testing.T) {
	h, _, _ := roomServer(t, Config{Rooms: room.New(room.Limits{Rooms: 1}, time.Now)})
	req := api.RoomRequest{ShareRequest: api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment}}}
	made := roomAnswer(t, do(t, h, roomRequest(t, http.MethodPost, "/api/v1/rooms", "", req)), http.StatusCreated)
	r := do(t, h, roomRequest(t, http.MethodPost, "/api/v1/rooms", "", req))
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "runs 1 rooms already") || r.header.Get("Retry-After") == "" {
		t.Fatalf("a room past the limit: %d %s", r.status, r.body)
	}
	if r := get(t, h, "/r/"+made.Code); r.status != http.StatusOK {
		t.Fatalf("the room there: %d", r.status)
	}
}

// TestQRPath: the bar's QR code is the library's bitmap, module for module.
func TestQRPath(t *testing.T) {
	u := "https://lab.example.com/r/k7qm2xd9"
	got := qrOf(u)
	q, err := qrcode.New(u, qrcode.Medium)
	if err != nil {
		t.Fatal(err)
	}
	want := q.Bitmap()
	if got.Size != len(want) {
		t.Fatalf("size %d, want %d", got.Size, len(want))
	}
	drawn := make([][]bool, got.Size)
	for i := range drawn {
		drawn[i] = make([]bool, got.Size)
	}
	for _, m := range regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`).FindAllStringSubmatch(got.Path, -1) {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		for i := range n {
			drawn[y][x+i] = true
		}
	}
	for y := range want {
		for x := range want[y] {
			if drawn[y][x] != want[y][x] {
				t.Fatalf("module (%d,%d): drawn %v, want %v", x, y, drawn[y][x], want[y][x])
			}
		}
	}
	if qrOf(strings.Repeat("x", 4000)).Size != 0 {
		t.Fatal("a URL too long for a QR code got one")
	}
}

// downReplica is a room.Replica whose database does not answer.
type downReplica struct{}

var errDown = errors.New("the database does not answer")

func (downReplica) Create(room.Record) error                      { return errDown }
func (downReplica) Move(string, string, time.Time) (int64, error) { return 0, errDown }
func (downReplica) Allow(string, string) error                    { return errDown }
func (downReplica) Load(string) (room.Record, bool, error)        { return room.Record{}, false, errDown }
func (downReplica) Counts(string, int, int)                       {}
func (downReplica) Shared() bool                                  { return false }

// TestRoomAlone: when the servers share rooms through a database that does not answer, the
// room still works on this server, and its trainer is told that learners elsewhere do not follow.
func TestRoomAlone(t *testing.T) {
	for _, down := range []bool{false, true} {
		hub := room.New(room.Limits{}, time.Now)
		if down {
			hub.Share(downReplica{})
		}
		h, _, _ := roomServer(t, Config{Rooms: hub})
		link := stateLink(t, api.State{Manifest: testkit.Deployment, Steps: roomSteps})
		q, _ := url.ParseQuery(strings.TrimPrefix(link, "/?"))
		code, token, err := hub.Create(q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, link+"&present=1&room="+code, nil)
		req.Header.Set("Cookie", trainerCookie(code)+"="+token)
		r := do(t, h, req)
		if testid(r, "room-bar").AttrOr("data-role", "") != "trainer" || (testid(r, "room-alone").Length() == 1) != down {
			t.Errorf("down %v: role %q, told %q", down, testid(r, "room-bar").AttrOr("data-role", ""), testid(r, "room-alone").Text())
		}
		if r := get(t, h, "/r/"+code); r.status != http.StatusOK {
			t.Errorf("down %v: the learners' page %d", down, r.status)
		}
	}
}

// TestRoomEventsOutliveWriteTimeout: a server's write timeout is for answers; a room's event
// stream, which lives as long as its page, lifts it for itself.
func TestRoomEventsOutliveWriteTimeout(t *testing.T) {
	hub := room.New(room.Limits{}, time.Now)
	h, _, _ := roomServer(t, Config{Rooms: hub})
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = time.Nanosecond // past before any answer is written
	srv.Start()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
	defer cancel()
	code, token, err := hub.Create("s=x&step=1")
	if err != nil {
		t.Fatal(err)
	}
	_, s := openStream(t, ctx, srv, "/r/"+code+"/events", "")
	if _, ev := s.next(); ev.Seq != 1 {
		t.Fatalf("the first event: %+v", ev)
	}
	if _, err := hub.Move(code, token, "s=x&step=2"); err != nil {
		t.Fatal(err)
	}
	if _, ev := s.next(); ev.Seq != 2 || ev.Step != 2 {
		t.Fatalf("the move's event: %+v", ev)
	}
}

// TestRoomHostileInput: what a room's routes are sent that is not what they take is a 4xx that
// says so — a form past --max-body, a view that is no view, a code that is no code, a junk room=
// in a view's address — and the server stays as it was.
func TestRoomHostileInput(t *testing.T) {
	hub := room.New(room.Limits{}, time.Now)
	h, _, _ := roomServer(t, Config{Rooms: hub, MaxBodyBytes: 64 << 10})
	post := func(target string, form url.Values) response {
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return do(t, h, req)
	}
	link := stateLink(t, api.State{Manifest: testkit.Deployment, Steps: roomSteps})
	for _, c := range []struct {
		name   string
		r      response
		status int
	}{
		{"a form past --max-body", post("/rooms", url.Values{"view": {link + "&pad=" + strings.Repeat("x", 70<<10)}}), http.StatusRequestEntityTooLarge},
		{"no view", post("/rooms", url.Values{}), http.StatusBadRequest},
		{"a view that is no state", post("/rooms", url.Values{"view": {"/?s=%%%"}}), http.StatusBadRequest},
		{"a state that does not decode", post("/rooms", url.Values{"view": {"/?s=AAAA"}}), http.StatusBadRequest},
		{"another secrets choice", post("/rooms", url.Values{"view": {link}, "secrets": {"<script>"}}), http.StatusBadRequest},
		{"a path for a code", get(t, h, "/r/..%2F..%2Fetc"), http.StatusNotFound},
		{"a code's events no room has", get(t, h, "/r/zzzzzzzz/events"), http.StatusNotFound},
		{"a move of no room", post("/r/zzzzzzzz/move", url.Values{"view": {link}}), http.StatusForbidden},
	} {
		if c.r.status != c.status {
			t.Errorf("%s: %d, want %d: %.200s", c.name, c.r.status, c.status, c.r.body)
		}
		if strings.Contains(c.r.body, "<script>") {
			t.Errorf("%s: the answer echoes <script>", c.name)
		}
	}
	if hub.Len() != 0 {
		t.Fatalf("hostile requests made %d rooms", hub.Len())
	}
	// A junk room= in a view's address is no room: the page is the view's, with no room bar.
	if r := get(t, h, link+"&room=%3Cscript%3E"); r.status != http.StatusOK || testid(r, "room-bar").Length() != 0 {
		t.Fatalf("a junk room=: %d, room bar %d", r.status, testid(r, "room-bar").Length())
	}
}
