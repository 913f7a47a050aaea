package handlers

import (
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// handleCompare shows two states side by side: /compare?a=STATE&b=STATE&la=LABEL&lb=LABEL.
func (s *server) handleCompare() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var states [2]api.State
		var labels [2]string
		for i, key := range []string{"a", "b"} {
			st, err := decodeState(q.Get(key))
			if err != nil {
				return err
			}
			states[i], labels[i] = st, q.Get("l"+key)
			if labels[i] == "" {
				labels[i] = strings.ToUpper(key)
			}
		}
		page, err := s.comparePage(r, states, labels)
		if err != nil {
			return err
		}
		page.Presenting = presenting(r, i18n.FromContext(r.Context()).T("page.compare.heading", "A", page.A.Label, "B", page.B.Label))
		page.PresentPhases()
		return render(w, r, http.StatusOK, web.ComparePageView(page))
	})
}

// comparePage is two states side by side: each one's lifecycles, output and pitfalls, and the
// field diff from the first's output to the second's. A side Istio rejects shows its error.
func (s *server) comparePage(r *http.Request, states [2]api.State, labels [2]string) (*web.ComparePage, error) {
	l := i18n.FromContext(r.Context())
	page := &web.ComparePage{Version: versionLine()}
	var last [2][]engine.Document
	var found [2][]engine.Finding
	for i, side := range []*web.CompareSide{&page.A, &page.B} {
		st := states[i]
		side.Label = compareLabel(l, labels[i])
		side.Permalink = view{state: st, step: -1}.permalink()
		tl, err := s.timeline(r.Context(), st)
		var ie *input.Error
		if errors.As(err, &ie) {
			side.Error = wording.In(l).InputErrorText(ie)
			continue
		}
		if err != nil {
			return nil, err
		}
		row := tl.Steps[len(tl.Steps)-1]
		last[i] = row.Documents
		side.DevImage = web.DevImageNote(l, row.Documents)
		// A long value's lines are cut, as in the YAML tab: the side's link has everything.
		out, cut := yamlShare(row.Output(), defaultLimit)
		if cut {
			side.OutputCut = l.T("page.compare.cut", "Shown", byteSizeIn(l, int64(len(out))))
		}
		side.Output, _ = web.CutLines(l, out, web.MaxShownLine)
		side.Lifecycles = web.LifecycleViews(l, engine.Lifecycles(row.Documents), engine.Batch(row.Documents, tl.Findings), 0)
		found[i] = tl.Findings
		if err := s.compareAdmission(r, st, side); err != nil {
			return nil, err
		}
	}
	page.Lab = s.statics.lab().forCompare(l, states[0], states[1])
	if last[0] != nil && last[1] != nil {
		changes, err := engine.DiffDocuments(r.Context(), last[0], last[1], "")
		if err != nil {
			return nil, err
		}
		for _, c := range changes {
			page.Changes = append(page.Changes, web.ChangeViewOf(l, c, last[1], len(last[1]) > 1, -1))
		}
		if len(last[1]) > 1 {
			// A batch: each document, changed or not.
			for _, d := range last[1] {
				n := 0
				for _, c := range changes {
					if c.Doc == d.Index {
						n++
					}
				}
				page.Documents = append(page.Documents, web.CompareDoc{Doc: l.T("results.cluster.doc", "Doc", d.Index, "Kind", d.Kind, "Name", d.Name), Changes: n})
			}
		}
		// The pitfalls one side has and the other has not.
		w := wording.In(l)
		page.A.OnlyHere, page.B.OnlyHere = onlyIn(w, found[0], found[1]), onlyIn(w, found[1], found[0])
	}
	page.Head = web.CompareHead(page)
	return page, nil
}

// compareAdmission is each document's verdict when its Pod is created in the state's namespace:
// a side's Pod Security verdict (its words when it rejects), which an upgrade can change (an init
// container that needs NET_ADMIN under baseline).
func (s *server) compareAdmission(r *http.Request, st api.State, side *web.CompareSide) error {
	rs, err := s.admit(r.Context(), st)
	var ie *input.Error
	if errors.As(err, &ie) {
		return nil // the side's output says why; no verdicts to compare
	}
	if err != nil {
		return err
	}
	side.Namespace = namespaceText(i18n.FromContext(r.Context()), namespaceOf(st.Settings))
	for _, res := range rs {
		if res.Error != "" {
			continue // not a workload that makes Pods
		}
		v := web.CompareVerdict{Doc: res.Kind + "/" + res.Name, Admitted: res.Admitted, Why: res.Violations}
		if res.WebhookError != "" {
			v.Why = append(v.Why, res.WebhookError)
		}
		side.Admission = append(side.Admission, v)
	}
	return nil
}

// onlyIn are the findings of a that b does not have (the same check on the same document, with
// the same facts), worded by w.
func onlyIn(w wording.Words, a, b []engine.Finding) []string {
	var out []string
	for _, f := range a {
		if !slices.ContainsFunc(b, func(g engine.Finding) bool {
			return g.Check == f.Check && g.Doc == f.Doc && g.Path == f.Path && maps.Equal(g.Params, f.Params)
		}) {
			out = append(out, w.Message(f))
		}
	}
	return out
}

// compareLinks are compareLinksIn English, for a caller that has no request's language yet.
func compareLinks(st api.State, docs []engine.Document) []web.CompareLink {
	return compareLinksIn(i18n.For(i18n.Default), st, docs)
}

// compareLinksIn are the one-click comparisons that make sense for a state, labelled in l's
// language: a Job classic vs native; any workload without vs with
// holdApplicationUntilProxyStarts — the state itself on the side it is on (with hold when Istio
// held every proxy of it, whatever asked: a step, the pod's annotation, the mesh's default); and
// any workload with a sidecar and in ambient.
func compareLinksIn(l *i18n.Localizer, st api.State, docs []engine.Document) []web.CompareLink {
	var hasJob, hasWorkload bool
	for _, d := range docs {
		hasJob = hasJob || d.Kind == "Job" || d.Kind == "CronJob"
		hasWorkload = hasWorkload || d.Injectable
	}
	var out []web.CompareLink
	if hasJob {
		a, b := st, st
		a.Settings.Mode, b.Settings.Mode = engine.ModeClassic, engine.ModeNative
		a.Settings.KubernetesVersion, b.Settings.KubernetesVersion = "", ""
		out = append(out, web.CompareLink{Label: l.T("errors.compare.link-modes"), Href: compareHref(a, b, "classic sidecar", "native sidecar")})
	}
	if !st.Settings.Install.Mesh.IsZero() {
		out = append(out, web.CompareLink{Label: l.T("errors.compare.link-upgrade", "Istio", engine.Version().Istio), Href: upgradeHref(st)})
	}
	if hasWorkload {
		if held(docs) {
			out = append(out, web.CompareLink{Label: l.T("errors.compare.link-hold"), Href: compareHref(withHold(st, false), st, "without holdApplicationUntilProxyStarts", "as is")})
		} else {
			out = append(out, web.CompareLink{Label: l.T("errors.compare.link-hold"), Href: compareHref(st, withHold(st, true), "as is", "with holdApplicationUntilProxyStarts")})
		}
		if st.Settings.Install.Mesh.IsZero() {
			// The ambient profile renders from the embedded charts; a mesh's own cannot take it.
			out = append(out, web.CompareLink{Label: l.T("errors.compare.link-ambient"), Href: ambientHref(st, 0)})
		}
	}
	return out
}

// held says Istio held the app until the proxy started in every injected pod of docs (the
// lifecycle's answer: the proxy first, with its postStart wait).
func held(docs []engine.Document) bool {
	n := 0
	for _, lc := range engine.Lifecycles(docs) {
		for _, v := range lc.Verdicts {
			if v.ID != "app-before-proxy" || v.Reason == "no-proxy" {
				continue
			}
			if v.Reason != "first-with-wait" {
				return false
			}
			n++
		}
	}
	return n > 0
}

// withHold is st with one more step that sets holdApplicationUntilProxyStarts to on in the pods'
// proxy.istio.io/config, keeping what the state's last such step set beside it (a step replaces
// the annotation whole).
func withHold(st api.State, on bool) api.State {
	cfg := map[string]any{}
	for _, s := range st.Steps {
		if s.Key == "proxy.istio.io/config" {
			cfg = map[string]any{}
			if yaml.Unmarshal([]byte(s.Value), &cfg) != nil || cfg == nil {
				cfg = map[string]any{}
			}
		}
	}
	cfg["holdApplicationUntilProxyStarts"] = on
	value, err := yaml.Marshal(cfg)
	if err != nil { // a value sigs.k8s.io/yaml read is one it writes
		value = []byte("holdApplicationUntilProxyStarts: " + strconv.FormatBool(on))
	}
	st.Steps = append(append([]input.Step(nil), st.Steps...), input.Step{Key: "proxy.istio.io/config", Value: strings.TrimSuffix(string(value), "\n")})
	return st
}

func compareHref(a, b api.State, la, lb string) string {
	q := url.Values{"a": {permalink.Encode(a)}, "b": {permalink.Encode(b)}, "la": {la}, "lb": {lb}}
	return "/compare?" + q.Encode()
}

// compareLabels are the labels compareLinks puts into a comparison's address, which stays
// language-free, and the messages that say them in the reader's language.
var compareLabels = map[string]string{
	"classic sidecar":                         "errors.compare.classic",
	"native sidecar":                          "errors.compare.native",
	"as is":                                   "errors.compare.as-is",
	"with holdApplicationUntilProxyStarts":    "errors.compare.with-hold",
	"without holdApplicationUntilProxyStarts": "errors.compare.without-hold",
}

// webhookLabel starts the label of a side injected as Istio's webhook on nodes of a Kubernetes
// version (the lab's Job step compares two).
const webhookLabel = "webhook, Kubernetes "

// compareLabel is a side's label as the reader reads it: one of compareLinks' in their language,
// any other (a person's own ?la=) as it is.
func compareLabel(l *i18n.Localizer, label string) string {
	if id, ok := compareLabels[label]; ok {
		return l.T(id, "Option", "holdApplicationUntilProxyStarts")
	}
	if v, ok := strings.CutPrefix(label, webhookLabel); ok && len(v) <= 8 {
		return l.T("errors.compare.webhook", "Version", v)
	}
	return label
}

// presenting is presenter mode of the view r asks for (?present=1), named label on its slides:
// the way in and out are the same address with and without it.
func presenting(r *http.Request, label string) web.Presenting {
	q := r.URL.Query()
	q.Del("lang") // carried by the page's links (web.Href) when the address chose one
	on := q.Get("present") == "1"
	q.Del("present")
	exit := r.URL.Path + "?" + q.Encode()
	q.Set("present", "1")
	return web.Presenting{On: on, Href: r.URL.Path + "?" + q.Encode(), ExitHref: exit, Label: label}
}
