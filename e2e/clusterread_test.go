//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestClusterRead: a server that reads its cluster (serve --cluster-read, here the test
// cluster's) offers the cluster's revisions in the settings and its namespaces in the Cluster
// tab's group; a learner picks revision cni and namespace default with the keyboard and applies:
// the settings say the mesh is revision cni's and the namespace's fields hold default's. The page
// passes axe at every checked size and theme, without sideways scrolling.
func TestClusterRead(t *testing.T) {
	t.Parallel()
	kubeconfig := testkit.Kubeconfig(t)
	if kubeconfig == "" {
		if os.Getenv("SIDECARLAB_REQUIRE_CONTROLPLANE") != "" {
			t.Fatal("SIDECARLAB_REQUIRE_CONTROLPLANE is set but neither SIDECARLAB_TEST_KUBECONFIG nor SIDECARLAB_TEST_CLUSTER_READY is")
		}
		t.Skip("no test cluster (SIDECARLAB_TEST_KUBECONFIG); `make test` starts one")
	}
	stop, url, _, err := serve(serverBin, filepath.Join(t.TempDir(), "links.db"), "--cluster-read", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(url+"/"), shown(`.cm-content`),
		clickOn(`[data-testid="settings"] summary`))
	waitFor(ctx, t, `[data-testid="cluster-mesh"]`, "the cluster's revisions")
	// The keyboard: focus each choice and type the option's first letters, as a person does.
	do(ctx, t, focusOn(`[data-testid="cluster-mesh"]`), chromedp.KeyEvent("cni"),
		focusOn(`[data-testid="cluster-namespace"]`), chromedp.KeyEvent("default"))
	if rev, ns := value(ctx, t, `[data-testid="cluster-mesh"]`), value(ctx, t, `[data-testid="cluster-namespace"]`); rev != "cni" || ns != "default" {
		t.Fatalf("typed into the choices: revision %q, namespace %q", rev, ns)
	}
	do(ctx, t, clickOn(`[data-testid="apply"]`))
	waitFor(ctx, t, `[data-testid="install-mesh-used"]`, "the settings after apply")
	if used := strings.Join(strings.Fields(text(ctx, t, `[data-testid="install-mesh-used"]`)), " "); !strings.Contains(used, "revision cni") {
		t.Errorf("the settings say %q", used)
	}
	if name := value(ctx, t, `[data-testid="ns-name"]`); name != "default" {
		t.Errorf("the namespace's name is %q, want default", name)
	}
	everyScreen(ctx, t, sh, "the cluster's choices", "cluster-read", onNode(`[data-testid="cluster-namespace"]`, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="cluster-namespace"]`))))
}
