package wording

import (
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/upgrade"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// TestUpgradePreviewWords: `diff --upgrade`'s text in each language — every kind of key, the
// mesh config's unknown fields, a document that failed on the old side and one unchanged —
// worded from the catalogs, its code (paths, values) the same in every language.
func TestUpgradePreviewWords(t *testing.T) {
	p := &upgrade.Preview{Plan: &upgrade.Plan{OwnTemplates: true, OldIstio: "1.26.3", MeshUnknown: []string{"oldField"}, Keys: []upgrade.ValueKey{
		{Path: "global.proxy.resources.requests.cpu", Yours: "300m", Carried: true},
		{Path: "global.hub", Yours: "example.com/istio", Default: "registry.istio.io/testing"},
		{Path: "istio_cni.enabled", Yours: true, Carried: true, MovedTo: "components.cni.enabled"},
		{Path: "global.tracer.stackdriver.debug", Yours: false, Removed: true},
		{Path: "pilot.autoscaleMin", Yours: 2, NoEffect: true},
		{Path: "global.oldKey", Yours: "x", Unknown: true},
	}}, Documents: []upgrade.Document{
		{Doc: 1, Kind: "Deployment", Name: "web", OldError: "template: boom", Changed: true},
		{Doc: 2, Kind: "Deployment", Name: "api"},
	}}
	en := English.UpgradePreview(p)
	for _, want := range []string{"# upgrade: your mesh (revision default)", "(installed by Istio 1.26.3)", "# carried: global.proxy.resources.requests.cpu: \"300m\"",
		`# not carried: global.hub: "example.com/istio" (Istio `, "# carried to components.cni.enabled: istio_cni.enabled: true",
		"refuse it: removed", "passes it on to nothing", "has no such value): global.oldKey", "has no such field): oldField",
		"document 1: Deployment/web\n  your mesh: injection failed: template: boom\n", "document 2: Deployment/api\n  (no change)\n"} {
		if !strings.Contains(en, want) {
			t.Errorf("English lacks %q:\n%s", want, en)
		}
	}
	for _, lang := range []string{"ja", "ko"} {
		got := In(i18n.For(lang)).UpgradePreview(p)
		if strings.Contains(got, "carried") || strings.Contains(got, "no change") || strings.Contains(got, "injection failed") {
			t.Errorf("%s has English words:\n%s", lang, got)
		}
		for _, code := range []string{"global.proxy.resources.requests.cpu: \"300m\"", "components.cni.enabled", "oldField", "template: boom", "Deployment/api"} {
			if !strings.Contains(got, code) {
				t.Errorf("%s lacks %q:\n%s", lang, code, got)
			}
		}
		if strings.Count(got, "\n") != strings.Count(en, "\n") {
			t.Errorf("%s has %d lines, English %d", lang, strings.Count(got, "\n"), strings.Count(en, "\n"))
		}
	}
	noMissing(t)
}
