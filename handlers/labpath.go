package handlers

import (
	"context"
	_ "embed"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
)

// labAnnotations are the lab's annotation steps, in the lab's order. Each chip of the path adds
// the next one to those before it, so each step's diff shows what that one annotation changed on
// top of the others. The hold rewrites proxy.istio.io/config with the earlier fields kept, so its
// diff is the hold alone.
var labAnnotations = []input.Step{
	{Key: "sidecar.istio.io/proxyCPU", Value: "200m"},
	{Key: "proxy.istio.io/config", Value: "concurrency: 2\nterminationDrainDuration: 30s"},
	{Key: "proxy.istio.io/config", Value: "concurrency: 2\nterminationDrainDuration: 30s\nholdApplicationUntilProxyStarts: true"},
	{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "3306,6379"},
	{Key: "sidecar.istio.io/inject", Value: "false"},
}

// labTexts are the lab path's words, by step, in the catalogs (lab.step.ID.title: the chip's
// title; lab.step.ID.look: what to look for at that step), in the path's order.
var labTexts = []string{"default", "resources", "config", "hold", "exclude", "noinject", "job", "batch", "notinjected", "baseline", "ambient"}

// clusterLab are the namespaces of the lab's Cluster steps: a namespace without the injection
// label, and one with it under Pod Security's baseline level. The lab's workload names its
// namespace, bookinfo, so they do too (a workload is created in its own namespace).
var clusterLab = []engine.Namespace{
	{Name: "bookinfo"},
	{Name: "bookinfo", Labels: map[string]string{labelInjection: "enabled", labelEnforce: "baseline"}},
}

// labStep is one chip of the path: a playground state, or (the Job two ways) a comparison.
type labStep struct {
	// text is the step's id in the catalogs (labTexts).
	text, href string
	// key recognises the step's state in a view (labKey; for a comparison, both sides').
	key string
	// state is the step's state (nil for a comparison): a view that adds steps of its own to it
	// went on from this step.
	state *api.State
	// switchHref shows what the step's "why" explains (lab.step.ID.why, lab.step.ID.switch).
	switchHref string
}

// labLines are lines of one template (of a {{ define }} in it, when Define is set) that a lab
// step's annotation switches: those that wrote the fields the step adds or changes, and the
// branches around them.
type labLines struct {
	Template string `json:"template"`
	Define   string `json:"define,omitempty"`
	Lines    []int  `json:"lines"`
}

// labLinesFile are the template lines each lab step switches, by the step's id (labTexts): what
// learnLines (labpath_test.go) finds with Istio's templates observed, kept so that no request
// waits for it (TestLabStepsNameTheirTemplateLines holds the file to what learnLines finds now;
// -update rewrites it).
//
//go:embed labpath_lines.json
var labLinesFile []byte

// lineRanges writes sorted line numbers as ranges: "2–3, 5–6".
func lineRanges(lines []int) string {
	var parts []string
	for i := 0; i < len(lines); {
		j := i
		for j+1 < len(lines) && lines[j+1] == lines[j]+1 {
			j++
		}
		part := strconv.Itoa(lines[i])
		if j > i {
			part += "–" + strconv.Itoa(lines[j])
		}
		parts = append(parts, part)
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// labPath is the lab's guided path, made once: the lab's workload with each annotation added to
// the previous ones, the Job two ways, the batch of eight, then the workload in the cluster: not
// injected, and rejected under Pod Security's baseline (each fixed by a settings fix); last, the
// same workload in ambient, beside its sidecar.
type labPath struct {
	steps []labStep
	// manifest is the lab's workload; a page with another manifest offers the lab's steps on it.
	manifest string
	// manifests are those of every step: a state with another one is no step, and its key is
	// not worth making (it copies the manifest, up to megabytes, on every page).
	manifests map[string]bool
	// bodies are the strip's inside rendered, by what it depends on: at most one for each
	// language, current step or step gone on from, and offer of the lab's steps (3 × 21 × 2,
	// ~7 KB each).
	mu     sync.Mutex
	bodies map[labBodyKey]web.Kept
	// switches are the template lines each step's annotation switches, by step id
	// (labLinesFile).
	switches map[string][]labLines
}

type labBodyKey struct {
	lang          string
	current, left int
	applyToMine   bool
}

func newLabPath() *labPath {
	deploy, _ := web.FindPreset("deployment")
	job, _ := web.FindPreset("job")
	batch, _ := web.FindPreset("lab-batch")
	istio := engine.Version().Istio
	lp := &labPath{manifest: deploy.Manifest, manifests: map[string]bool{deploy.Manifest: true, job.Manifest: true, batch.Manifest: true}, bodies: map[labBodyKey]web.Kept{}}
	if err := json.Unmarshal(labLinesFile, &lp.switches); err != nil {
		panic(err) // the file is ours, and a test reads it
	}
	add := func(href, key string, st *api.State) {
		lp.steps = append(lp.steps, labStep{text: labTexts[len(lp.steps)], href: href, key: key, state: st})
	}
	for k := 0; k <= len(labAnnotations); k++ {
		st := api.State{Version: permalink.Version, Istio: istio, Manifest: deploy.Manifest, Steps: labAnnotations[:k:k]}
		// The chip selects its own step, so the field diff shows what its annotation changed.
		step := k
		if k == 0 {
			step = -1
		}
		add(view{state: st, step: step}.permalink(), labKey(st), &st)
	}
	jobState := api.State{Version: permalink.Version, Istio: istio, Manifest: job.Manifest}
	classic, native := jobState, jobState
	classic.Settings.Mode, native.Settings.Mode = engine.ModeClassic, engine.ModeNative
	add(compareHref(classic, native, "classic sidecar", "native sidecar"), labCompareKey(classic, native), nil)
	// Why classic by default: the webhook's own detection, on nodes just under and at the
	// Kubernetes version it asks for.
	below, at := jobState, jobState
	below.Settings = engine.Settings{Mode: engine.ModeWebhook, KubernetesVersion: "1.32"}
	at.Settings = engine.Settings{Mode: engine.ModeWebhook, KubernetesVersion: "1.33"}
	lp.steps[len(lp.steps)-1].switchHref = compareHref(below, at, webhookLabel+"1.32", webhookLabel+"1.33")
	batchState := api.State{Version: permalink.Version, Istio: istio, Manifest: batch.Manifest}
	add(view{state: batchState, tab: "batch", step: -1}.permalink(), labKey(batchState), &batchState)
	for _, ns := range clusterLab {
		st := api.State{Version: permalink.Version, Istio: istio, Manifest: deploy.Manifest, Settings: engine.Settings{Namespace: ns}}
		add(view{state: st, tab: web.ClusterTab, step: -1}.permalink(), labKey(st), &st)
	}
	// Last, and optional: the lab's workload without a sidecar, beside the sidecar (/ambient).
	plain := api.State{Version: permalink.Version, Istio: istio, Manifest: deploy.Manifest}
	add(ambientHref(plain, 0), labAmbientKey(plain), nil)
	return lp
}

// labAmbientKey recognises the sidecar-or-ambient comparison of a state.
func labAmbientKey(st api.State) string {
	return "ambient:" + labKey(st)
}

// labKey is what makes two states the same lab step: the manifest, the steps and the settings.
// The schema and Istio versions are left out (a lab link made under another Istio is still that
// step), and so are the tab, the selected step and the pod count, which are views of one state.
// It is the states' JSON rather than their encoded links, since deflate's output is not a
// canonical form of its input.
func labKey(st api.State) string {
	if len(st.Steps) == 0 {
		st.Steps = nil
	}
	b, _ := json.Marshal(struct {
		Manifest string          `json:"m"`
		Steps    []input.Step    `json:"s"`
		Settings engine.Settings `json:"x"`
	}{strings.ReplaceAll(st.Manifest, "\r\n", "\n"), st.Steps, st.Settings})
	return string(b)
}

// labCompareKey recognises a comparison of two states.
func labCompareKey(a, b api.State) string {
	return "compare:" + labKey(a) + "\n" + labKey(b)
}

// nav is the strip for a view whose key is key (0 steps match an empty key), or that went on
// from step left (1-based; 0 for none), in l's language.
func (lp *labPath) nav(l *i18n.Localizer, key string, left int, mine bool) web.LabNav {
	n := web.LabNav{ApplyToMine: mine}
	for i, s := range lp.steps {
		cur := key != "" && key == s.key
		n.Steps = append(n.Steps, web.LabStep{N: i + 1, Title: l.T("lab.step." + s.text + ".title"), Href: s.href, Current: cur})
		if cur {
			n.Current = i + 1
		}
	}
	if n.Current > 0 {
		s := lp.steps[n.Current-1]
		n.Look = l.T("lab.step." + s.text + ".look")
		n.Lines = lp.linesOf(l, s.text)
		if n.Current > 1 {
			n.Prev = n.Steps[n.Current-2]
		}
		if n.Current < len(n.Steps) {
			n.Next = n.Steps[n.Current]
		}
		if s.switchHref != "" {
			n.Why = l.T("lab.step." + s.text + ".why")
			n.Switch = web.LabStep{Title: l.T("lab.step." + s.text + ".switch"), Href: s.switchHref}
		}
	} else if left > 0 {
		n.Left = left
		n.Look = l.T("lab.step." + lp.steps[left-1].text + ".look")
		n.Lines = lp.linesOf(l, lp.steps[left-1].text)
		if left < len(n.Steps) {
			n.Next = n.Steps[left]
		}
	}
	n.Body = lp.body(l, n)
	return n
}

// linesOf says, in l's language, which template lines step text's annotation switches: a
// sentence per template.
func (lp *labPath) linesOf(l *i18n.Localizer, text string) []string {
	var out []string
	for _, ll := range lp.switches[text] {
		if ll.Define != "" {
			out = append(out, l.T("page.lab.lines-define", "Template", ll.Template, "Define", ll.Define, "Lines", lineRanges(ll.Lines)))
		} else {
			out = append(out, l.T("page.lab.lines", "Template", ll.Template, "Lines", lineRanges(ll.Lines)))
		}
	}
	return out
}

// body is the strip n's inside, rendered the first time it is asked for in l's language.
func (lp *labPath) body(l *i18n.Localizer, n web.LabNav) web.Kept {
	k := labBodyKey{l.Lang(), n.Current, n.Left, n.ApplyToMine}
	lp.mu.Lock()
	b, ok := lp.bodies[k]
	lp.mu.Unlock()
	if ok {
		return b
	}
	b, err := web.RenderLabStrip(i18n.NewContext(context.Background(), l), n)
	if err != nil {
		return web.Kept{} // rendered with the page, which reports the error
	}
	lp.mu.Lock()
	lp.bodies[k] = b
	lp.mu.Unlock()
	return b
}

// forState is the strip of a playground view. A learner whose manifest is not the lab's workload
// is offered the lab's annotation steps on their own manifest.
func (lp *labPath) forState(l *i18n.Localizer, st api.State) web.LabNav {
	mine := strings.TrimSpace(st.Manifest) != "" && strings.TrimSpace(st.Manifest) != strings.TrimSpace(lp.manifest)
	key, left := "", 0
	if lp.manifests[strings.ReplaceAll(st.Manifest, "\r\n", "\n")] {
		key = labKey(st)
		left = lp.wentOnFrom(st)
	}
	return lp.nav(l, key, left, mine)
}

// wentOnFrom is the lab step (1-based) st went on from with annotations of its own — the latest
// step whose key (labKey) is st's with its steps cut to that step's — or 0.
func (lp *labPath) wentOnFrom(st api.State) int {
	for i := len(lp.steps) - 1; i >= 0; i-- {
		s := lp.steps[i]
		if s.state == nil || len(st.Steps) <= len(s.state.Steps) {
			continue
		}
		cut := st
		cut.Steps = st.Steps[:len(s.state.Steps)]
		if labKey(cut) == s.key {
			return i + 1
		}
	}
	return 0
}

// forCompare is the strip of a comparison of a and b.
func (lp *labPath) forCompare(l *i18n.Localizer, a, b api.State) web.LabNav {
	if !lp.manifests[a.Manifest] || !lp.manifests[b.Manifest] {
		return lp.nav(l, "", 0, false)
	}
	return lp.nav(l, labCompareKey(a, b), 0, false)
}

// forAmbient is the strip of the sidecar-or-ambient comparison of st.
func (lp *labPath) forAmbient(l *i18n.Localizer, st api.State) web.LabNav {
	if !lp.manifests[st.Manifest] {
		return lp.nav(l, "", 0, false)
	}
	return lp.nav(l, labAmbientKey(st), 0, false)
}

// labSteps are the steps "apply these steps to my manifest" sets: all of the lab's annotations.
func labSteps() []input.Step {
	return append([]input.Step(nil), labAnnotations...)
}
