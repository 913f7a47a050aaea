// Package lifecycle is what the kubelet will do with an injected pod — the order its containers
// start and stop in, and the three verdicts people ask of it — read from the pod spec alone, and
// which container of a pod is Istio's proxy.
package lifecycle

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Lifecycle is what the kubelet will do with an injected pod, derived from the pod spec alone under
// its documented rules: init containers run one at a time, each to completion; a sidecar init
// container (restartPolicy Always) is started — and its startupProbe must pass — before the next;
// regular containers start in list order, and a postStart hook must return before the next one
// starts; at termination, regular containers get their preStop hooks and SIGTERM together, and
// sidecar init containers are stopped after them, in reverse order; a Job's pod completes only when
// every regular container has exited. This is sidecarlab's own reading of the kubelet, not Istio's.
type Lifecycle struct {
	Doc  int    `json:"doc"`
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Containers are the pod's containers in the order the kubelet starts them.
	Containers []Container `json:"containers"`
	Start      []Event     `json:"start"`
	Stop       []Event     `json:"stop"`
	Verdicts   []Verdict   `json:"verdicts"`
	// Ready is what `kubectl get pod` shows in READY once everything runs ("2/2"): regular
	// containers and sidecar init containers count, plain init containers do not.
	Ready string `json:"ready"`
}

// Container is one container of the pod.
type Container struct {
	Name string `json:"name"`
	// Role is "init" (runs to completion), "sidecar" (an init container with restartPolicy
	// Always) or "app" (a regular container).
	Role  string `json:"role"`
	Proxy bool   `json:"proxy,omitempty"`
}

// Event is one step of the start or stop sequence. Like a verdict it carries an id, not
// a sentence; the edge words it.
type Event struct {
	// Container is the container the event is about ("app, worker" for all regular containers).
	Container string `json:"container"`
	// Event names what happens:
	//
	//	start: init-runs; sidecar-starts; sidecar-starts-probe (path); starts;
	//	       starts-post-start (hook)
	//	stop:  sigterm; pre-stop (hook); apps-exited; sidecar-sigterm; sidecar-pre-stop (hook)
	Event  string            `json:"event"`
	Params map[string]string `json:"params,omitempty"`
	// Blocks is true when the next event waits for this one to finish.
	Blocks bool `json:"blocks,omitempty"`
}

// Verdict answers one question about the pod at run time. It carries ids, not sentences: the
// edge words the question (by ID) and the reason (by Reason, with Params).
type Verdict struct {
	// ID names the question: "app-before-proxy", "job-completes" or "proxy-outlives-app".
	ID     string `json:"id"`
	Answer Answer `json:"answer"`
	// Goodness says whether the answer is the one a person wants: "yes" is good for
	// job-completes and bad for app-before-proxy (the startup race). The page colours by it,
	// never by yes or no.
	Goodness Goodness `json:"goodness"`
	// Reason names why, per question (see verdicts); Params are its facts.
	Reason string            `json:"reason"`
	Params map[string]string `json:"params,omitempty"`
}

// Answer is a verdict's answer: yes, no, or not applicable (the question does not apply to the
// pod: no proxy, not a Job). The one type every edge reads it by; wording.Words.Answer says it.
type Answer string

const (
	Yes           Answer = "yes"
	No            Answer = "no"
	NotApplicable Answer = "n/a"
)

// Goodness is whether a verdict's answer is what a person wants of a pod.
type Goodness string

const (
	Good    Goodness = "good"    // what you want
	Bad     Goodness = "bad"     // the misbehaviour the lab warns about
	Neutral Goodness = "neutral" // the question does not apply ("n/a")
)

// wantYes says, per verdict id, whether "yes" is the wanted answer. This is sidecarlab's own
// judgement: the app must not send traffic before the proxy is ready; a Job's pod must complete;
// the proxy should outlive the app so the app's last requests still go out.
var wantYes = map[string]bool{"app-before-proxy": false, "job-completes": true, "proxy-outlives-app": true}

// Of is the start and stop order of the pod spec of the document doc (1-based), a kind named
// name, with the verdicts of that kind.
func Of(doc int, kind, name string, spec *corev1.PodSpec) Lifecycle {
	l := Lifecycle{Doc: doc, Kind: kind, Name: name}
	ready := 0
	var sidecars []corev1.Container
	for _, c := range spec.InitContainers {
		if IsSidecarInit(c) {
			ready++
			sidecars = append(sidecars, c)
			l.Containers = append(l.Containers, Container{Name: c.Name, Role: "sidecar", Proxy: c.Name == "istio-proxy"})
			ev := Event{Container: c.Name, Event: "sidecar-starts"}
			if c.StartupProbe != nil {
				ev.Event, ev.Blocks = "sidecar-starts-probe", true
				ev.Params = map[string]string{"path": probePath(c.StartupProbe)}
			}
			l.Start = append(l.Start, ev)
			continue
		}
		l.Containers = append(l.Containers, Container{Name: c.Name, Role: "init", Proxy: c.Name == "istio-proxy"})
		l.Start = append(l.Start, Event{Container: c.Name, Event: "init-runs", Blocks: true})
	}
	for _, c := range spec.Containers {
		ready++
		l.Containers = append(l.Containers, Container{Name: c.Name, Role: "app", Proxy: c.Name == "istio-proxy"})
		if ps := PostStart(c); ps != "" {
			l.Start = append(l.Start, Event{Container: c.Name, Event: "starts-post-start", Params: map[string]string{"hook": ps}, Blocks: true})
		} else {
			l.Start = append(l.Start, Event{Container: c.Name, Event: "starts"})
		}
	}
	l.Ready = fmt.Sprintf("%d/%d", ready, ready)

	var apps []string
	for _, c := range spec.Containers {
		apps = append(apps, c.Name)
		if ps := PreStop(c); ps != "" {
			l.Stop = append(l.Stop, Event{Container: c.Name, Event: "pre-stop", Params: map[string]string{"hook": ps}})
		} else {
			l.Stop = append(l.Stop, Event{Container: c.Name, Event: "sigterm"})
		}
	}
	if len(sidecars) > 0 {
		l.Stop = append(l.Stop, Event{Container: strings.Join(apps, ", "), Event: "apps-exited", Blocks: true})
	}
	for i := len(sidecars) - 1; i >= 0; i-- {
		c := sidecars[i]
		ev := Event{Container: c.Name, Event: "sidecar-sigterm"}
		if ps := PreStop(c); ps != "" {
			ev.Event, ev.Params = "sidecar-pre-stop", map[string]string{"hook": ps}
		}
		l.Stop = append(l.Stop, ev)
	}
	l.Verdicts = verdicts(kind, spec)
	return l
}

// goodness judges an answer to the question id.
func goodness(id string, answer Answer) Goodness {
	switch {
	case answer != Yes && answer != No:
		return Neutral
	case (answer == Yes) == wantYes[id]:
		return Good
	}
	return Bad
}

// PostStart is the container's postStart hook as written ("pilot-agent wait"), or "".
func PostStart(c corev1.Container) string {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return ""
	}
	return handlerText(c.Lifecycle.PostStart)
}

// PreStop is the container's preStop hook as written, or "".
func PreStop(c corev1.Container) string {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		return ""
	}
	return handlerText(c.Lifecycle.PreStop)
}

func handlerText(h *corev1.LifecycleHandler) string {
	switch {
	case h.Exec != nil:
		return strings.Join(h.Exec.Command, " ")
	case h.HTTPGet != nil:
		return "GET " + h.HTTPGet.Path
	case h.Sleep != nil:
		return fmt.Sprintf("sleep %ds", h.Sleep.Seconds)
	}
	return "a hook"
}

// verdicts answers the three questions people ask of an injected pod. The reasons:
//
//	app-before-proxy:   no-proxy; native-startup-probe (path); native-no-startup-probe;
//	                    first-with-wait; first-without-wait; not-first (position, count)
//	job-completes:      not-a-job; completes; classic-proxy-keeps-running
//	proxy-outlives-app: no-proxy; native; classic
func verdicts(kind string, spec *corev1.PodSpec) []Verdict {
	proxy, native, idx := ProxyContainer(spec)
	traffic := Verdict{ID: "app-before-proxy"}
	job := Verdict{ID: "job-completes"}
	drain := Verdict{ID: "proxy-outlives-app"}
	switch {
	case proxy == nil:
		traffic.Answer, traffic.Reason = NotApplicable, "no-proxy"
		drain.Answer, drain.Reason = NotApplicable, "no-proxy"
	case native && proxy.StartupProbe != nil:
		traffic.Answer, traffic.Reason = No, "native-startup-probe"
		traffic.Params = map[string]string{"path": probePath(proxy.StartupProbe)}
	case native:
		traffic.Answer, traffic.Reason = Yes, "native-no-startup-probe"
	case idx == 0 && PostStartWait(proxy):
		traffic.Answer, traffic.Reason = No, "first-with-wait"
	case idx == 0:
		traffic.Answer, traffic.Reason = Yes, "first-without-wait"
	default:
		traffic.Answer, traffic.Reason = Yes, "not-first"
		traffic.Params = map[string]string{"position": strconv.Itoa(idx + 1), "count": strconv.Itoa(len(spec.Containers))}
	}
	if proxy != nil {
		if native {
			drain.Answer, drain.Reason = Yes, "native"
		} else {
			drain.Answer, drain.Reason = No, "classic"
		}
	}
	switch {
	case kind != "Job" && kind != "CronJob":
		job.Answer, job.Reason = NotApplicable, "not-a-job"
	case proxy == nil || native:
		job.Answer, job.Reason = Yes, "completes"
	default:
		job.Answer, job.Reason = No, "classic-proxy-keeps-running"
	}
	out := []Verdict{traffic, job, drain}
	for i := range out {
		out[i].Goodness = goodness(out[i].ID, out[i].Answer)
	}
	return out
}

// probePath is where a startup probe looks, or "" when it is not an HTTP probe.
func probePath(p *corev1.Probe) string {
	if p.HTTPGet != nil {
		return p.HTTPGet.Path
	}
	return ""
}

// ProxyContainer finds istio-proxy in a pod spec and says whether it is a native sidecar.
func ProxyContainer(spec *corev1.PodSpec) (c *corev1.Container, native bool, index int) {
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == "istio-proxy" {
			return &spec.InitContainers[i], true, i
		}
	}
	for i := range spec.Containers {
		if spec.Containers[i].Name == "istio-proxy" {
			return &spec.Containers[i], false, i
		}
	}
	return nil, false, -1
}

// IsSidecarInit says the init container is a sidecar (restartPolicy Always): a native sidecar.
func IsSidecarInit(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// PostStartWait says the container's postStart hook is pilot-agent wait: the hold that keeps the
// next container from starting until the proxy is ready.
func PostStartWait(c *corev1.Container) bool {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil || c.Lifecycle.PostStart.Exec == nil {
		return false
	}
	return slices.Equal(c.Lifecycle.PostStart.Exec.Command, []string{"pilot-agent", "wait"})
}
