//go:build e2e

package e2e

import "testing"

// TestHeavyWork runs the browser tests whose requests are heavy work for the server (a new
// installation rendered: a mesh of the user's own, the upgrade preview, Istio's ambient profile,
// the Cluster tab's fixes): one after another, since the server runs one heavy request at a time
// (handlers.Config.HeavySlots) and lets another wait only QueueWait (5 s) before a 503 — but as
// one parallel test, beside the light ones, where they were six tests before every parallel one,
// with a core idle while they ran (~52 s).
func TestHeavyWork(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"AmbientCompare", ambientCompare},
		{"BatchAmbient", batchAmbient},
		{"ClusterTab", clusterTab},
		{"ClusterAmbient", clusterAmbient},
		{"OwnMesh", ownMesh},
		{"UpgradePreview", upgradePreview},
	} {
		t.Run(c.name, c.run)
	}
}
