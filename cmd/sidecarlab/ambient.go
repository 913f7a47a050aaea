package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/wording"
)

// ambientFlags are diff's sidecar-or-ambient comparison: each workload injected with Istio's
// ambient profile (CNI on) beside itself as written in an ambient namespace (ambient.Compare),
// with Pod Security's verdicts on both (admission.ComparePodSecurity).
type ambientFlags struct {
	on    bool
	nodes int
}

func (f *ambientFlags) register(c *cli, cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.on, "ambient", false, c.T("cli.flag.diff.ambient"))
	fl.IntVar(&f.nodes, "nodes", engine.DefaultAmbientNodes, c.T("cli.flag.diff.nodes"))
}

// check refuses --nodes without --ambient, and --ambient with --unified or --upgrade.
func (f *ambientFlags) check(c *cli, cmd *cobra.Command, unified, upgrade bool) error {
	switch {
	case !f.on && cmd.Flags().Changed("nodes"):
		return usageError{c.T("cli.error.nodes_without_ambient")}
	case f.on && unified:
		return usageError{c.T("cli.error.ambient_unified")}
	case f.on && upgrade:
		return usageError{c.T("cli.error.ambient_upgrade")}
	}
	return nil
}

// run prints the comparison of the session's manifest.
func (f *ambientFlags) run(c *cli, j *session, output string) error {
	cmp, err := ambient.Compare(c.ctx, j.eng, j.manifest, j.steps, j.settings, f.nodes)
	if err != nil {
		return j.locate(err)
	}
	if err := admission.ComparePodSecurity(c.ctx, cmp, j.settings); err != nil {
		return err
	}
	// In JSON too the sentences are in the CLI's language; the data is the same in every one.
	words := c.words().AmbientComparison(cmp)
	if output == "json" {
		err = writeJSON(c.stdout, words)
	} else {
		_, err = io.WriteString(c.stdout, ambientText(c, words))
	}
	if err != nil {
		return err
	}
	for _, w := range words.Workloads {
		if w.Error != "" {
			return errSilent
		}
	}
	return nil
}

// ambientText is the comparison as `sidecarlab diff --ambient` prints it: per workload, the
// sidecar side's status, whether the pod joins ambient, the fields moving to ambient takes out,
// both lifecycles, Pod Security at each level and the annotations; then the capacity.
func ambientText(c *cli, cmp wording.AmbientComparison) string {
	var b strings.Builder
	p := func(indent int, s string) { fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", indent), s) }
	p(0, "# "+c.T("cli.ambient.head", "Istio", engine.Version().Istio, "Install", strings.Join(cmp.Settings.Install.Set, " ")))
	for _, w := range cmp.Workloads {
		name := strings.TrimPrefix(w.Namespace+"/"+w.Name, "/")
		p(0, c.T("cli.admit.workload", "Doc", w.Doc, "Kind", w.Kind, "Name", name))
		if w.Error != "" {
			p(1, c.T("cli.ambient.failed", "Error", w.Error))
			continue
		}
		if w.Status != engine.StatusInjected {
			p(1, c.T("cli.ambient.not_injected", "Reason", w.Reason))
		}
		if w.Enrolment != nil {
			p(1, w.Enrolment.Text)
			for _, f := range w.Enrolment.RunTime {
				p(2, f)
			}
		}
		if w.InjectLabel {
			p(1, c.T("cli.ambient.inject_label"))
		}
		p(1, c.T("cli.ambient.changes"))
		if len(w.Changes) == 0 {
			p(2, c.T("cli.ambient.no_change"))
		}
		for _, ch := range w.Changes {
			p(2, c.words().Change(ch))
		}
		if l := w.SidecarLifecycle; l != nil {
			p(1, c.T("cli.ambient.sidecar_lifecycle", "Ready", l.Ready))
			for _, v := range l.Verdicts {
				if v.Answer != lifecycle.NotApplicable {
					p(2, c.T("cli.ambient.verdict", "Question", v.Question, "Answer", c.words().Answer(v.Answer), "Why", v.Why))
				}
			}
		}
		if l := w.AmbientLifecycle; l != nil {
			p(1, c.T("cli.ambient.ambient_lifecycle", "Ready", l.Ready))
			for _, f := range w.Facts {
				p(2, f.Text)
			}
		}
		for _, side := range []struct {
			id string
			ps []ambient.PodSecurity
		}{{"cli.ambient.psa_sidecar", w.SidecarPodSecurity}, {"cli.ambient.psa_ambient", w.AmbientPodSecurity}} {
			if len(side.ps) == 0 {
				continue
			}
			p(1, c.T(side.id))
			for _, v := range side.ps {
				verdict := c.T("cli.ambient.psa_allowed", "Level", v.Level)
				if !v.Allowed {
					verdict = c.T("cli.ambient.psa_forbidden", "Level", v.Level, "Violations", strings.Join(v.Violations, "; "))
				}
				p(2, verdict)
			}
		}
		if len(w.Annotations) > 0 {
			p(1, c.T("cli.ambient.annotations"))
			for _, r := range w.Annotations {
				p(2, r.Annotation+": "+r.Text+" — "+r.Why)
				for _, where := range r.Where {
					p(3, c.T("cli.ambient.where", "Place", where))
				}
				for _, s := range r.Sources {
					p(3, s.URL)
				}
			}
		}
		b.WriteString("\n")
	}
	k := cmp.Capacity
	p(0, c.T("cli.ambient.capacity", "Nodes", k.Nodes))
	p(1, c.T("cli.ambient.sidecars", "Pods", k.Pods, "Requests", pairText(k.SidecarsCPU, k.SidecarsMemory)))
	if k.ZtunnelCPU != "" || k.ZtunnelMemory != "" {
		p(1, c.T("cli.ambient.ztunnels", "Nodes", k.Nodes, "Each", pairText(k.ZtunnelCPU, k.ZtunnelMemory), "Requests", pairText(k.ZtunnelsCPU, k.ZtunnelsMemory)))
	} else {
		p(1, c.T("cli.ambient.no_ztunnel"))
	}
	p(1, c.T("cli.ambient.waypoint", "Requests", pairText(k.WaypointCPU, k.WaypointMemory)))
	return b.String()
}

// pairText is CPU and memory as engine.Resources writes them, or "-" for neither.
func pairText(cpu, mem string) string {
	if s := (engine.Resources{CPU: cpu, Memory: mem}).String(); s != "" {
		return s
	}
	return "-"
}
