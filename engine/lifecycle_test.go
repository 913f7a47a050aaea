package engine

import (
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// TestLifecycleVerdicts checks each verdict on the cases that flip it.
func TestLifecycleVerdicts(t *testing.T) {
	e := testEngine(t)
	job := readFile(t, "testdata/corpus/job.yaml")
	deploy := []byte(labDeployment)
	cases := []struct {
		name                       string
		manifest                   []byte
		steps                      []input.Step
		s                          Settings
		traffic, completes, drains string
		goodness                   string // of the three verdicts, in that order
		ready                      string
		startOrder                 []string
	}{
		{"classic without hold", deploy, nil, Settings{}, "yes", "n/a", "no", "bad neutral bad", "2/2", []string{"istio-init", "app", "istio-proxy"}},
		{"classic with hold", deploy, []input.Step{hold}, Settings{}, "no", "n/a", "no", "good neutral bad", "2/2", []string{"istio-init", "istio-proxy", "app"}},
		{"native", deploy, nil, Settings{Mode: ModeNative}, "no", "n/a", "yes", "good neutral good", "2/2", []string{"istio-init", "istio-proxy", "app"}},
		{"Job classic", job, nil, Settings{}, "yes", "no", "no", "bad bad bad", "2/2", []string{"istio-init", "migrate", "istio-proxy"}},
		{"Job native", job, nil, Settings{Mode: ModeNative}, "no", "yes", "yes", "good good good", "2/2", []string{"istio-init", "istio-proxy", "migrate"}},
		{"not injected", deploy, []input.Step{{Key: "sidecar.istio.io/inject", Value: "false"}}, Settings{}, "n/a", "n/a", "n/a", "neutral neutral neutral", "1/1", []string{"app"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustInject(t, e, c.manifest, c.steps, c.s)
			ls := Lifecycles(r.Documents)
			if len(ls) != 1 {
				t.Fatalf("%d lifecycles", len(ls))
			}
			l := ls[0]
			got := map[string]string{}
			var good []string
			for _, v := range l.Verdicts {
				got[v.ID] = string(v.Answer)
				good = append(good, string(v.Goodness))
				if v.Reason == "" {
					t.Errorf("verdict %s without a reason", v.ID)
				}
			}
			if got["app-before-proxy"] != c.traffic || got["job-completes"] != c.completes || got["proxy-outlives-app"] != c.drains {
				t.Fatalf("verdicts %v, want traffic %s, completes %s, drains %s", got, c.traffic, c.completes, c.drains)
			}
			// Goodness follows what a person wants, not yes/no: "yes" is bad for the startup
			// race and good for a Job that completes.
			if g := strings.Join(good, " "); g != c.goodness {
				t.Fatalf("goodness %q, want %q", g, c.goodness)
			}
			if l.Ready != c.ready {
				t.Fatalf("READY %s, want %s", l.Ready, c.ready)
			}
			var order []string
			for _, ev := range l.Start {
				order = append(order, ev.Container)
			}
			if strings.Join(order, ",") != strings.Join(c.startOrder, ",") {
				t.Fatalf("start order %v, want %v", order, c.startOrder)
			}
		})
	}
}

func TestLifecycleStopOrder(t *testing.T) {
	e := testEngine(t)
	r := mustInject(t, e, []byte(labDeployment), nil, Settings{Mode: ModeNative})
	l := Lifecycles(r.Documents)[0]
	last := l.Stop[len(l.Stop)-1]
	if last.Container != "istio-proxy" || last.Event != "sidecar-pre-stop" {
		t.Fatalf("a native proxy stops last, after its preStop drain: %+v", l.Stop)
	}
	r = mustInject(t, e, []byte(labDeployment), nil, Settings{})
	l = Lifecycles(r.Documents)[0]
	for _, ev := range l.Stop {
		if ev.Blocks {
			t.Fatalf("classic: nothing waits at stop, got %+v", ev)
		}
	}
}
