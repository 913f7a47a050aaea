package handlers

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

// handleCompare shows two states side by side: /compare?a=STATE&b=STATE&la=LABEL&lb=LABEL.
func (s *server) handleCompare() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		page := &web.ComparePage{Version: versionLine()}
		var last [2][]engine.Document
		var states [2]State
		for i, side := range []*web.CompareSide{&page.A, &page.B} {
			key, label := "a", q.Get("la")
			if i == 1 {
				key, label = "b", q.Get("lb")
			}
			if label == "" {
				label = map[int]string{0: "A", 1: "B"}[i]
			}
			st, err := DecodeState(q.Get(key))
			if err != nil {
				return err
			}
			states[i] = st
			side.Label = label
			side.Permalink = view{state: st, step: -1}.permalink()
			tl, err := s.timeline(r.Context(), st)
			var ie *engine.InputError
			if errors.As(err, &ie) {
				side.Error = ie.Error()
				continue
			}
			if err != nil {
				return err
			}
			row := tl.Steps[len(tl.Steps)-1]
			last[i] = row.Documents
			side.Output = row.Output()
			side.Lifecycles = lifecycleViews(engine.Lifecycles(row.Documents), engine.Batch(row.Documents, tl.Findings), 0)
		}
		page.Lab = s.statics.lab().forCompare(i18n.FromContext(r.Context()), states[0], states[1])
		if last[0] != nil && last[1] != nil {
			for _, c := range engine.DiffDocuments(last[0], last[1], "") {
				page.Changes = append(page.Changes, changeView(c, last[1], len(last[1]) > 1))
			}
		}
		page.Head = compareHead(page)
		return render(w, r, http.StatusOK, web.ComparePageView(page))
	})
}

// compareLinks are the one-click comparisons that make sense for a state: a Job classic vs
// native; any workload without vs with holdApplicationUntilProxyStarts.
func compareLinks(st State, docs []engine.Document) []web.CompareLink {
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
		out = append(out, web.CompareLink{Label: "Compare classic vs native", Href: compareHref(a, b, "classic sidecar", "native sidecar")})
	}
	if hasWorkload {
		b := st
		b.Steps = append(append([]engine.Step(nil), st.Steps...), engine.Step{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"})
		out = append(out, web.CompareLink{Label: "Compare without vs with hold", Href: compareHref(st, b, "as is", "with holdApplicationUntilProxyStarts")})
	}
	return out
}

func compareHref(a, b State, la, lb string) string {
	q := url.Values{"a": {EncodeState(a)}, "b": {EncodeState(b)}, "la": {la}, "lb": {lb}}
	return "/compare?" + q.Encode()
}
