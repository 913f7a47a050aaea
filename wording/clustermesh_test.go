package wording

import (
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/clustermesh"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// TestRevisionChoice: how a cluster's revision was chosen, in English as the CLI has always said
// it, and in Japanese and Korean with the names kept.
func TestRevisionChoice(t *testing.T) {
	for _, c := range []struct {
		choice clustermesh.Choice
		en     string
	}{
		{clustermesh.Choice{By: "tag", Tag: "prod", Configuration: "istio-revision-tag-prod"}, "revision tag prod (webhook configuration istio-revision-tag-prod)"},
		{clustermesh.Choice{By: "revision", Revision: "canary"}, "revision canary"},
		{clustermesh.Choice{By: "webhook", Namespace: "shop", Webhook: "w.example", Configuration: "cfg"}, "namespace shop, selected by webhook w.example of cfg"},
		{clustermesh.Choice{By: "webhook", Webhook: "w.example", Configuration: "cfg"}, "a namespace labelled istio-injection=enabled, selected by webhook w.example of cfg"},
		{clustermesh.Choice{By: "default"}, "the default revision (no webhook selects the namespace's Pods)"},
	} {
		if got := English.RevisionChoice(c.choice); got != c.en {
			t.Errorf("%+v: %q, want %q", c.choice, got, c.en)
		}
		for _, lang := range []string{"ja", "ko"} {
			got := In(i18n.For(lang)).RevisionChoice(c.choice)
			if got == c.en || strings.Contains(got, "selected by") || strings.Contains(got, "revision tag") {
				t.Errorf("%s: %q", lang, got)
			}
			for _, name := range []string{c.choice.Tag, c.choice.Revision, c.choice.Namespace, c.choice.Webhook, c.choice.Configuration} {
				if !strings.Contains(got, name) {
					t.Errorf("%s: %q lacks %q", lang, got, name)
				}
			}
		}
	}
	noMissing(t)
}
