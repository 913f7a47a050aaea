package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// The server's secret the templates below go after: the link store's DSN, which the Helm chart
// puts into the server's environment.
const secretEnv = "SIDECARLAB_POSTGRES"

// withTemplate is an IstioOperator overlay adding the injection template "mine", whose one
// annotation is body (template text); selectMine is the pod annotation that runs it.
func withTemplate(body string) string {
	return "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  values:\n    sidecarInjectorWebhook:\n      templates:\n        mine: |\n" +
		"          metadata:\n            annotations:\n              leak: 'got-" + body + "'\n"
}

var selectMine = []input.Step{{Key: "inject.istio.io/templates", Value: "sidecar,mine"}}

// withInitContainer is an overlay with an istiod init container whose image is text: the one
// value Istio's charts pass through Helm's tpl, so text runs during the render, in the server.
// The values schema has no pilot.initContainers, but unvalidatedValues reach the chart as they are.
func withInitContainer(text string) string {
	return "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  unvalidatedValues:\n    pilot:\n      initContainers:\n      - name: x\n        image: '" + text + "'\n"
}

func istioManifests(t *testing.T) string {
	t.Helper()
	return filepath.Join(testkit.IstioDir(t), "manifests")
}

// templateBudget bounds the work of refusing install options, in bytes the server allocates while
// it answers (doMeasured): a refusal allocates under 1 MiB, a render of the options before the
// refusal 130 MiB or more.
const templateBudget = 16 << 20

// TestHostileInstallOptions: the reproductions of issue 10 — a template that prints the server's
// environment, one that loops for a minute, one that allocates hundreds of MB, a chart directory
// of the server's, a value Helm's tpl runs — each get a 422 that says why, refused before anything
// runs (within templateBudget), by the API, the page's link and a raw output; and a normal request
// works right after. Before the install policy, each of them ran (200, with the secret in the
// page for the first).
func TestHostileInstallOptions(t *testing.T) {
	t.Setenv(secretEnv, canary)
	h := newServer(t)
	cases := []struct {
		name  string
		steps []input.Step
		o     engine.InstallOptions
		field string
		msg   string
	}{
		{"a template printing the environment", selectMine, engine.InstallOptions{Overlay: withTemplate(`{{ env "` + secretEnv + `" "" }}`)},
			"install overlay", "carries template text"},
		{"a template looping for a minute", selectMine, engine.InstallOptions{Overlay: withTemplate(`{{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}`)},
			"install overlay", "carries template text"},
		{"a template allocating 200 MB", selectMine, engine.InstallOptions{Overlay: withTemplate(`{{ $a := repeat 200000000 "x" }}`)},
			"install overlay", "carries template text"},
		{"a template by --set", selectMine, engine.InstallOptions{Set: []string{"values.sidecarInjectorWebhook.templates.mine=metadata: {annotations: {leak: 'got-{{ env \"" + secretEnv + "\" \"\" }}'}}"}},
			`install option "values.sidecarInjectorWebhook.templates.mine=`, "carries template text"},
		{"the server's chart directory", nil, engine.InstallOptions{Set: []string{"installPackagePath=" + istioManifests(t)}},
			`install option "installPackagePath=`, "names a directory on the server"},
		{"a value Helm's tpl runs in the render", nil, engine.InstallOptions{Overlay: withInitContainer(`{{ $a := repeat 200000000 "x" }}busybox`)},
			"install overlay", "carries template text"},
	}
	for _, c := range cases {
		st := api.State{Manifest: testkit.Deployment, Steps: c.steps, Settings: engine.Settings{Install: c.o}}
		body, _ := json.Marshal(api.InjectRequest{Manifest: st.Manifest, Steps: st.Steps, Settings: st.Settings})
		for _, route := range []struct {
			name string
			req  func() *http.Request
		}{
			{"API", func() *http.Request { return rawAPI(string(body)) }},
			{"page", func() *http.Request { return httptest.NewRequest(http.MethodGet, stateLink(t, st), nil) }},
			{"injected.yaml", func() *http.Request {
				return httptest.NewRequest(http.MethodGet, "/injected.yaml?s="+url.QueryEscape(permalink.Encode(st)), nil)
			}},
		} {
			t.Run(c.name+"/"+route.name, func(t *testing.T) {
				r, work := doMeasured(t, h, route.req())
				if work > templateBudget {
					t.Errorf("the refusal allocated %d MiB, want at most %d: the template ran before it was refused", work>>20, templateBudget>>20)
				}
				if r.status != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422: %s", r.status, r.body[:min(300, len(r.body))])
				}
				if !strings.Contains(r.body, c.msg) {
					t.Errorf("the answer does not say %q:\n%s", c.msg, r.body[:min(2000, len(r.body))])
				}
				if strings.Contains(r.body, canary) {
					t.Error("the answer holds the server's secret")
				}
				if route.name == "API" {
					var e api.Error
					if err := json.Unmarshal([]byte(r.body), &e); err != nil || !strings.HasPrefix(e.Error.Field, c.field) {
						t.Errorf("error field %q, want it to start with %q (%v)", e.Error.Field, c.field, err)
					}
				}
				if ok := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})); ok.status != http.StatusOK {
					t.Fatalf("a normal request after it: %d", ok.status)
				}
			})
		}
	}
}

// canary is the secret's value in these tests. It is one value for the whole package, since the
// engine memoises results across tests.
const canary = "canary-7c1e5a09d4b3f286"

// TestNoSecretInAnyOutput: with a canary in the server's environment, no route that renders a
// state — the page, its fragment, the form, the API, every raw output and the repro bundle's
// files, downloads, compare, embed, the batch files, a shared link and its raw files — shows it,
// whatever template function reads the environment (Istio's env, Sprig's env and expandenv) or
// resolves a name (getHostByName), in an injection template or in a value Helm's tpl runs.
func TestNoSecretInAnyOutput(t *testing.T) {
	t.Setenv(secretEnv, canary)
	newServer(t)
	h := New(testLogger(), func() Engine { return eng }, testConfig(Config{Links: newMemLinks()}))
	checkNoSecret(t, h, false, []string{`{{ getHostByName "localhost" }}`})
}

// checkNoSecret requests every route that renders a state, for states whose templates read the
// environment, or call each of resolvers, and fails on any answer that shows the canary or an
// address a template resolved. runs says the server runs such templates (in its workers): then
// each state is shared and its link's routes requested too; a server that refuses them stores no
// share of them (a 422, which must not leak either).
func checkNoSecret(t *testing.T, h http.Handler, runs bool, resolvers []string) {
	t.Helper()
	readers := append([]string{
		`{{ env "` + secretEnv + `" "" }}`,
		`{{ expandenv "$` + secretEnv + `" }}`,
	}, resolvers...)
	var states []api.State
	for _, tmpl := range readers {
		states = append(states,
			api.State{Manifest: testkit.Deployment, Steps: selectMine, Settings: engine.Settings{Install: engine.InstallOptions{Overlay: withTemplate(tmpl)}}},
			api.State{Manifest: testkit.Deployment, Steps: selectMine, Settings: engine.Settings{Mode: engine.ModeWebhook, Install: engine.InstallOptions{
				Set: []string{"values.sidecarInjectorWebhook.templates.mine=metadata: {annotations: {leak: 'got-" + tmpl + "'}}"}}}},
			api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Overlay: withInitContainer(tmpl)}}},
		)
	}
	// What a leak looks like: the secret itself, or a name the template resolved (the templates
	// prefix what they print with "got-"; the state's own text has "got-{{" there).
	leaked := func(body string) string {
		switch {
		case strings.Contains(body, canary):
			return "the secret"
		case strings.Contains(body, "got-1"), strings.Contains(body, "got-:"):
			return "a resolved address"
		}
		return ""
	}
	// The check can fail: leaked() finds the secret and an address where they are.
	if leaked("x: got-"+canary) == "" || leaked("leak: got-127.0.0.1") == "" || leaked("leak: 'got-{{ getHostByName \"localhost\" }}'") != "" {
		t.Fatal("leaked() does not recognise a leak")
	}
	for i, st := range states {
		enc := url.QueryEscape(permalink.Encode(st))
		stepsJSON, _ := json.Marshal(st.Steps)
		form := url.Values{"manifest": {st.Manifest}, "steps": {string(stepsJSON)}, "mode": {string(st.Settings.Mode)},
			"set": {strings.Join(st.Settings.Install.Set, "\n")}, "overlay": {st.Settings.Install.Overlay}}
		apiBody, _ := json.Marshal(api.InjectRequest{Manifest: st.Manifest, Steps: st.Steps, Settings: st.Settings})

		reqs := map[string]*http.Request{
			"page":          httptest.NewRequest(http.MethodGet, "/?s="+enc, nil),
			"fragment":      httptest.NewRequest(http.MethodGet, "/?s="+enc+"&tab=yaml", nil),
			"form":          formRequest(form),
			"form, partial": formRequest(form),
			"API":           rawAPI(string(apiBody)),
			"download":      httptest.NewRequest(http.MethodGet, "/download?s="+enc, nil),
			"compare":       httptest.NewRequest(http.MethodGet, "/compare?a="+enc+"&b="+enc, nil),
			"embed":         httptest.NewRequest(http.MethodGet, "/embed?s="+enc, nil),
		}
		reqs["fragment"].Header.Set(partialHeader, "1")
		reqs["form, partial"].Header.Set(partialHeader, "1")
		for _, raw := range []string{"injected.yaml", "diff.txt", "state.json", "repro.tar.gz", "batch.csv", "batch.md", "batch.json"} {
			reqs[raw] = httptest.NewRequest(http.MethodGet, "/"+raw+"?s="+enc, nil)
		}
		for name, req := range reqs {
			r := do(t, h, req)
			if r.status == http.StatusNotFound || r.status == http.StatusMethodNotAllowed {
				t.Fatalf("state %d, %s: %d, the route was not reached", i, name, r.status)
			}
			if what := leaked(bodyText(t, name, r)); what != "" {
				t.Errorf("state %d, %s (%d): the answer shows %s", i, name, r.status, what)
			}
		}

		// A shared link, and what it serves.
		sr := do(t, h, shareRequest(form))
		if !runs {
			if sr.status != http.StatusUnprocessableEntity || leaked(sr.body) != "" {
				t.Fatalf("state %d: share on a server that refuses its templates: %d (want 422), leak %q", i, sr.status, leaked(sr.body))
			}
			continue
		}
		loc := sr.header.Get("Location")
		if sr.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/s/") {
			t.Fatalf("state %d: share: %d %q", i, sr.status, loc)
		}
		for _, target := range []string{loc, loc + "/injected.yaml", loc + "/diff.txt", loc + "/state.json", loc + "/repro.tar.gz"} {
			r := get(t, h, target)
			if what := leaked(bodyText(t, target, r)); what != "" {
				t.Errorf("state %d, %s (%d): the answer shows %s", i, target, r.status, what)
			}
		}
	}
}

// bodyText is what a person would read in an answer: its body, or every file of a repro bundle.
func bodyText(t *testing.T, name string, r response) string {
	t.Helper()
	if strings.HasSuffix(name, "repro.tar.gz") && r.status == http.StatusOK {
		var all bytes.Buffer
		for f, body := range untar(t, []byte(r.body)) {
			all.WriteString(f + "\n" + body + "\n")
		}
		return all.String()
	}
	return r.body
}
