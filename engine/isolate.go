package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"

	"istio.io/istio/pkg/kube/inject"
)

// Isolator runs the engine's work that executes template text from install options — renders
// of options other than the default (the charts are templates over the options) and injections
// under an installation with templates of its own — somewhere the server's rights do not reach:
// another process with a clean environment, limits and a deadline. The engine only describes the
// work (a Job) and reads the answer; package sandbox runs it, by calling RunJob in the worker.
type Isolator interface {
	// Run does the job elsewhere and returns its result. An error is the isolation's own (the
	// deadline, a limit, a worker that could not start); the job's errors are in the result.
	Run(ctx context.Context, job Job) (*JobResult, error)
	// IsolatesNetwork reports whether a template that resolves names (getHostByName) finds
	// nothing where the job runs: no network, and none of the server's own names (its
	// /etc/hosts). When it does not, such templates are refused.
	IsolatesNetwork() bool
}

// Job is one piece of isolated work: exactly one of Render, Inject and Explain is set.
type Job struct {
	Render  *RenderJob  `json:"render,omitempty"`
	Inject  *InjectJob  `json:"inject,omitempty"`
	Explain *ExplainJob `json:"explain,omitempty"`
}

// RenderJob renders an installation's ConfigMaps from install options, checking them against
// Policy first (again: the worker trusts no one either).
type RenderJob struct {
	Options InstallOptions `json:"options"`
	Policy  InstallPolicy  `json:"policy"`
}

// InjectJob runs Istio's injector over objects (the documents, annotations written in, as JSON)
// under a rendered installation, in the mode of Settings.
type InjectJob struct {
	ConfigMaps ConfigMaps        `json:"configMaps"`
	Options    InstallOptions    `json:"options"`
	Settings   Settings          `json:"settings"`
	Objects    []json.RawMessage `json:"objects"`
}

// ExplainJob explains a manifest (Engine.Explain) under a rendered installation, in the mode of
// Settings: the manifest as given and its annotation steps, which the engine has checked.
type ExplainJob struct {
	ConfigMaps ConfigMaps     `json:"configMaps"`
	Options    InstallOptions `json:"options"`
	Settings   Settings       `json:"settings"`
	Manifest   string         `json:"manifest"`
	Steps      []input.Step   `json:"steps,omitempty"`
}

// JobResult is what a job made: the ConfigMaps of a render, one Injected per object, or an
// explanation. Error is a problem with the input; Fail is any other failure, which is not shown
// to users.
type JobResult struct {
	ConfigMaps *ConfigMaps  `json:"configMaps,omitempty"`
	Injected   []Injected   `json:"injected,omitempty"`
	Provenance []Provenance `json:"provenance,omitempty"`
	Error      *input.Error `json:"error,omitempty"`
	// ErrorID and ErrorParams are Error's ID and Params, which its JSON leaves out (the API's
	// JSON does not change): they cross from the worker here.
	ErrorID     string            `json:"errorId,omitempty"`
	ErrorParams map[string]string `json:"errorParams,omitempty"`
	Fail        string            `json:"fail,omitempty"`
}

// Injected is Istio's injector's answer for one object: the output as JSON, its warnings, and
// its error or what it panicked with.
type Injected struct {
	Output   json.RawMessage `json:"output,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
	Error    string          `json:"error,omitempty"`
	Panicked string          `json:"panicked,omitempty"`
}

// RunJob does a job in this process. It is what the isolated worker calls: the only place that
// runs a render of untrusted options or an untrusted template, so it must run only there.
func RunJob(ctx context.Context, job Job) *JobResult {
	res := &JobResult{}
	switch {
	case job.Render != nil:
		o := job.Render.Options
		if err := job.Render.Policy.check(o); err != nil {
			res.setErr(err)
			return res
		}
		cm, err := renderConfigMaps(o)
		if err != nil {
			res.setErr(err)
			return res
		}
		res.ConfigMaps = &cm
	case job.Inject != nil:
		j := job.Inject
		in, err := buildInstall(j.Options, j.ConfigMaps, TrustedInstalls(), nil)
		if err != nil {
			res.setErr(err)
			return res
		}
		cl := newClusters()
		defer cl.close()
		injector, err := cl.injectorFor(j.Settings, in)
		if err != nil {
			res.setErr(err)
			return res
		}
		for _, raw := range j.Objects {
			if err := ctx.Err(); err != nil {
				res.setErr(err)
				return res
			}
			res.Injected = append(res.Injected, injectOne(ctx, in, injector, raw))
		}
	case job.Explain != nil:
		j := job.Explain
		in, err := buildInstall(j.Options, j.ConfigMaps, TrustedInstalls(), nil)
		if err != nil {
			res.setErr(err)
			return res
		}
		cl := newClusters()
		defer cl.close()
		injector, err := cl.injectorFor(j.Settings, in)
		if err != nil {
			res.setErr(err)
			return res
		}
		chunks, err := splitDocuments([]byte(j.Manifest))
		if err != nil {
			res.setErr(err)
			return res
		}
		p := &prepared{settings: j.Settings, install: in, injector: injector, chunks: chunks}
		if res.Provenance, err = explainPrepared(ctx, p, j.Steps, catalog.DefaultCatalog()); err != nil {
			res.setErr(err)
		}
	default:
		res.Fail = "empty job"
	}
	return res
}

// explainIsolated explains p's documents in the isolator (manifest and steps: as given to
// Explain, which checked them): Istio's injector and the templates observed run there, and the
// explanation is read back here.
func (e *Engine) explainIsolated(ctx context.Context, p *prepared, manifest []byte, steps []input.Step) ([]Provenance, error) {
	job := &ExplainJob{ConfigMaps: p.install.configMaps(), Options: p.install.Options, Settings: p.settings, Manifest: string(manifest), Steps: steps}
	res, err := e.opts.Isolator.Run(ctx, Job{Explain: job})
	if err != nil {
		return nil, err
	}
	if err := res.err(); err != nil {
		return nil, err
	}
	if res.Provenance == nil {
		return []Provenance{}, nil
	}
	return res.Provenance, nil
}

func injectOne(ctx context.Context, in *Install, injector inject.Injector, raw []byte) Injected {
	obj, err := inject.FromRawToObject(raw)
	if err != nil {
		return Injected{Error: err.Error()}
	}
	out, warnings, panicked, err := intoObject(ctx, in, injector, obj)
	r := Injected{Warnings: warnings}
	if panicked != nil {
		r.Panicked = fmt.Sprint(panicked)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if r.Output, err = json.Marshal(out); err != nil {
		r.Error = err.Error()
	}
	return r
}

func (r *JobResult) setErr(err error) {
	var ie *input.Error
	if errors.As(err, &ie) {
		r.Error, r.ErrorID, r.ErrorParams = ie, ie.ID, ie.Params
		return
	}
	r.Fail = err.Error()
}

// err is the job's own error, if any. The input's errors are lasting: the job is a function of
// its input, and a worker started again for it would fail the same way.
func (r *JobResult) err() error {
	switch {
	case r.Error != nil:
		if r.Error.ID == "" {
			r.Error.ID, r.Error.Params = r.ErrorID, r.ErrorParams
		}
		r.Error.Lasting = true
		return r.Error
	case r.Fail != "":
		return errors.New("isolated job: " + r.Fail)
	}
	return nil
}

// renderIsolated renders options in the isolator and builds the installation here (parsing runs
// no template). With templates of its own and no network isolation, a template that resolves
// names is refused.
func (e *Engine) renderIsolated(ctx context.Context, o InstallOptions, builtin map[string]string) (*Install, error) {
	p := e.opts.InstallPolicy
	if err := p.check(o); err != nil {
		return nil, err
	}
	res, err := e.opts.Isolator.Run(ctx, Job{Render: &RenderJob{Options: o, Policy: InstallPolicy{AllowServerPaths: p.AllowServerPaths, AllowCustomTemplates: p.AllowCustomTemplates}}})
	if err != nil {
		return nil, err
	}
	if err := res.err(); err != nil {
		return nil, err
	}
	if res.ConfigMaps == nil {
		return nil, errors.New("isolated render: no ConfigMaps")
	}
	return e.finishInstall(o, *res.ConfigMaps, builtin)
}

// finishInstall builds the installation of ConfigMaps under the engine's policy. Where the
// templates will run in a worker that cannot hide this machine's names, a custom template that
// resolves names is refused.
func (e *Engine) finishInstall(o InstallOptions, cm ConfigMaps, builtin map[string]string) (*Install, error) {
	in, err := buildInstall(o, cm, e.opts.InstallPolicy, builtin)
	if err != nil {
		return nil, err
	}
	if in.custom && e.opts.Isolator != nil && !e.opts.Isolator.IsolatesNetwork() {
		for _, name := range sortedKeys(in.rawTemplates) {
			if builtin[name] != in.rawTemplates[name] && strings.Contains(in.rawTemplates[name], "getHostByName") {
				return nil, &input.Error{Field: installField(o, ""), ID: "template-resolves-names", Params: input.Params("nameQ", quote(name))}
			}
		}
	}
	return in, nil
}

// injectIsolated injects the documents through the isolator: the documents are read and
// annotated here, Istio's injector runs there, and its answers are read back here.
func (e *Engine) injectIsolated(ctx context.Context, p *prepared, ann []annotationChange) ([]Document, error) {
	docs := make([]Document, len(p.chunks))
	objs := make([]runtime.Object, len(p.chunks))
	job := &InjectJob{ConfigMaps: p.install.configMaps(), Options: p.install.Options, Settings: p.settings}
	var sent []int
	for i, c := range p.chunks {
		d, obj := prepareChunk(c, i+1, ann)
		docs[i] = d
		if obj == nil {
			continue
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			docs[i].Error = &input.Error{Doc: d.Index, Line: d.Line, Msg: err.Error()}
			continue
		}
		objs[i] = obj
		job.Objects = append(job.Objects, raw)
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return docs, nil
	}
	res, err := e.opts.Isolator.Run(ctx, Job{Inject: job})
	if err != nil {
		return nil, err
	}
	if err := res.err(); err != nil {
		return nil, err
	}
	if len(res.Injected) != len(sent) {
		return nil, &input.Fault{ID: "worker-answers", Params: input.Params("answers", strconv.Itoa(len(res.Injected)), "documents", strconv.Itoa(len(sent)))}
	}
	for k, i := range sent {
		r := res.Injected[k]
		var out runtime.Object
		var err error
		if r.Error != "" {
			err = errors.New(r.Error)
		} else if out, err = inject.FromRawToObject(r.Output); err != nil {
			err = &input.Error{ID: "injector-output", Params: input.Params("err", err.Error())}
		}
		var panicked any
		if r.Panicked != "" {
			panicked = r.Panicked
		}
		var j []byte
		if err == nil {
			j = r.Output
		}
		docs[i] = finishChunk(docs[i], objs[i], out, j, r.Warnings, panicked, err)
	}
	return docs, nil
}
