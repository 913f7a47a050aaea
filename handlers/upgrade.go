package handlers

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/upgrade"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
)

// An upgrade preview compares a state whose install options carry the user's mesh (the old side)
// with the same state injected by the embedded Istio, that mesh's settings carried over
// (upgrade.NewPlan): the compare view, with the plan as a form that previews again with the
// keys the reader ticks.

// carryFrom is the plan's choice of keys: with chosen, exactly the keys named carry (a form whose
// boxes were ticked); else the default (nil).
func carryFrom(chosen bool, carry []string) func(string) bool {
	if !chosen {
		return nil
	}
	return func(path string) bool { return slices.Contains(carry, path) }
}

// upgradeStates plans st's upgrade: the plan, and the new side's state, which also sets the
// install options set (a Cluster tab's fixes, settingsFixOptions: what the mesh would be
// upgraded with).
func (s *server) upgradeStates(r *http.Request, st api.State, carry func(string) bool, set []string) (*upgrade.Plan, api.State, error) {
	plan, err := upgrade.NewPlan(r.Context(), s.eng(), st.Settings.Install, carry)
	if err != nil {
		return nil, api.State{}, err
	}
	next := st
	next.Settings.Install = plan.New
	next.Settings.Install.Set = append(slices.Clip(plan.New.Set), set...)
	return plan, next, nil
}

// upgradeSet are an upgrade preview's options for its new side: only the fixes' (a link of the
// Cluster tab's), each once.
func upgradeSet(q url.Values) ([]string, error) {
	var out []string
	for _, o := range q["set"] {
		if !slices.Contains(slices.Collect(maps.Values(settingsFixOptions)), o) {
			return nil, httpError{status: http.StatusBadRequest, id: "errors.fix.unknown"}
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// upgradeHref is the upgrade preview of a state, its new side with the install options set.
func upgradeHref(st api.State, set ...string) string {
	return "/upgrade?" + url.Values{"s": {permalink.Encode(st)}, "set": set}.Encode()
}

// upgradeLabels are the two sides' labels, in l's language.
func upgradeLabels(l *i18n.Localizer, st api.State) [2]string {
	return [2]string{l.T("page.upgrade.old", "Revision", engine.RevisionName(st.Settings.Install.Revision)), l.T("page.upgrade.new", "Istio", engine.Version().Istio)}
}

// handleUpgrade is GET /upgrade?s=STATE[&chosen=1&carry=KEY…]: the upgrade preview of STATE.
func (s *server) handleUpgrade() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		st, err := decodeState(q.Get("s"))
		if err != nil {
			return err
		}
		set, err := upgradeSet(q)
		if err != nil {
			return err
		}
		plan, next, err := s.upgradeStates(r, st, carryFrom(q.Get("chosen") != "", q["carry"]), set)
		if err != nil {
			return err
		}
		page, err := s.comparePage(r, [2]api.State{st, next}, upgradeLabels(i18n.FromContext(r.Context()), st))
		if err != nil {
			return err
		}
		u := &web.UpgradePlanView{State: q.Get("s"), Embedded: engine.Version().Istio, MeshUnknown: plan.MeshUnknown, Set: set}
		if plan.OwnTemplates {
			u.OldIstio = plan.OldIstio
			if u.OldIstio == "" {
				u.OldIstio = "?"
			}
		}
		for _, k := range plan.Keys {
			yours, _ := json.Marshal(k.Yours)
			def, _ := json.Marshal(k.Default)
			u.Keys = append(u.Keys, web.UpgradeKeyView{Path: k.Path, Yours: string(yours), Default: string(def), Carried: k.Carried, Unknown: k.Unknown, Removed: k.Removed, NoEffect: k.NoEffect, MovedTo: k.MovedTo})
		}
		page.Upgrade = u
		page.Presenting = presenting(r, i18n.FromContext(r.Context()).T("page.upgrade.plan", "Istio", u.Embedded))
		page.PresentPhases()
		return render(w, r, http.StatusOK, web.ComparePageView(page))
	})
}

// handleAPIUpgrade is POST /api/v1/upgrade.
func (s *server) handleAPIUpgrade() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		var req api.UpgradeRequest
		st, err := s.apiRequest(w, r, &req, &req.InjectRequest)
		if err != nil {
			return err
		}
		if err := s.work(r.Context(), st); err != nil {
			return err
		}
		var carry func(string) bool
		if req.Carry != nil {
			carry = carryFrom(true, *req.Carry)
		}
		p, err := upgrade.NewPreview(r.Context(), s.eng(), []byte(req.Manifest), req.Steps, req.Settings, carry)
		if err != nil {
			return err
		}
		var why []upgrade.Why
		if req.Explain {
			if why, err = p.Explain(r.Context(), s.eng(), []byte(req.Manifest), req.Steps, req.Settings); err != nil {
				return err
			}
		}
		href := upgradeHref(st)
		if req.Carry != nil {
			q := url.Values{"s": {permalink.Encode(st)}, "chosen": {"1"}, "carry": *req.Carry}
			href = "/upgrade?" + q.Encode()
		}
		return writeJSON(w, http.StatusOK, api.UpgradeResponse{Preview: *p, Link: href, Why: why})
	})
}
