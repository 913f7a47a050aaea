package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/room"
	"github.com/sidecarlab/sidecarlab/web"
)

// view is what a GET of the playground asks for: a state and which part of its result to show.
type view struct {
	state api.State
	tab   string
	// step is the selected timeline row; -1 means none chosen (diffs show every step, the YAML
	// shows the last).
	step int
	// replicas is the pod count typed for the capacity math; 0 means the spec's.
	replicas int
	// present is presenter mode: large type, one step's diff per slide.
	present bool
	// room is the code of the room the view belongs to (room.NormalizeCode's), "" for none: the
	// trainer's view shows the room's bar, a learner's a way back to it.
	room string
	// query is the annotation panel's search (the page without JavaScript filters on the server).
	query string
	// cols are the batch table's chosen columns (batchColumns' ids); nil means the default ones.
	cols []string
	// limit is how many documents' changes the page shows; 0 means defaultLimit.
	limit int
	// nodes is the cluster's node count for the batch table's ztunnel share; 0 means
	// engine.DefaultAmbientNodes.
	nodes int
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
	// yamlPerDoc is how much of the injected YAML the page shows per document it shows: a
	// Deployment injected is about 7 KiB; a List of many Pods is one document.
	yamlPerDoc = 16 << 10
)

// docLimit is how many documents the view shows.
func (v view) docLimit() int {
	if v.limit > 0 {
		return v.limit
	}
	return defaultLimit
}

func (v view) permalink() string {
	return v.linkWith(permalink.Encode(v.state), v.tab, v.step)
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
	if v.room != "" {
		q.Set("room", v.room)
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
	if v.nodes > 0 {
		q.Set("nodes", strconv.Itoa(v.nodes))
	}
	return "/?" + q.Encode()
}

func defaultState() api.State {
	p := web.Presets()[0]
	return api.State{Version: permalink.Version, Istio: engine.Version().Istio, Manifest: p.Manifest}
}

// readView reads the state and view from a GET's query. No state means the default preset.
func readView(r *http.Request) (view, error) {
	return readViewQuery(r.URL.Query())
}

// readViewQuery reads the state and view from a query (a GET's, or a room's view).
func readViewQuery(q url.Values) (view, error) {
	v := view{state: defaultState(), tab: q.Get("tab"), step: -1}
	if s := q.Get("s"); s != "" {
		st, err := decodeState(s)
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
	v.room = room.NormalizeCode(q.Get("room"))
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
	n, err := batchNodes(q.Get("nodes"))
	if err != nil {
		return v, err
	}
	v.nodes = n
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

// cleanQuery is the panel's search as a link carries it: trimmed, at most web.MaxQuery bytes of UTF-8.
func cleanQuery(q string) string {
	q = strings.TrimSpace(q)
	if len(q) > web.MaxQuery {
		q = strings.ToValidUTF8(q[:web.MaxQuery], "")
	}
	return q
}

// yamlShare is an injected output cut to what lim documents may show of it, yamlPerDoc each (at
// a line's end), and whether it was cut: a document may hold many objects (a List of a thousand
// Pods is one document), so the output is bounded by bytes, not only by documents.
func yamlShare(out string, lim int) (string, bool) {
	budget := yamlPerDoc * lim
	if len(out) <= budget {
		return out, false
	}
	return out[:strings.LastIndexByte(out[:budget], '\n')+1], true
}

// decodeState reads a permalink's state (permalink.Decode) and checks its namespace as the API
// server would: a link made by hand with a namespace it refuses is a 422 naming the field.
func decodeState(text string) (api.State, error) {
	s, err := permalink.Decode(text)
	if err != nil {
		return s, err
	}
	if err := checkNamespace(s.Settings.Namespace); err != nil {
		return s, err
	}
	return s, nil
}

// decodeStateJSON is decodeState of a short link's JSON (permalink.DecodeJSON).
func decodeStateJSON(js []byte) (api.State, error) {
	s, err := permalink.DecodeJSON(js)
	if err != nil {
		return s, err
	}
	if err := checkNamespace(s.Settings.Namespace); err != nil {
		return s, err
	}
	return s, nil
}

// stateErrorIn words a link that cannot be read in l's language.
func stateErrorIn(l *i18n.Localizer, e permalink.Error) string {
	return l.T("errors.state.unreadable", "Reason", words(l, e.ID, e.Args))
}

// stateSize is what a state carries that a person typed: the manifest, the steps and the install
// options — what a POST of it would carry.
func stateSize(s api.State) int64 {
	in := s.Settings.Install
	n := len(s.Manifest) + len(in.Overlay) + len(s.Settings.KubernetesVersion) + len(s.Settings.Mode) +
		len(in.Mesh.InjectorConfig) + len(in.Mesh.Values) + len(in.Mesh.MeshConfig) + len(in.Mesh.Webhooks) + len(in.Revision)
	for _, v := range s.Settings.Install.Set {
		n += len(v)
	}
	for _, st := range s.Steps {
		n += len(st.Key) + len(st.Value)
	}
	n += len(s.Settings.Namespace.Name)
	for k, v := range s.Settings.Namespace.Labels {
		n += len(k) + len(v)
	}
	return int64(n)
}
