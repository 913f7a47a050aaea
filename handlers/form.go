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
	"unicode/utf8"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/room"
	"github.com/sidecarlab/sidecarlab/web"
)

// handleForm applies what the person did (add an annotation, remove a step, load a preset,
// apply) and redirects to the permalink of the new state: POST, then 303, then GET — so the page
// works without JavaScript and every view is a link.
func (s *server) handleForm() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
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
		var ie *input.Error
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
	v := view{state: st, tab: f.Get("tab"), step: -1, query: cleanQuery(f.Get("q")), room: room.NormalizeCode(f.Get("room"))}
	if c, ok := f["cols"]; ok {
		v.cols = readCols(c)
	}
	if v.nodes, err = batchNodes(f.Get("nodes")); err != nil {
		return view{}, err
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
				return nil, &input.Error{Field: shortName(field), Line: 1 + strings.Count(val[:at], "\n"),
					Msg: i18n.FromContext(r.Context()).T("errors.input.not-utf8")}
			}
		}
	}
	return f, nil
}

// formState is the state the form's editor and settings hold, in canonical form, before the
// namespace group and the steps are read.
func (s *server) formState(r *http.Request, f url.Values) (api.State, error) {
	st := api.State{
		Version:  permalink.Version,
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
		return api.State{}, err
	}
	// This cluster's mesh, chosen in the settings, replaces the one the form carried.
	if err := s.clusterMesh(r.Context(), f.Get("clusterMesh"), &st.Settings.Install); err != nil {
		return api.State{}, err
	}
	return canonical(st), nil
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
		v.state.Steps = append(v.state.Steps, input.Step{Key: key, Value: strings.ReplaceAll(f.Get("v:"+key), "\r\n", "\n")})
		return nil
	}},
	{name: "unset", tab: "diff", do: func(v *view, f url.Values, _ *http.Request) error {
		v.state.Steps = append(v.state.Steps, input.Step{Key: f.Get("unset"), Remove: true})
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
		var fix []input.Step
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
			return "", &input.Error{Field: "file " + shortName(fh.Filename), Line: 1 + bytes.Count(b[:at], []byte("\n")),
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

// formOf is the view's state as the form shows it.
func formOf(v view) web.Form {
	st := v.state
	nsForm := namespaceForm(st.Settings.Namespace)
	if v.nsForm != nil {
		nsForm = *v.nsForm
	}
	stepsJSON, _ := json.Marshal(st.Steps)
	if len(st.Steps) == 0 {
		stepsJSON = []byte("[]")
	}
	mesh, meshRev, meshIstio, meshOther := meshForm(st.Settings.Install)
	return web.Form{
		Mesh:               mesh,
		MeshRevision:       meshRev,
		MeshIstioTemplates: meshIstio,
		MeshOtherIstio:     meshOther,
		MeshEmbedded:       st.Settings.Install.Mesh.Embedded(),
		MeshInstalledBy:    st.Settings.Install.Mesh.Istio,
		Manifest:           st.Manifest,
		StepsJSON:          string(stepsJSON),
		Mode:               string(st.Settings.Mode),
		KubernetesVersion:  st.Settings.KubernetesVersion,
		Set:                strings.Join(st.Settings.Install.Set, "\n"),
		Overlay:            st.Settings.Install.Overlay,
		Tab:                v.tab,
		Step:               v.step,
		Cols:               v.cols,
		Nodes:              v.nodes,
		Namespace:          nsForm,
	}
}
