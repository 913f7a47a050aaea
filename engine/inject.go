package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/inject"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	k8sappsv1 "k8s.io/kubernetes/pkg/apis/apps/v1"
	k8sbatchv1 "k8s.io/kubernetes/pkg/apis/batch/v1"
	k8scorev1 "k8s.io/kubernetes/pkg/apis/core/v1"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

const skipPrefix = "===> Skipping injection because "

// isolates says whether p's documents are injected in another process (a custom installation,
// with an isolator): there, they are read there.
func (e *Engine) isolates(p *prepared) bool { return p.install.custom && e.opts.Isolator != nil }

// parse reads each of p's documents as Istio's reader does, once, for the rows of a timeline to
// start from (chunk.parsed): the objects, nil for a document it does not read (an error, a kind
// Istio does not know), which each row reads again and fails on as before.
func (p *prepared) parse(ctx context.Context) ([]runtime.Object, error) {
	out := make([]runtime.Object, len(p.chunks))
	for i, c := range p.chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if obj, err := inject.FromRawToObject(c.raw); err == nil {
			out[i] = obj
		}
	}
	p.useParsed(out)
	return out, nil
}

// useParsed gives p's documents the objects row 0 read (parse).
func (p *prepared) useParsed(objs []runtime.Object) {
	for i := range min(len(objs), len(p.chunks)) {
		p.chunks[i].parsed = objs[i]
	}
}

// injectAll injects each of p's documents. The deadline is checked before each one: neither
// Istio's reader nor its injector takes a context, so one document is what runs past it (and
// a server bounds what one document may cost before it starts: Estimate, Limits). Up to
// workers documents are injected at once.
func (e *Engine) injectAll(ctx context.Context, p *prepared, ann []annotationChange, workers int) ([]Document, error) {
	if e.isolates(p) {
		e.injections.Add(int64(len(p.chunks)))
		return e.injectIsolated(ctx, p, ann)
	}
	docs := make([]Document, len(p.chunks))
	// Each worker takes the next document not taken yet (Istio's injector is used concurrently
	// as BatchStream uses it); with one, the documents are injected in order on this goroutine.
	var next atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			i := int(next.Add(1)) - 1
			if i >= len(p.chunks) {
				return
			}
			e.injections.Add(1)
			docs[i] = injectChunk(ctx, p.install, p.injector, p.chunks[i], i+1, ann)
			if l, ok := docs[i].in.(*corev1.List); ok && len(l.Items) > 0 {
				e.injections.Add(int64(len(l.Items)) - 1) // a List's items in its place
			}
		}
	}
	var wg sync.WaitGroup
	for range min(workers, len(p.chunks)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return docs, nil
}

// injectChunk runs one document through Istio's IntoObject, exactly as IntoResourceFile does for
// istioctl, after writing the annotation changes where Istio reads them.
func injectChunk(ctx context.Context, in *Install, injector inject.Injector, c chunk, index int, ann []annotationChange) Document {
	d, obj := prepareChunk(c, index, ann)
	if obj == nil {
		return d
	}
	out, warnings, panicked, err := intoObject(ctx, in, injector, obj)
	return finishChunk(d, obj, out, nil, warnings, panicked, err)
}

// prepareChunk reads one document and writes the annotation changes into it. It returns the
// object for Istio's injector, or nil when the document is done (a kind Istio does not inject, or
// an error).
func prepareChunk(c chunk, index int, ann []annotationChange) (d Document, obj runtime.Object) {
	d = Document{Index: index, Line: c.line, Input: c.text}
	obj, tm, err := c.objectMeta()
	if runtime.IsNotRegisteredError(err) {
		// istioctl writes such documents back unchanged.
		d.APIVersion, d.Kind, d.Name, d.Namespace = tm.APIVersion, tm.Kind, tm.Metadata.Name, tm.Metadata.Namespace
		d.labels = tm.Metadata.Labels
		return d.withOutput(c.text), nil
	}
	if err != nil {
		d.Error = yamlError(err, index, c.line, c.raw)
		return d, nil
	}
	if m, err := meta.Accessor(obj); err == nil {
		d.Name, d.Namespace, d.labels = m.GetName(), m.GetNamespace(), m.GetLabels()
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	d.APIVersion, d.Kind = gvk.GroupVersion().String(), gvk.Kind
	d.Injectable = true
	if len(ann) > 0 {
		if err := annotate(obj, ann); err != nil {
			d.Error = &input.Error{Doc: index, Line: c.line, Field: "annotations", Msg: err.Error()}
			return d, nil
		}
	}
	if read, _, _, ok := podParts(obj); ok {
		// Refuse what Kubernetes would refuse before Istio spends time on it.
		total := 0
		for _, k := range sortedKeys(read.Annotations) {
			v := read.Annotations[k]
			total += len(k) + len(v)
			if err := catalog.SizeError(k, v); err != nil || total > validation.TotalAnnotationSizeLimitB {
				if err == nil {
					err = &input.Error{ID: "annotations-total", Params: input.Params("max", strconv.Itoa(validation.TotalAnnotationSizeLimitB))}
				}
				err.Doc, err.Line, err.Field = index, c.line, "annotation "+quote(k)
				d.Error = err
				return d, nil
			}
		}
	}
	return d, obj
}

// finishChunk records what Istio's injector made of obj: out, or its JSON j when it was made in
// another process (then out is j decoded), with its warnings and error.
func finishChunk(d Document, obj runtime.Object, out any, j []byte, warnings []string, panicked any, err error) Document {
	d.panicked = panicked
	for _, w := range warnings {
		if strings.HasPrefix(w, skipPrefix) {
			d.Skipped = true
			d.SkipReason = strings.TrimSpace(strings.TrimPrefix(w, skipPrefix))
		}
		if w == webhookSkip {
			d.Skipped, d.SkipReason = true, w
		}
	}
	d.Warnings = warnings
	if err != nil {
		var ie *input.Error
		if errors.As(err, &ie) && ie.ID != "" {
			d.Error = &input.Error{Doc: d.Index, Line: d.Line, ID: ie.ID, Params: ie.Params}
		} else {
			d.Error = &input.Error{Doc: d.Index, Line: d.Line, Msg: err.Error()}
		}
		return d
	}
	// yaml.Marshal is json.Marshal then JSONToYAML; doing the two steps apart keeps the JSON for
	// the diff, which decodes it far faster than it would parse the YAML, and leaves the YAML
	// until it is read (withJSON).
	if j == nil {
		if j, err = json.Marshal(out); err != nil {
			d.Error = &input.Error{Doc: d.Index, Line: d.Line, Msg: err.Error()}
			return d
		}
	}
	if d = d.withJSON(j); d.Error != nil {
		return d
	}
	d.in = obj
	d.out, _ = out.(runtime.Object)
	return d
}

// seesDefaults says the injector is webhook mode's, which sees an object with the API server's
// defaults (unless it is asked to see it as written).
func seesDefaults(injector inject.Injector) bool {
	w, ok := injector.(*webhookInjector)
	return ok && !w.asWritten
}

// intoObject calls Istio's IntoObject and turns a panic inside it into an error: a playground
// must survive whatever is pasted into it. The panic's value is returned too, for the fuzz test.
// IntoObject takes no context, but calls its injector for each object it injects — each item of
// a List, which it injects one after another — so it is given one that checks ctx first
// (deadlineInjector): past the deadline, the item running is all that still runs.
func intoObject(ctx context.Context, in *Install, injector inject.Injector, obj runtime.Object) (out any, warnings []string, panicked any, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
			err = &input.Error{ID: "injector-panic", Params: input.Params("panic", yamldoc.Clip(fmt.Sprint(r)))}
		}
	}()
	warn := func(w string) { warnings = append(warnings, w) }
	input := obj
	w, webhook := injector.(*webhookInjector)
	if webhook {
		injector = w.reporting(warn)
	}
	defaults := seesDefaults(injector)
	if defaults {
		// As in a cluster, the webhook sees the object with the API server's defaults
		// (apidefaults.go).
		input = obj.DeepCopyObject()
		APIDefault(input)
	}
	// The webhook is the installation's istiod, which knows its revision (its REVISION); offline
	// kube-inject is given istioctl's --revision.
	revision := RevisionOf(in.Options.Revision)
	if defaults {
		revision = in.values.Struct().GetRevision()
	}
	out, err = inject.IntoObject(deadlineInjector{ctx: ctx, inner: injector}, in.templates, in.values, revision, in.mesh, input, warn)
	if defaults && err == nil {
		out = withoutUntouchedDefaults(out, obj, input)
	}
	if _, list := obj.(*corev1.List); err != nil && !list && slices.Contains(warnings, webhookSkip) {
		// The webhook lets the pod through before it reads anything else of it (IntoObject goes
		// on to parse its proxy config, and may fail on it): as it is.
		return obj.DeepCopyObject(), warnings, nil, nil
	}
	return out, warnings, nil, err
}

// deadlineInjector is the injector IntoObject is given: it fails once ctx has ended, and
// otherwise is inner — or, when inner is nil (kube-inject), does what no injector does: its
// Inject returns no patch, so IntoObject renders the templates itself, and it has no kube client,
// so IntoObject decides native sidecars as it does without an injector.
type deadlineInjector struct {
	ctx   context.Context
	inner inject.Injector
}

func (d deadlineInjector) Inject(pod *corev1.Pod, namespace string) ([]byte, error) {
	if err := d.ctx.Err(); err != nil {
		return nil, err
	}
	if d.inner == nil {
		return nil, nil
	}
	return d.inner.Inject(pod, namespace)
}

func (d deadlineInjector) GetKubeClient() kube.Client {
	if d.inner == nil {
		return nil
	}
	return d.inner.GetKubeClient()
}

// yamlError is the error of document index, which starts on line start and is text, that YAML
// could not read: at the line the error names.
func yamlError(err error, index, start int, text []byte) *input.Error {
	msg := err.Error()
	line, column := start, 0
	if n := yamldoc.ErrorLine(msg, text); n > 0 {
		line, column = start+n-1, yamldoc.ErrorColumn(msg, text, n)
	}
	return &input.Error{Doc: index, Line: line, Column: column, Field: "manifest", Msg: msg}
}

// In a cluster, Istio's webhook never sees a workload as it was written: the API server applies
// its defaults when it decodes an object (a Deployment's pod template when the Deployment is
// created, a Pod when its controller creates it), before any mutating webhook. Some of them reach
// what Istio writes: a container port's protocol (TCP) is in ISTIO_META_POD_PORTS, a probe's
// defaults in ISTIO_KUBE_APP_PROBERS. Webhook mode therefore injects the defaulted object and
// shows Istio's result without the defaults Istio did not touch (so the output and its diff show
// what Istio changed, not what the API server fills in); the Cluster view keeps them all.
// cmd/sidecarlab's conformance tests hold both to a real API server.

// apiDefaults are the API server's defaulting functions for the kinds that make Pods
// (k8s.io/kubernetes's own, of the Kubernetes version in go.mod). Made when first used.
var apiDefaults = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, register := range []func(*runtime.Scheme) error{k8scorev1.RegisterDefaults, k8sappsv1.RegisterDefaults, k8sbatchv1.RegisterDefaults} {
		if err := register(s); err != nil {
			panic(err)
		}
	}
	return s
})

// APIDefault applies the API server's defaults to obj, in place, as it does when it decodes a
// created object. Kinds it has no defaults for are left alone.
func APIDefault(obj runtime.Object) { apiDefaults().Default(obj) }

// withoutUntouchedDefaults is out, what Istio made of the defaulted object, without the defaults
// it did not touch: a field that orig lacks, that defaulting added, and that out still holds with
// the defaulted value. It returns out itself when the JSON round trip fails.
func withoutUntouchedDefaults(out any, orig, defaulted runtime.Object) any {
	var o, d, v any
	if !jsonValue(orig, &o) || !jsonValue(defaulted, &d) || !jsonValue(out, &v) {
		return out
	}
	v = stripDefaults(v, o, d)
	b, err := json.Marshal(v)
	if err != nil {
		return out
	}
	t := reflect.TypeOf(out)
	if t == nil || t.Kind() != reflect.Pointer {
		return out
	}
	res := reflect.New(t.Elem()).Interface()
	if err := json.Unmarshal(b, res); err != nil {
		return out
	}
	return res
}

func jsonValue(obj any, v *any) bool {
	b, err := json.Marshal(obj)
	return err == nil && json.Unmarshal(b, v) == nil
}

// stripDefaults removes from out (a JSON value) what defaulting added to orig to make def.
// Lists are walked element by element, matched by name where elements have one (containers,
// volumes, env), else by position when out and def have as many elements.
func stripDefaults(out, orig, def any) any {
	switch o := out.(type) {
	case map[string]any:
		dm, ok := def.(map[string]any)
		if !ok {
			return out
		}
		om, _ := orig.(map[string]any)
		for k, v := range o {
			dv, inDef := dm[k]
			if !inDef {
				continue
			}
			ov, inOrig := om[k]
			if !inOrig && reflect.DeepEqual(v, dv) {
				delete(o, k)
				continue
			}
			o[k] = stripDefaults(v, ov, dv)
		}
	case []any:
		dl, ok := def.([]any)
		if !ok {
			return out
		}
		ol, _ := orig.([]any)
		for i, e := range o {
			if de, oe, ok := counterpart(e, i, len(o), dl, ol); ok {
				o[i] = stripDefaults(e, oe, de)
			}
		}
	}
	return out
}

// counterpart is the element of def (and of orig) that out's element e, at i of n, came from.
func counterpart(e any, i, n int, def, orig []any) (d, o any, ok bool) {
	name := func(v any) (string, bool) {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		s, ok := m["name"].(string)
		return s, ok
	}
	if en, named := name(e); named {
		for _, x := range def {
			if xn, _ := name(x); xn == en {
				d, ok = x, true
			}
		}
		for _, x := range orig {
			if xn, _ := name(x); xn == en {
				o = x
			}
		}
		return d, o, ok
	}
	if n != len(def) {
		return nil, nil, false
	}
	if len(orig) == len(def) {
		o = orig[i]
	}
	return def[i], o, true
}
