package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// jsonIsolator runs jobs in this process, through JSON both ways as a worker gets and answers
// them, and counts them.
type jsonIsolator struct {
	renders, injects atomic.Int64
	network          bool
}

func (f *jsonIsolator) Run(ctx context.Context, job Job) (*JobResult, error) {
	b, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	var back Job
	if err := json.Unmarshal(b, &back); err != nil {
		return nil, err
	}
	if back.Render != nil {
		f.renders.Add(1)
	} else {
		f.injects.Add(1)
	}
	res := RunJob(ctx, back)
	if b, err = json.Marshal(res); err != nil {
		return nil, err
	}
	var out JobResult
	return &out, json.Unmarshal(b, &out)
}

func (f *jsonIsolator) IsolatesNetwork() bool { return f.network }

// TestIsolatedMatchesInProcess: through the isolator seam, every output is byte for byte the one
// the engine makes in process; the isolator is used for non-default renders and for injections
// under templates of the user's own, and not otherwise.
func TestIsolatedMatchesInProcess(t *testing.T) {
	t.Parallel()
	iso := &jsonIsolator{network: true}
	e, err := New(context.Background(), Options{InstallPolicy: InstallPolicy{AllowCustomTemplates: true}, Isolator: iso})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	mine := InstallOptions{Set: []string{"values.sidecarInjectorWebhook.templates.mine=metadata:\n  annotations:\n    mine: '{{ .Values.global.proxy.image }}'"}}
	cases := []struct {
		name             string
		steps            []input.Step
		s                Settings
		renders, injects int64
	}{
		{"default", nil, Settings{}, 0, 0},
		{"plain options", []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}, Settings{Mode: ModeWebhook, Install: InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}}}, 1, 0},
		{"a template of the user's", []input.Step{{Key: "inject.istio.io/templates", Value: "sidecar,mine"}}, Settings{Mode: ModeNative, Install: mine}, 1, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			iso.renders.Store(0)
			iso.injects.Store(0)
			got, err := e.Timeline(t.Context(), deploy, c.steps, c.s)
			if err != nil {
				t.Fatal(err)
			}
			want, err := testEngine(t).Timeline(t.Context(), deploy, c.steps, c.s)
			if err != nil {
				t.Fatal(err)
			}
			for k := range want.Steps {
				if g, w := got.Steps[k].Output(), want.Steps[k].Output(); g != w {
					t.Errorf("step %d differs:\n%s\nwant:\n%s", k, g, w)
				}
			}
			if len(got.Findings) != len(want.Findings) {
				t.Errorf("%d findings, want %d", len(got.Findings), len(want.Findings))
			}
			if r, i := iso.renders.Load(), iso.injects.Load(); r != c.renders || i != c.injects {
				t.Errorf("isolated renders %d, injections %d; want %d, %d", r, i, c.renders, c.injects)
			}
		})
	}
	if out := mustInject(t, e, deploy, []input.Step{{Key: "inject.istio.io/templates", Value: "sidecar,mine"}}, Settings{Install: mine}).Output(); !strings.Contains(out, "mine: ") {
		t.Fatalf("the template did not run:\n%s", out)
	}
}

// TestIsolatorWithoutNetwork: an isolator that cannot cut templates off the network gets no
// template that resolves names; other templates of the user's still run.
func TestIsolatorWithoutNetwork(t *testing.T) {
	e, err := New(context.Background(), Options{InstallPolicy: InstallPolicy{AllowCustomTemplates: true}, Isolator: &jsonIsolator{network: false}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	tmpl := func(body string) Settings {
		return Settings{Install: InstallOptions{Set: []string{"values.sidecarInjectorWebhook.templates.mine=metadata: {annotations: {x: '" + body + "'}}"}}}
	}
	_, err = e.Inject(t.Context(), deploy, nil, tmpl(`{{ getHostByName "localhost" }}`))
	if ie := asInputError(t, err); !strings.Contains(ie.Text(), "getHostByName") {
		t.Fatalf("message %q", ie.Text())
	}
	mustInject(t, e, deploy, nil, tmpl(`{{ "fine" }}`))
}

// failingIsolator renders as jsonIsolator does and answers every injection with err.
type failingIsolator struct {
	jsonIsolator
	err error
}

func (f *failingIsolator) Run(ctx context.Context, job Job) (*JobResult, error) {
	if job.Inject != nil {
		f.injects.Add(1)
		return nil, f.err
	}
	return f.jsonIsolator.Run(ctx, job)
}

// TestIsolatedLastingErrorsKept: an isolated injection that fails with a lasting error (a
// worker's answer over its bound) is not started again for the same row — asked again, the
// engine answers the same error from what it keeps, and Estimate counts no work for the row —
// while one that fails otherwise (the worker did not start) is tried again.
func TestIsolatedLastingErrorsKept(t *testing.T) {
	t.Parallel()
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	mine := Settings{Install: InstallOptions{Set: []string{"values.sidecarInjectorWebhook.templates.mine=metadata:\n  annotations:\n    mine: 'x'"}}}
	var steps []input.Step // one row, injected in a worker: the installation has a template of the user's
	for _, c := range []struct {
		name    string
		err     error
		injects int64
	}{
		{"lasting", &input.Error{Field: "install options", ID: "template-output-too-large", Msg: "too much", Lasting: true}, 1},
		{"not lasting", errors.New("worker: fork/exec: resource temporarily unavailable"), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			iso := &failingIsolator{jsonIsolator: jsonIsolator{network: true}, err: c.err}
			e, err := New(context.Background(), Options{InstallPolicy: InstallPolicy{AllowCustomTemplates: true}, Isolator: iso})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			for range 3 {
				if _, err := e.Timeline(t.Context(), deploy, steps, mine); !errors.Is(err, c.err) {
					t.Fatalf("got %v, want %v", err, c.err)
				}
			}
			if n := iso.injects.Load(); n != c.injects {
				t.Errorf("%d isolated injections for the same timeline asked 3 times, want %d", n, c.injects)
			}
			cost, err := e.Estimate(t.Context(), deploy, steps, mine)
			if err != nil {
				t.Fatal(err)
			}
			if kept := c.injects == 1; (cost.Rows == 0) != kept {
				t.Errorf("Estimate counts %d rows to make; the error kept: %v", cost.Rows, kept)
			}
		})
	}
}
