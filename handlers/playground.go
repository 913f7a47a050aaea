package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

// view is what a GET of the playground asks for: a state and which part of its result to show.
type view struct {
	state State
	tab   string
	// step is the selected timeline row; -1 means none chosen (diffs show every step, the YAML
	// shows the last).
	step int
	// replicas is the pod count typed for the capacity math; 0 means the spec's.
	replicas int
	// present is presenter mode: large type, one step's diff per slide.
	present bool
	// query is the annotation panel's search (the page without JavaScript filters on the server).
	query string
	// cols are the batch table's chosen columns (batchColumns' ids); nil means the default ones.
	cols []string
	// limit is how many documents' changes the page shows; 0 means defaultLimit.
	limit int
	// nsForm is the settings' namespace group as posted when it could not be read: the page
	// shows it again with its error (422), and the state has no namespace until it is fixed.
	nsForm *web.NamespaceForm
}

// defaultLimit is how many documents a page shows at first, and how many more "show more" adds.
// A step shows at most changesPerDoc × the limit changes and linesPerDoc × the limit lines of
// its unified diff; the raw outputs have everything.
const (
	defaultLimit  = 50
	maxLimit      = 100_000
	changesPerDoc = 4
	linesPerDoc   = 40
)

// docLimit is how many documents the view shows.
func (v view) docLimit() int {
	if v.limit > 0 {
		return v.limit
	}
	return defaultLimit
}

func (v view) permalink() string {
	return v.linkWith(EncodeState(v.state), v.tab, v.step)
}

// linkWith builds the URL of the view's state (already encoded, since encoding is the costly
// part and one page links to the same state many times) with a tab and a step.
func (v view) linkWith(encoded, tab string, step int) string {
	q := url.Values{}
	q.Set("s", encoded)
	if tab != "" && tab != web.DefaultTab {
		q.Set("tab", tab)
	}
	if step >= 0 {
		q.Set("step", strconv.Itoa(step))
	}
	if v.replicas > 0 {
		q.Set("replicas", strconv.Itoa(v.replicas))
	}
	if v.present {
		q.Set("present", "1")
	}
	if v.query != "" {
		q.Set("q", v.query)
	}
	if v.cols != nil {
		q.Set("cols", strings.Join(v.cols, ","))
	}
	if v.limit > 0 {
		q.Set("limit", strconv.Itoa(v.limit))
	}
	return "/?" + q.Encode()
}

func defaultState() State {
	p := web.Presets()[0]
	return State{Version: StateVersion, Istio: engine.Version().Istio, Manifest: p.Manifest}
}

// readView reads the state and view from a GET's query. No state means the default preset.
func readView(r *http.Request) (view, error) {
	q := r.URL.Query()
	v := view{state: defaultState(), tab: q.Get("tab"), step: -1}
	if s := q.Get("s"); s != "" {
		st, err := DecodeState(s)
		if err != nil {
			return v, err
		}
		v.state = st
	}
	if !validTab(v.tab) {
		v.tab = web.DefaultTab
	}
	if s := q.Get("step"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return v, httpError{status: http.StatusBadRequest, id: "errors.form.step", args: []any{"Param", "step"}}
		}
		v.step = n
	}
	v.present = q.Get("present") == "1"
	v.query = cleanQuery(q.Get("q"))
	if v.present && v.step < 0 {
		v.step = firstSlide(v.state) // a presentation starts at the first slide
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLimit {
			return v, httpError{status: http.StatusBadRequest, id: "errors.form.limit", args: []any{"Param", "limit"}}
		}
		v.limit = n
	}
	if s := q.Get("replicas"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10_000_000 {
			return v, httpError{status: http.StatusBadRequest, id: "errors.form.replicas", args: []any{"Param", "replicas"}}
		}
		v.replicas = n
	}
	if c, ok := q["cols"]; ok {
		v.cols = readCols(c)
	}
	return v, nil
}

func validTab(t string) bool {
	for _, x := range web.Tabs() {
		if x.ID == t {
			return true
		}
	}
	return false
}

// partialHeader marks the page script's requests: they get only the regions that change.
const partialHeader = "X-Sidecarlab-Partial"

// heldHeader carries the keys of the kept regions the page's script already shows (the diff
// tab's steps, the lab strip and the settings, each one's data-key): a fragment sends those
// regions as placeholders (web.Page.Held, web.Kept).
const heldHeader = "X-Sidecarlab-Held"

// maxHeld is how many keys of heldHeader are read (a page shows at most one step per annotation
// change, the lab strip and the settings); a key longer than web.MaxKey is no key.
const (
	maxHeld      = 64
	maxHeldBytes = maxHeld * (web.MaxKey + 1)
)

// readHeld reads heldHeader: at most maxHeld keys, nothing from a header longer than that many
// keys can take.
func readHeld(r *http.Request) map[string]bool {
	v := r.Header.Get(heldHeader)
	if v == "" || len(v) > maxHeldBytes {
		return nil
	}
	held := map[string]bool{}
	for _, k := range strings.Fields(v) {
		if len(k) <= web.MaxKey && len(held) < maxHeld {
			held[k] = true
		}
	}
	return held
}

// handlePlayground renders the page for a permalink. A manifest Istio rejects is shown with its
// errors and a 422; the link still reproduces exactly that view.
func (s *server) handlePlayground() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		v, err := readView(r)
		if err != nil {
			return err
		}
		if err := s.renderView(w, r, v); err != nil {
			return withForm{err: err, form: formOf(v)}
		}
		return nil
	})
}

// renderView injects the view's state and renders the page, or only the regions that change
// when the page's script asks (partialHeader). Its address carries the state, so it warns when
// that gives away values that look secret (linkSecretsBanner).
func (s *server) renderView(w http.ResponseWriter, r *http.Request, v view) error {
	return s.renderViewWith(w, r, v, s.linkSecretsBanner(explain.For(r.Context()), v))
}

// pageExtras are what a caller may add to a rendered view: a short link, a banner.
type pageExtras struct {
	shortLink, banner string
}

func (s *server) renderViewWith(w http.ResponseWriter, r *http.Request, v view, extra func(*pageExtras, *engine.Timeline)) error {
	tl, err := s.timeline(r.Context(), v.state)
	var ie *engine.InputError
	if err != nil && !errors.As(err, &ie) {
		return err
	}
	partial := r.Header.Get(partialHeader) != ""
	p, err := buildPage(r.Context(), i18n.FromContext(r.Context()), v, s.statics, tl, ie, !partial)
	if err != nil {
		return err
	}
	p.Cluster = s.clusterChoices(r.Context(), i18n.FromContext(r.Context()))
	title, _ := p.Head.In(i18n.FromContext(r.Context()))
	p.EmbedSnippet = embedSnippet(s.origin(r), p.EmbedHref, title)
	p.Sharing = s.cfg.Links != nil
	if extra != nil {
		var x pageExtras
		extra(&x, tl)
		p.ShortLink = x.shortLink
		if x.banner != "" {
			p.Banner = x.banner
		}
	}
	if ie == nil && tl != nil {
		if err := s.addAdmission(r.Context(), v, p); err != nil {
			return err
		}
	}
	status := http.StatusOK
	if p.Outcome = outcome(v, tl, ie); p.Outcome != "" {
		status = http.StatusUnprocessableEntity
	}
	w.Header().Add("Vary", partialHeader+", "+heldHeader)
	if partial {
		p.Held = readHeld(r)
		return render(w, r, status, web.Fragment(p))
	}
	return render(w, r, status, web.PlaygroundPage(p))
}

// outcome is what a view that is not OK says in the page script's status line (web.Page.Outcome),
// "" for one that is: a namespace that could not be read, a manifest with nothing in it (the
// engine's manifest-empty: only blanks), a request refused as a whole, documents Istio rejected.
func outcome(v view, tl *engine.Timeline, ie *engine.InputError) string {
	switch {
	case v.nsForm != nil:
		return web.OutcomeNamespace
	case ie != nil && ie.ID == "manifest-empty":
		return web.OutcomeEmpty
	case ie != nil:
		return web.OutcomeRefused
	case tl != nil && len(tl.Steps[len(tl.Steps)-1].Errors()) > 0:
		return web.OutcomeRejected
	}
	return ""
}

// handleForm applies what the person did (add an annotation, remove a step, load a preset,
// apply) and redirects to the permalink of the new state: POST, then 303, then GET — so the page
// works without JavaScript and every view is a link.
func (s *server) handleForm() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		v, err := s.formView(w, r)
		if v.nsForm != nil {
			// A namespace that cannot be read is shown again in the form, with its error (422).
			return s.renderView(w, r, v)
		}
		if err != nil {
			return err
		}
		if r.Header.Get(partialHeader) != "" {
			// The page's script answers the action in place and puts the fragment's permalink in
			// the address bar itself: one request instead of a redirect and a second one. It does
			// so only for a fragment; an error leaves the address bar and the editor alone.
			return s.renderView(w, r, v)
		}
		// A link is handed out only for a state that loads: the redirect's GET finds the
		// timeline in the engine's memo. A state that cannot be shown (too slow, the server
		// busy) is answered here with its error and the form, so the text is not lost.
		var ie *engine.InputError
		if _, err := s.timeline(r.Context(), v.state); err != nil && !errors.As(err, &ie) {
			return withForm{err: err, form: formOf(v)}
		}
		http.Redirect(w, r, web.CarryLang(r.Context(), v.permalink()), http.StatusSeeOther)
		return nil
	})
}

// formView reads the posted form and applies the action the person took (formActions).
func (s *server) formView(w http.ResponseWriter, r *http.Request) (view, error) {
	f, err := s.readForm(w, r)
	if err != nil {
		return view{}, err
	}
	st, err := s.formState(r, f)
	if err != nil {
		return view{}, err
	}
	ns, nsErr := readNamespace(f)
	if name := f.Get("clusterNamespace"); name != "" {
		// A namespace of this cluster replaces what the group's fields held.
		ns, nsErr = s.clusterNamespace(r.Context(), name)
		if he := (httpError{}); errors.As(nsErr, &he) {
			return view{}, nsErr
		}
	}
	if nsErr == nil {
		st.Settings.Namespace = ns
	}
	if js := f.Get("steps"); js != "" {
		if err := json.Unmarshal([]byte(js), &st.Steps); err != nil {
			return view{}, httpError{status: http.StatusBadRequest, id: "errors.form.steps"}
		}
	}
	v := view{state: st, tab: f.Get("tab"), step: -1, query: cleanQuery(f.Get("q"))}
	if c, ok := f["cols"]; ok {
		v.cols = readCols(c)
	}
	if nsErr != nil {
		// Nothing else is done: the person's text comes back with the error, beside its field
		// (handleForm); a caller that only wants the state (Share) gets the error.
		v.nsForm = postedNamespaceForm(i18n.FromContext(r.Context()), f, nsErr)
		if !validTab(v.tab) {
			v.tab = ""
		}
		return v, withForm{err: nsErr, form: formOf(v)}
	}
	for _, a := range formActions {
		if !a.pressed(f) {
			continue
		}
		if err := a.do(&v, f, r); err != nil {
			return view{}, err
		}
		if a.tab != "" {
			v.tab = a.tab
		}
		break
	}
	if !validTab(v.tab) {
		v.tab = ""
	}
	return v, nil
}

// readForm reads the posted form, within the body's limit. Every field must be text: a
// permalink's JSON would silently turn other bytes into U+FFFD.
func (s *server) readForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(s.cfg.MaxBodyBytes)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, mbe
		}
		return nil, httpError{status: http.StatusBadRequest, id: "errors.form.unreadable"}
	}
	f := r.PostForm
	for _, field := range slices.Sorted(maps.Keys(f)) {
		for _, val := range f[field] {
			if at := invalidUTF8At(val); at >= 0 {
				return nil, &engine.InputError{Field: shortName(field), Line: 1 + strings.Count(val[:at], "\n"),
					Msg: i18n.FromContext(r.Context()).T("errors.input.not-utf8")}
			}
		}
	}
	return f, nil
}

// formState is the state the form's editor and settings hold, in canonical form, before the
// namespace group and the steps are read.
func (s *server) formState(r *http.Request, f url.Values) (State, error) {
	st := State{
		Version:  StateVersion,
		Istio:    engine.Version().Istio,
		Manifest: f.Get("manifest"),
		Settings: engine.Settings{
			Mode:              engine.Mode(f.Get("mode")),
			KubernetesVersion: strings.TrimSpace(f.Get("kubernetesVersion")),
			Install: engine.InstallOptions{
				Set:     splitLines(f.Get("set")),
				Overlay: f.Get("overlay"),
			},
		},
	}
	if err := readMesh(f, &st.Settings.Install); err != nil {
		return State{}, err
	}
	// This cluster's mesh, chosen in the settings, replaces the one the form carried.
	if err := s.clusterMesh(r.Context(), f.Get("clusterMesh"), &st.Settings.Install); err != nil {
		return State{}, err
	}
	return st.canonical(), nil
}

// formAction is one thing a button of the form does: the button is the field it posts (name)
// and, for a button of the "action" field, its value; tab is the tab the result is shown on (""
// keeps the posted one); do changes the view and its state.
type formAction struct {
	name, value string
	tab         string
	do          func(v *view, f url.Values, r *http.Request) error
}

// pressed says the form was posted by the action's button: its field has the action's value,
// or, for an action with none, any value.
func (a formAction) pressed(f url.Values) bool {
	if a.value == "" {
		return f.Get(a.name) != ""
	}
	return f.Get(a.name) == a.value
}

// formActions are what the form's buttons do, the first pressed one taken. A form posted by
// another button ("apply", "share", the panel's "filter" without JavaScript) is its state as
// it is, on the posted tab.
var formActions = []formAction{
	// The proxy.istio.io/config editor: one field merged into the annotation's current value.
	{name: "pcset", tab: "diff", do: func(v *view, f url.Values, _ *http.Request) error {
		step, err := configFieldStep(v.state, f.Get("pcset"), f.Get("pc:"+f.Get("pcset")))
		if err != nil {
			return err
		}
		v.state.Steps = append(v.state.Steps, step)
		return nil
	}},
	// An annotation of the panel, set to the value typed beside it.
	{name: "add", tab: "diff", do: func(v *view, f url.Values, _ *http.Request) error {
		key := f.Get("add")
		v.state.Steps = append(v.state.Steps, engine.Step{Key: key, Value: strings.ReplaceAll(f.Get("v:"+key), "\r\n", "\n")})
		return nil
	}},
	{name: "unset", tab: "diff", do: func(v *view, f url.Values, _ *http.Request) error {
		v.state.Steps = append(v.state.Steps, engine.Step{Key: f.Get("unset"), Remove: true})
		return nil
	}},
	// A step of the timeline taken out, by its row (1 is the first step after injection's).
	{name: "remove", tab: "timeline", do: func(v *view, f url.Values, _ *http.Request) error {
		steps := v.state.Steps
		k, err := strconv.Atoi(f.Get("remove"))
		if err != nil || k < 1 || k > len(steps) {
			return httpError{status: http.StatusBadRequest, id: "errors.form.no-step"}
		}
		v.state.Steps = append(steps[:k-1:k-1], steps[k:]...)
		return nil
	}},
	// A pitfall's fix: the steps its button carries, as JSON.
	{name: "fix", tab: "pitfalls", do: func(v *view, f url.Values, _ *http.Request) error {
		var fix []engine.Step
		if err := json.Unmarshal([]byte(f.Get("fix")), &fix); err != nil {
			return httpError{status: http.StatusBadRequest, id: "errors.form.fix"}
		}
		v.state.Steps = append(v.state.Steps, fix...)
		return nil
	}},
	// A fix that changes the settings (a namespace label, an install option) or, for the label
	// instead of the annotation, the manifest.
	{name: "clusterfix", tab: web.ClusterTab, do: func(v *view, f url.Values, _ *http.Request) error {
		return applyClusterFix(f.Get("clusterfix"), &v.state)
	}},
	// The pod count the capacity math multiplies by.
	{name: "action", value: "capacity", tab: "lifecycle", do: func(v *view, f url.Values, _ *http.Request) error {
		v.replicas = atoiOr(f.Get("replicas"), 0)
		if v.replicas < 1 || v.replicas > 10_000_000 {
			return httpError{status: http.StatusBadRequest, id: "errors.form.pods"}
		}
		return nil
	}},
	// Files uploaded for the batch table: they replace the editor's manifest.
	{name: "action", value: "upload", tab: "batch", do: func(v *view, _ url.Values, r *http.Request) error {
		manifest, err := uploadedManifest(r)
		if err != nil {
			return err
		}
		v.state.Manifest = manifest
		return nil
	}},
	// "Apply these steps to my manifest": the lab's annotations, one step each, on the manifest
	// in the editor.
	{name: "action", value: "lab-steps", tab: "diff", do: func(v *view, _ url.Values, _ *http.Request) error {
		v.state.Steps = labSteps()
		return nil
	}},
	// A preset's manifest in the editor; an unknown preset changes nothing.
	{name: "action", value: "preset", do: func(v *view, f url.Values, _ *http.Request) error {
		if p, ok := web.FindPreset(f.Get("preset")); ok {
			v.state.Manifest = p.Manifest
		}
		return nil
	}},
}

// uploadedManifest joins the uploaded files into one multi-document manifest, in the order given.
func uploadedManifest(r *http.Request) (string, error) {
	if r.MultipartForm == nil || len(r.MultipartForm.File["files"]) == 0 {
		return "", httpError{status: http.StatusBadRequest, id: "errors.form.no-files"}
	}
	var parts []string
	for _, fh := range r.MultipartForm.File["files"] {
		f, err := fh.Open()
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return "", err
		}
		if at := invalidUTF8At(string(b)); at >= 0 {
			return "", &engine.InputError{Field: "file " + shortName(fh.Filename), Line: 1 + bytes.Count(b[:at], []byte("\n")),
				Msg: i18n.FromContext(r.Context()).T("errors.input.not-utf8")}
		}
		parts = append(parts, strings.TrimSuffix(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")+"\n")
	}
	return strings.Join(parts, "---\n"), nil
}

// invalidUTF8At is the byte offset of the first byte of s that is not UTF-8, or -1.
func invalidUTF8At(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				return i
			}
		}
	}
	return -1
}

// shortName is a name the person gave (a form field, a file name) as an error may echo it: at
// most 64 bytes of valid UTF-8, quoted unless it is a plain name like "manifest".
func shortName(s string) string {
	if plainName.MatchString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "?")
	if len(s) > 64 {
		s = strings.ToValidUTF8(s[:64], "") + "…"
	}
	return strconv.Quote(s)
}

var plainName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,31}$`)

// cleanQuery is the panel's search as a link carries it: trimmed, at most maxQuery bytes of UTF-8.
func cleanQuery(q string) string {
	q = strings.TrimSpace(q)
	if len(q) > maxQuery {
		q = strings.ToValidUTF8(q[:maxQuery], "")
	}
	return q
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return n
}

// handleDownload serves one step's injected YAML as a file.
func (s *server) handleDownload() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		v, tl, err := s.viewTimeline(r)
		if err != nil {
			return err
		}
		if err := rejected(tl, v.step); err != nil {
			return err
		}
		step := selectedStep(v.step, len(tl.Steps))
		w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="injected.yaml"`)
		_, err = w.Write([]byte(tl.Steps[step].Output()))
		return err
	})
}

// viewTimeline reads the view of a GET and runs its timeline; a rejected state is an error.
func (s *server) viewTimeline(r *http.Request) (view, *engine.Timeline, error) {
	v, err := readView(r)
	if err != nil {
		return v, nil, err
	}
	tl, err := s.timeline(r.Context(), v.state)
	return v, tl, err
}

// firstSlide is where a presentation starts: the first annotation's step, or the manifest as
// injected (step 0) when there are no annotations. Step 0 stays one ← away.
func firstSlide(st State) int {
	if len(st.Steps) > 0 {
		return 1
	}
	return 0
}

func selectedStep(step, n int) int {
	if step < 0 || step >= n {
		return n - 1
	}
	return step
}

// renderBuffers are render's buffers, used again: growing a new one to a page's size was most of
// what rendering allocated. One that grew beyond maxRenderBuffer (a large page) is let go, so
// the pool holds no more than that a buffer.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxRenderBuffer = 256 << 10

// render writes a component after it rendered completely, so a failure is still a clean error.
func render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxRenderBuffer {
			buf.Reset()
			renderBuffers.Put(buf)
		}
	}()
	if err := c.Render(r.Context(), buf); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
