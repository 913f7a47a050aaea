package handlers

import (
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/web"
)

// labPath is the lab's guided path: each step one click away, each a permalink. Annotation steps
// are one annotation on the Deployment preset, so each diff shows exactly that annotation. The
// links never change; the server makes them once.
func labPath() []web.LabStep {
	deploy, _ := web.FindPreset("deployment")
	job, _ := web.FindPreset("job")
	batch, _ := web.FindPreset("lab-batch")
	base := State{Version: StateVersion, Istio: engine.Version().Istio, Manifest: deploy.Manifest}
	one := func(steps ...engine.Step) string {
		st := base
		st.Steps = steps
		return view{state: st, step: -1}.permalink()
	}
	jobState := State{Version: StateVersion, Istio: engine.Version().Istio, Manifest: job.Manifest}
	classic, native := jobState, jobState
	classic.Settings.Mode, native.Settings.Mode = engine.ModeClassic, engine.ModeNative
	batchState := State{Version: StateVersion, Istio: engine.Version().Istio, Manifest: batch.Manifest}
	steps := []web.LabStep{
		{Title: "Default injection", Href: one(), Hint: "What Istio adds to a Deployment with no annotation"},
		{Title: "Resources", Href: one(engine.Step{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}), Hint: "proxyCPU — and the other defaults it drops"},
		{Title: "Proxy config", Href: one(engine.Step{Key: "proxy.istio.io/config", Value: "concurrency: 2\nterminationDrainDuration: 30s"}), Hint: "proxy.istio.io/config becomes the PROXY_CONFIG env"},
		{Title: "Hold", Href: one(engine.Step{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}), Hint: "istio-proxy first, postStart: pilot-agent wait"},
		{Title: "Exclude ports", Href: one(engine.Step{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "3306,6379"}), Hint: "istio-init's arguments"},
		{Title: "inject: false", Href: one(engine.Step{Key: "sidecar.istio.io/inject", Value: "false"}), Hint: "Nothing injected"},
		{Title: "Job two ways", Href: compareHref(classic, native, "classic sidecar", "native sidecar"), Hint: "Where the proxy lands, and whether the Job completes"},
		{Title: "Batch of 8", Href: view{state: batchState, tab: "batch", step: -1}.permalink(), Hint: "Eight workloads as one table"},
	}
	for i := range steps {
		steps[i].N = i + 1
	}
	return steps
}
