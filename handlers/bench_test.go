package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/kube/inject"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// newBare is Istio's injector with nothing of ours: the default installation's ConfigMaps parsed
// as istioctl parses them, and one document through IntoObject.
func newBare(b *testing.B) func(raw []byte) {
	in, err := eng.Install(context.Background(), engine.InstallOptions{})
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := inject.UnmarshalConfig([]byte(in.InjectorConfig))
	if err != nil {
		b.Fatal(err)
	}
	templates, err := inject.ParseTemplates(cfg.RawTemplates)
	if err != nil {
		b.Fatal(err)
	}
	values, err := inject.NewValuesConfig(in.Values)
	if err != nil {
		b.Fatal(err)
	}
	mc, err := mesh.ApplyMeshConfig(in.MeshConfigYAML, mesh.DefaultMeshConfig())
	if err != nil {
		b.Fatal(err)
	}
	return func(raw []byte) {
		obj, err := inject.FromRawToObject(raw)
		if err != nil {
			b.Fatal(err)
		}
		out, err := inject.IntoObject(nil, templates, values, "", mc, obj, func(string) {})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := yaml.Marshal(out); err != nil {
			b.Fatal(err)
		}
	}
}

var toggleSeq atomic.Int64

// BenchmarkToggleRoundTrip is what a person's click costs with JavaScript on, over HTTP on
// loopback: the form POST that adds one annotation (a new value each time, so nothing is
// memoised), answered with the regions that changed and their permalink, the regions the page
// holds sent as placeholders — against one bare inject.IntoObject of the same Deployment.
// Goal (issue 12): ≤ 1.2×.
func BenchmarkToggleRoundTrip(b *testing.B) {
	h := newServer(&testing.T{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	bare := newBare(b)
	base := []input.Step{{Key: "sidecar.istio.io/proxyMemory", Value: "256Mi"}}
	steps, _ := json.Marshal(base)
	client := srv.Client()
	// The page before the click: its kept regions (the lab strip, the settings, the diff tab's
	// steps), whose keys the script sends.
	before := get(&testing.T{}, h, view{state: api.State{Manifest: testkit.Deployment, Steps: base}, step: -1}.permalink())
	held := heldKeys(before.body)
	if len(held) != 4 {
		b.Fatalf("the page before the click holds %d regions, want 4", len(held))
	}
	var roundTrip, one time.Duration
	var bytes int64
	for b.Loop() {
		form := url.Values{"manifest": {testkit.Deployment}, "steps": {string(steps)}, "add": {"sidecar.istio.io/proxyCPU"},
			"v:sidecar.istio.io/proxyCPU": {fmt.Sprintf("%dm", 100+toggleSeq.Add(1))}}
		t0 := time.Now()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(partialHeader, "1") // as the page's script sends it: answered in place
		req.Header.Set(heldHeader, strings.Join(held, " "))
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
		t1 := time.Now()
		bare([]byte(testkit.Deployment))
		roundTrip += t1.Sub(t0)
		one += time.Since(t1)
		bytes += n
	}
	b.ReportMetric(float64(roundTrip.Microseconds())/float64(b.N), "roundtrip-µs")
	b.ReportMetric(float64(one.Microseconds())/float64(b.N), "bare-inject-µs")
	b.ReportMetric(float64(roundTrip)/float64(one), "roundtrip/inject")
	b.ReportMetric(float64(bytes)/float64(b.N), "page-bytes")
}

// BenchmarkLargePage is the playground page of 500 Deployments (a 120 KB manifest) from its
// link, after the first load (the timeline is memoised, so this is building and rendering the
// page): its size and time. limit=500 shows every document (still at most 2,000 changes and 20,000 diff lines a step).
func BenchmarkLargePage(b *testing.B) {
	h := newServer(&testing.T{})
	link := "/?s=" + permalink.Encode(api.State{Manifest: manyDeployments(500)})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, link, nil)) // the timeline, once
	for _, c := range []struct{ name, query string }{{"first-50", ""}, {"all-500", "&limit=500"}} {
		b.Run(c.name, func(b *testing.B) {
			var n int
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, link+c.query, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
				n = rec.Body.Len()
			}
			b.ReportMetric(float64(n), "page-bytes")
		})
	}
}

var unitSeq atomic.Int64

// BenchmarkUnitTime measures what one unit of estimated work (engine.Cost.Units) takes through
// a whole request, cold (each request's manifest is new, so nothing is memoised), on the routes
// that do the most per unit — the page, the API (every row's output and changes), the unified
// diff — for many small documents, for a List of as many items, and for few documents through
// many steps. unitTime, which sets the unit limit from --request-timeout, is the slowest of
// these with a margin (BENCHMARKS.md, "The unit limit").
func BenchmarkUnitTime(b *testing.B) {
	h := newServer(&testing.T{})
	steps := make([]input.Step, 9)
	for i := range steps {
		steps[i] = input.Step{Key: "sidecar.istio.io/proxyCPU", Value: fmt.Sprintf("%dm", 100+i)}
	}
	inputs := []struct {
		name     string
		manifest string
		steps    []input.Step
	}{
		{"200-pods", testkit.Pods(200, 0), nil},
		{"list-of-200", testkit.PodList(200), nil},
		{"20-pods-9-steps", testkit.Pods(20, 0), steps},
	}
	routes := []struct {
		name string
		req  func(st api.State) *http.Request
	}{
		{"page", func(st api.State) *http.Request {
			return httptest.NewRequest(http.MethodGet, "/?s="+permalink.Encode(st), nil)
		}},
		{"api", func(st api.State) *http.Request { return boundJSON("/api/v1/inject", st) }},
		{"diff", func(st api.State) *http.Request {
			return httptest.NewRequest(http.MethodGet, "/diff.txt?unified=1&s="+permalink.Encode(st), nil)
		}},
	}
	for _, in := range inputs {
		for _, rt := range routes {
			b.Run(in.name+"/"+rt.name, func(b *testing.B) {
				var units int64
				for b.Loop() {
					st := api.State{Manifest: fmt.Sprintf("%s\n# %d\n", in.manifest, unitSeq.Add(1)), Steps: in.steps}
					b.StopTimer()
					c, err := eng.Estimate(context.Background(), []byte(st.Manifest), st.Steps, st.Settings)
					if err != nil {
						b.Fatal(err)
					}
					units += c.Units
					b.StartTimer()
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, rt.req(st))
					if rec.Code != http.StatusOK {
						b.Fatalf("status %d: %.300s", rec.Code, rec.Body.String())
					}
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(units), "ms/unit")
			})
		}
	}
}

var meshSeq atomic.Int64

// BenchmarkPastedMesh is what one API request with a pasted mesh costs, cold (a new manifest each
// time, so nothing is memoised), on the server `serve` builds by default (templates allowed, run
// in workers): the default installation's ConfigMaps pasted as they are ("istio-templates": its
// templates are Istio's own, so the injection runs in the server's process) against the same
// ConfigMaps with the real templates of an older Istio ("own-templates": testkit.OlderIstio's,
// which the server runs in a worker, a process started for the request). The installation is
// built once for each (the first request) and then found in the cache, as for a person toggling
// annotations on their mesh.
func BenchmarkPastedMesh(b *testing.B) {
	h := isolatedServer(&testing.T{})
	def, err := isoEng.Install(context.Background(), engine.InstallOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, config string }{
		{"istio-templates", def.InjectorConfig},
		{"own-templates", testkit.WithOlderTemplates(b, def.InjectorConfig)},
	} {
		b.Run(c.name, func(b *testing.B) {
			mesh := engine.OwnMesh{InjectorConfig: c.config, Values: def.Values, MeshConfig: def.MeshConfigYAML}
			for b.Loop() {
				manifest := strings.Replace(testkit.Deployment, "metadata:\n", fmt.Sprintf("metadata:\n  labels:\n    seq: %q\n", fmt.Sprint(meshSeq.Add(1))), 1)
				body, _ := json.Marshal(map[string]any{"manifest": manifest, "settings": map[string]any{"install": map[string]any{"mesh": mesh}}})
				req := httptest.NewRequest(http.MethodPost, "/api/v1/inject", strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "istio-proxy") {
					b.Fatalf("status %d: %.500s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}
