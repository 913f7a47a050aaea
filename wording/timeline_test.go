package wording

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestTimelineText: `sidecarlab diff`'s text. A row where Istio rejects a document says it
// failed, not "(no change)", in both forms; row 0 lists what kube-inject's serializer alone
// writes last, under its own heading, and no later row has that heading. In Japanese and Korean
// the words are theirs and the changes' code the same.
func TestTimelineText(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n"
	// Istio's template cannot range over this userVolume: it fails the Deployment at step 2.
	steps := []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "sidecar.istio.io/userVolume", Value: `{"v":`}}
	tl, err := e.Timeline(t.Context(), []byte(testkit.Deployment+"---\n"+service), steps, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	text := func(w Words, unified bool) string {
		s, err := w.TimelineText(t.Context(), tl, unified)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, unified := range []bool{true, false} {
		_, row2, _ := strings.Cut(text(English, unified), "# step 2:")
		if !strings.Contains(row2, "injection failed: document 1, line 1: ") || strings.Contains(row2, "(no change)") {
			t.Fatalf("row 2 (unified %v):\n%s", unified, row2)
		}
	}
	en := text(English, false)
	head := "  # written by kube-inject's serializer (empty defaults), not by injection:\n"
	row0, row1, _ := strings.Cut(en, "# step 1:")
	if h := strings.Index(row0, head); h < 0 || !strings.Contains(row0[h:], "+ spec.strategy: {}") || strings.Contains(row0[h:], "istio-proxy") {
		t.Errorf("row 0:\n%s", row0)
	}
	if strings.Contains(row1, head) || !strings.HasPrefix(en, "# step 0: injection (input → injected)\ndocument 1: Deployment/web\n") {
		t.Errorf("the text:\n%.400s", en)
	}
	for _, lang := range []string{"ja", "ko"} {
		got := text(In(i18n.For(lang)), false)
		for _, english := range []string{"step 0", "injection failed", "written by", "document 1"} {
			if strings.Contains(got, english) {
				t.Errorf("%s says %q:\n%.400s", lang, english, got)
			}
		}
		if !strings.Contains(got, "+ spec.strategy: {}") || !strings.Contains(got, "sidecar.istio.io/proxyCPU=200m") || strings.Count(got, "\n") != strings.Count(en, "\n") {
			t.Errorf("%s: the code or the lines differ:\n%.600s", lang, got)
		}
	}
	// Past its deadline, the text is not made (the rows' changes are made on demand, under ctx).
	fresh, err := e.Timeline(t.Context(), []byte(testkit.Deployment), steps[:1], engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := English.TimelineText(gone, fresh, false); !errors.Is(err, context.Canceled) {
		t.Errorf("the text past the deadline: %v", err)
	}
	noMissing(t)
}
