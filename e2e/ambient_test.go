//go:build e2e

package e2e

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// TestAmbientCompare: the lab's last chip opens the sidecar-or-ambient comparison of the lab's
// workload, marked as that step: it joins ambient, istio-validation (not istio-init) goes, two
// lifecycles; the node count is typed and sent with the keyboard alone and ztunnel's share
// follows it. The page is looked at on every checked screen, light and dark, with axe.
func TestAmbientCompare(t *testing.T) {
	t.Parallel() // heavy work for the server, which runs one heavy request per test at once (e2e_test.go)
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/"), shown(chip(11)))
	do(ctx, t, clickOn(chip(11)))
	waitFor(ctx, t, `[data-testid="ambient-enrolment"][data-joins="true"]`, "the ambient comparison")
	if got := attr(ctx, t, chip(11), "aria-current"); got == "" {
		t.Error("the ambient page does not mark the lab's last chip")
	}
	if got := text(ctx, t, `[data-testid="ambient"]`); !strings.Contains(got, "initContainers[istio-validation]") || strings.Contains(got, "initContainers[istio-init]") {
		t.Errorf("the sidecar side is not the ambient profile's:\n%s", got)
	}
	everyScreen(ctx, t, sh, "the ambient comparison", "ambient", nil)
	// Why istio-validation goes in ambient: the sidecar side's template lines, nothing on the ambient side.
	do(ctx, t, clickOn(`[data-testid="ambient-changes"] tr[data-path="spec.template.spec.initContainers[istio-validation]"] [data-testid="why-link"]`))
	waitFor(ctx, t, `[data-testid="why-side-1"]`, "the ambient why page")
	wrote, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="why-side-0"] [data-testid="why-lines"] tr.wrote')].map(r => r.textContent).join("\n")`))
	if got := wrote; err != nil || !strings.Contains(got, "istio-validation") {
		t.Errorf("the sidecar side's lines: %q", got)
	}
	checkA11y(ctx, t, "the ambient why page")
	sh.take(ctx, "ambient-why")
	do(ctx, t, clickOn(`[data-testid="why-back"]`))
	waitFor(ctx, t, `[data-testid="ambient-nodes"]`, "the ambient comparison again")

	// The node count, with the keyboard: focus the field, type, Enter.
	do(ctx, t, chromedp.EmulateViewport(1440, 900), focusOn(`[data-testid="ambient-nodes"]`),
		chromedp.KeyEvent(kb.End), chromedp.KeyEvent(kb.Backspace), chromedp.KeyEvent("10"), chromedp.KeyEvent(kb.Enter))
	waitFor(ctx, t, `[data-testid="ambient-nodes"][value="10"]`, "the page for 10 nodes")
	if z := text(ctx, t, `[data-testid="ambient-capacity-ztunnel"]`); !strings.Contains(z, "cpu=2 memory=5Gi") {
		t.Errorf("ztunnel on 10 nodes: %q", z)
	}
	checkA11y(ctx, t, "the ambient comparison on 10 nodes")
	everyScreen(ctx, t, sh, "the ambient capacity", "capacity", onNode(`[data-testid="ambient-capacity"]`, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="ambient-capacity"]`))))
}

// ambientBatch is two Deployments of an ambient namespace (3 and 6 pods) and one outside it.
const ambientBatch = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {istio.io/dataplane-mode: ambient}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 6
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: nginx}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: billing, namespace: legacy}
spec:
  replicas: 2
  selector: {matchLabels: {app: billing}}
  template:
    metadata: {labels: {app: billing}}
    spec: {containers: [{name: billing, image: nginx}]}
`

// TestBatchAmbient: under the ambient profile the batch table's optional ambient columns say
// which workloads join ambient (and why one does not) and each one's share of ztunnel beside its
// sidecars' total, and the totals row what ztunnel asks for on the nodes; the node count is
// typed in the column chooser with the keyboard alone. Looked at on every checked screen, light
// and dark, with axe.
func TestBatchAmbient(t *testing.T) {
	t.Parallel() // heavy work for the server, which runs one heavy request per test at once (e2e_test.go)
	ctx := browser(t)
	sh := newShots(t)
	st := api.State{Manifest: ambientBatch, Settings: engine.Settings{Install: engine.InstallOptions{Set: []string{"profile=ambient"}}}}
	do(ctx, t, chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(baseURL+"/?tab=batch&cols=result,total-requests,ambient,ztunnel-share&s="+url.QueryEscape(permalink.Encode(st))))
	waitFor(ctx, t, `[data-testid="batch"] th[data-col="ztunnel share"]`, "the ztunnel share column")
	rows := text(ctx, t, `[data-testid="batch"] tbody`)
	for _, want := range []string{"web", "api", "billing", "cpu=200m memory=512Mi", "cpu=400m memory=1Gi"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the rows do not have %q:\n%s", want, rows)
		}
	}
	if total := text(ctx, t, `[data-testid="batch-total"]`); !strings.Contains(total, "ztunnel on 3 nodes asks for cpu=600m memory=1.5Gi, shared by 9 pods") {
		t.Errorf("the totals row: %q", total)
	}
	everyScreen(ctx, t, sh, "the batch table with the ambient columns", "batch", onNode(`[data-testid="batch"]`, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="batch"]`))))

	// The node count, with the keyboard: open the column chooser, then in its node field type
	// 40 and press Enter; the shares and the total follow.
	do(ctx, t, chromedp.EmulateViewport(1440, 900), focusOn(`[data-testid="batch-cols"] summary`), chromedp.KeyEvent(kb.Enter),
		focusOn(`[data-testid="batch-nodes"]`), chromedp.KeyEvent(kb.End), chromedp.KeyEvent(kb.Backspace),
		chromedp.KeyEvent("40"), chromedp.KeyEvent(kb.Enter))
	waitFor(ctx, t, `[data-testid="batch-nodes"][value="40"]`, "the batch table on 40 nodes")
	if total := text(ctx, t, `[data-testid="batch-total"]`); !strings.Contains(total, "ztunnel on 40 nodes asks for cpu=8 memory=20Gi, shared by 9 pods") {
		t.Errorf("the totals row on 40 nodes: %q", total)
	}
	do(ctx, t, onNode(`[data-testid="batch-cols"]`, chromedp.SetAttributeValue(`[data-testid="batch-cols"]`, "open", "")))
	everyScreen(ctx, t, sh, "the batch table's node count", "batch-nodes", onNode(`[data-testid="batch-cols"]`, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="batch-cols"]`))))
}
