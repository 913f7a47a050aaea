package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// TestBadInput covers what a person may paste: every case gives a clear error at the right spot,
// or passes through, and never panics.
func TestBadInput(t *testing.T) {
	e := testEngine(t)
	deploy := string(readFile(t, "testdata/corpus/deployment.yaml"))
	cases := []struct {
		name     string
		manifest string
		steps    []input.Step
		// request-level error, or document error at doc/line
		wantErr         string
		doc, line       int
		wantDocErr      string
		wantPassThrough bool
	}{
		{name: "empty", manifest: "", wantErr: "empty"},
		{name: "only separators pass through, as in istioctl", manifest: "---\n---\n", wantPassThrough: true},
		{name: "a blank document passes through, as in istioctl", manifest: "---\n\n---\n", wantPassThrough: true},
		{name: "bad separator", manifest: deploy + "--- x\n" + deploy, wantErr: "invalid Yaml document separator", line: strings.Count(deploy, "\n") + 1},
		{name: "malformed YAML in the second document", manifest: deploy + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   bad: indent\n",
			doc: 2, line: strings.Count(deploy, "\n") + 6, wantDocErr: "yaml: line"},
		{name: "wrong type", manifest: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [1, 2]\n", doc: 1, line: 4, wantDocErr: "cannot unmarshal"},
		{name: "unknown kind passes through", manifest: "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n", wantPassThrough: true},
		{name: "comment-only document passes through", manifest: "# nothing here\n", wantPassThrough: true},
		{name: "bad quantity", manifest: deploy, steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "lots"}}, wantErr: `annotation "sidecar.istio.io/proxyCPU"`},
		{name: "bad port", manifest: deploy, steps: []input.Step{{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "3306,http"}}, wantErr: "excludeOutboundPorts"},
		{name: "port out of range", manifest: deploy, steps: []input.Step{{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "70000"}}, wantErr: "value out of range"},
		{name: "malformed proxy config", manifest: deploy, steps: []input.Step{{Key: "proxy.istio.io/config", Value: "concurrency: [2"}}, wantErr: `annotation "proxy.istio.io/config"`},
		{name: "bad annotation key", manifest: deploy, steps: []input.Step{{Key: "not a key!", Value: "x"}}, wantErr: "not a valid annotation key"},
		{name: "malformed proxy config in the manifest", manifest: strings.Replace(deploy, "      labels:\n        app: reviews", "      annotations:\n        proxy.istio.io/config: \"concurrency: [2\"\n      labels:\n        app: reviews", 1),
			doc: 1, line: 1, wantDocErr: "proxy"},
		{name: "bad port in the manifest", manifest: strings.Replace(deploy, "      labels:\n        app: reviews", "      annotations:\n        traffic.sidecar.istio.io/excludeOutboundPorts: \"http\"\n      labels:\n        app: reviews", 1),
			doc: 1, line: 1, wantDocErr: "excludeOutboundPorts"},
		{name: "replication controller without a template", manifest: "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: rc\nspec: {}\n", doc: 1, line: 1, wantDocErr: "spec.template is required"},
		{name: "annotating a controller without a template", manifest: "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: rc\nspec: {}\n",
			steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "1"}}, doc: 1, line: 1, wantDocErr: "spec.template is required"},
		{name: "invalid UTF-8", manifest: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \xff\n", wantErr: "not valid UTF-8", line: 4},
		{name: "a giant resource quantity", manifest: deploy, steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: strings.Repeat("9", 100000)}}, wantErr: "at most 64"},
		{name: "a giant quantity in the manifest", manifest: strings.Replace(deploy, "      labels:\n        app: reviews", "      annotations:\n        sidecar.istio.io/proxyMemory: \""+strings.Repeat("9", 100000)+"\"\n      labels:\n        app: reviews", 1),
			doc: 1, line: 1, wantDocErr: "at most 64"},
		{name: "annotations over Kubernetes' limit", manifest: deploy, steps: []input.Step{{Key: "example.com/blob", Value: strings.Repeat("x", 300<<10)}}, wantErr: "at most 262144"},
		{name: "thousands of steps", manifest: deploy, steps: make([]input.Step, 1000), wantErr: "at most 100"},
		{name: "binary garbage", manifest: "\x00\x01\x02: [\n", doc: 1, line: 1, wantDocErr: "yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := e.Inject(t.Context(), []byte(c.manifest), c.steps, Settings{})
			if c.wantErr != "" {
				ie := asInputError(t, err)
				if !strings.Contains(ie.Error(), c.wantErr) {
					t.Fatalf("error %q does not mention %q", ie, c.wantErr)
				}
				if c.line != 0 && ie.Line != c.line {
					t.Fatalf("error at line %d, want %d", ie.Line, c.line)
				}
				return
			}
			if err != nil {
				t.Fatalf("request failed: %v", err)
			}
			if c.wantPassThrough {
				d := r.Documents[0]
				if d.Injectable || d.Error != nil || d.Output() != d.Input || !strings.Contains(c.manifest, d.Input) {
					t.Fatalf("want the document passed through unchanged, got %+v", d)
				}
				return
			}
			errs := r.Errors()
			if len(errs) != 1 {
				t.Fatalf("want one document error, got %v", errs)
			}
			if !strings.Contains(errs[0].Text(), c.wantDocErr) || errs[0].Doc != c.doc || errs[0].Line != c.line {
				t.Fatalf("got %v (doc %d line %d), want %q at doc %d line %d", errs[0], errs[0].Doc, errs[0].Line, c.wantDocErr, c.doc, c.line)
			}
		})
	}
}

func TestManyDocuments(t *testing.T) {
	e := testEngine(t)
	var b strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n---\n", i)
	}
	r, err := e.Inject(t.Context(), []byte(b.String()), nil, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Documents) != 10000 || r.Documents[9999].Name != "c9999" || r.Documents[9999].Line != 9999*5+1 {
		t.Fatalf("got %d documents, last %+v", len(r.Documents), r.Documents[len(r.Documents)-1])
	}
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one-too-many\n")
	_, err = e.Inject(t.Context(), []byte(b.String()), nil, Settings{})
	if ie := asInputError(t, err); !strings.Contains(ie.Text(), "at most 10000") {
		t.Fatalf("got %v", ie)
	}
}

func TestInputErrorMessage(t *testing.T) {
	cases := []struct {
		err  *input.Error
		want string
	}{
		{&input.Error{Msg: "m"}, "m"},
		{&input.Error{Doc: 2, Line: 14, Field: "manifest", Msg: "m"}, "document 2, line 14, manifest: m"},
		{&input.Error{Field: `annotation "x"`, Msg: "m"}, `annotation "x": m`},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	var target *input.Error
	if !errors.As(fmt.Errorf("wrapped: %w", cases[1].err), &target) {
		t.Fatal("input.Error does not unwrap")
	}
}

// TestInputErrorIDCrossesTheWorker: an input.Error's ID and Params, which its own JSON leaves
// out (the API's JSON is unchanged), reach the engine from an isolated worker's JSON result; a
// foreign error stays without an ID.
func TestInputErrorIDCrossesTheWorker(t *testing.T) {
	own := &input.Error{Field: "install", ID: "injector-config", Params: input.Params("error", "bad"), Msg: "injector config: bad"}
	if b, _ := json.Marshal(own); strings.Contains(string(b), "injector-config") || strings.Contains(string(b), "params") {
		t.Errorf("the input.Error's JSON carries its ID: %s", b)
	}
	for _, sent := range []*input.Error{own, {Field: "install", Msg: "yaml: line 2: bad"}} {
		r := &JobResult{}
		r.setErr(fmt.Errorf("wrapped: %w", sent))
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back JobResult
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		var got *input.Error
		if !errors.As(back.err(), &got) {
			t.Fatalf("not an input.Error: %v", back.err())
		}
		if got.ID != sent.ID || got.Params["error"] != sent.Params["error"] || got.Text() != sent.Text() {
			t.Errorf("sent %+v, got %+v", sent, got)
		}
	}
}

// TestYAMLErrorLine: a document that does not parse is marked on the line a person counts, the
// one go-yaml stopped at, whichever part of it failed: its parser (whose messages name the line
// before, counted from 0) or its scanner (whose messages name the line itself); at the end of the
// text (the parser names the line after the last), on the last line; in the second document as
// in the first, and in an install overlay. Each bad line is marked "# bad" in the text, so the
// want is read from the document, not counted by hand.
func TestYAMLErrorLine(t *testing.T) {
	e := testEngine(t)
	deploy := func(spec string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels:\n      app: web\n" +
			"  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n" + spec
	}
	cases := []struct {
		name, doc string
		// names is the line go-yaml's message names, less the bad line's: -1 for its parser's
		// (0-based), 0 for its scanner's and for the parser's at the end of the text.
		names int
	}{
		{"a key indented less than the one before it", deploy("      containers:\n      - name: app\n        image: nginx\n       ports: [] # bad\n"), -1},
		{"a list item's key indented less than its first", deploy("      containers:\n        - name: app\n       image: nginx # bad\n"), -1},
		{"a label indented less than the one before it, on line 14", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels:\n      app: web\n" +
			"  template:\n    metadata:\n      labels:\n        app: web\n        tier: web\n       team: shop # bad\n    spec:\n      containers:\n      - name: app\n        image: nginx\n", -1},
		{"a flow mapping closed by a bracket", deploy("      containers: [{name: app, image: nginx] # bad\n      restartPolicy: Always\n"), -1},
		{"a flow sequence left open at the end", deploy("      containers: [ # bad\n"), 0},
		{"a key indented more than the one before it", deploy("      containers:\n      - name: app\n        image: nginx\n          ports: [] # bad\n"), 0},
		{"a tab where an indent should be", deploy("      containers:\n      - name: app\n\timage: nginx # bad\n"), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := badLine(t, c.doc)
			for _, tc := range []struct {
				name     string
				manifest string
				doc      int
				offset   int
			}{{"first document", c.doc, 1, 0}, {"second document", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n---\n" + c.doc, 2, 5}} {
				r, err := e.Inject(t.Context(), []byte(tc.manifest), nil, Settings{})
				if err != nil {
					t.Fatal(err)
				}
				errs := r.Errors()
				if len(errs) != 1 || errs[0].Doc != tc.doc {
					t.Fatalf("%s: want one error on document %d, got %v", tc.name, tc.doc, errs)
				}
				// The case is what it says: the message names the line it says.
				named := yamldoc.LineRE.FindStringSubmatch(errs[0].Text())
				if named == nil {
					t.Fatalf("%s: the message names no line: %s", tc.name, errs[0].Text())
				}
				if n, _ := strconv.Atoi(named[1]); n != want+c.names {
					t.Fatalf("%s: %q names line %d, the bad line is %d: not a case of names=%d", tc.name, errs[0].Text(), n, want, c.names)
				}
				if errs[0].Line != want+tc.offset {
					t.Fatalf("%s: %q marked on line %d, want %d", tc.name, errs[0].Text(), errs[0].Line, want+tc.offset)
				}
			}
			// The same text as an install overlay: parsed before Istio's installer reads it.
			overlay := strings.Replace(c.doc, "apiVersion: apps/v1\nkind: Deployment\n", "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n", 1)
			// With blank lines before it too: the line is the overlay's as given.
			for _, overlay := range []string{overlay, "\n  \n" + overlay} {
				_, err := e.Install(t.Context(), InstallOptions{Overlay: overlay})
				ie := asInputError(t, err)
				if wantOverlay := badLine(t, overlay); ie.Line != wantOverlay {
					t.Fatalf("overlay: %q marked on line %d, want %d", ie.Text(), ie.Line, wantOverlay)
				}
			}
		})
	}
}

// badLine is the line of text marked "# bad", counted from 1.
func badLine(t *testing.T, text string) int {
	t.Helper()
	line, _ := badPlace(t, text)
	return line
}

// badPlace is the line of text marked "# bad" and the column the mark names ("# bad:16"; 0 when
// the error has no one place on the line, -1 when the mark names none).
func badPlace(t *testing.T, text string) (line, column int) {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.HasSuffix(l, "# bad") {
			return i + 1, -1
		}
		if j := strings.LastIndex(l, "# bad:"); j >= 0 {
			c, err := strconv.Atoi(l[j+len("# bad:"):])
			if err != nil {
				t.Fatalf("line %d: %q", i+1, l)
			}
			return i + 1, c
		}
	}
	t.Fatalf("no line is marked # bad:\n%s", text)
	return 0, 0
}

// TestStepsAsWritten: with Options.StepsAsWritten, a step's value Istio refuses fails each
// document it is written into, with Istio's message, and the documents before it are injected
// (passed through) as usual; without it, the request fails naming the step. A key Kubernetes
// refuses and a value beyond the bounds fail the request either way.
func TestStepsAsWritten(t *testing.T) {
	written, err := New(t.Context(), Options{StepsAsWritten: true})
	if err != nil {
		t.Fatal(err)
	}
	defer written.Close()
	manifest := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\n" + string(readFile(t, "testdata/corpus/deployment.yaml")))
	refused := []input.Step{{Key: "proxy.istio.io/config", Value: "{bad"}}

	r, err := written.Inject(t.Context(), manifest, refused, Settings{})
	if err != nil {
		t.Fatalf("the request failed: %v", err)
	}
	if errs := r.Errors(); len(errs) != 1 || errs[0].Doc != 2 || !strings.HasPrefix(errs[0].Text(), "could not parse proxy config: ") || r.Documents[0].Error != nil {
		t.Fatalf("want document 2 to fail with Istio's message, got %v", errs)
	}
	if _, err := testEngine(t).Inject(t.Context(), manifest, refused, Settings{}); !strings.Contains(fmt.Sprint(err), "step 1: could not parse proxy config") {
		t.Fatalf("without StepsAsWritten: %v, want the step refused", err)
	}
	for _, st := range []input.Step{{Key: "not a key!", Value: "x"}, {Key: "sidecar.istio.io/proxyCPU", Value: strings.Repeat("9", 65)}} {
		if _, err := written.Inject(t.Context(), manifest, []input.Step{st}, Settings{}); !strings.Contains(fmt.Sprint(err), "step 1: ") {
			t.Errorf("%s=%.10s…: %v, want the request refused", st.Key, st.Value, err)
		}
	}
}

// TestBrokenInputs: every input of testdata/broken — YAML that does not parse, and YAML that
// parses into values of the wrong type for Kubernetes — fails with one error, marked on the line
// a person points at (the line marked "# bad": where the unclosed quote or bracket opens, the
// line missing its colon, the field with the wrong value), whether it is the first document or
// follows another. Before: an unclosed quote was marked where the text ends, a wrong type on the
// document's first line.
func TestBrokenInputs(t *testing.T) {
	e := testEngine(t)
	files, err := filepath.Glob("testdata/broken/*.yaml")
	if err != nil || len(files) < 20 {
		t.Fatalf("%d broken inputs (%v)", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			text := string(readFile(t, f))
			want, column := badPlace(t, text)
			if column < 0 {
				t.Fatal("the bad line names no column (# bad:N)")
			}
			// A document separator inside a block scalar cuts the text: the error is the second
			// document's.
			doc := 1 + strings.Count(text, "\n---\n")
			for _, tc := range []struct {
				manifest    string
				doc, offset int
			}{{text, doc, 0}, {"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n---\n" + text, doc + 1, 5}} {
				r, err := e.Inject(t.Context(), []byte(tc.manifest), nil, Settings{})
				if err != nil {
					t.Fatal(err)
				}
				errs := r.Errors()
				if len(errs) != 1 || errs[0].Doc != tc.doc {
					t.Fatalf("want one error on document %d, got %v", tc.doc, errs)
				}
				if errs[0].Line != want+tc.offset || errs[0].Column != column {
					t.Errorf("%q marked at %d:%d, want %d:%d", errs[0].Text(), errs[0].Line, errs[0].Column, want+tc.offset, column)
				}
			}
		})
	}
}
