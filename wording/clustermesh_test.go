package wording

import (
	"errors"
	"fmt"
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

// TestClusterError: a failed read of a cluster in English is the error's own text (what the logs
// and every earlier release said), and in Japanese and Korean another sentence that keeps the
// request, the names and the cause; an error that is not a cluster read's is as it is.
func TestClusterError(t *testing.T) {
	cause := errors.New(`configmaps "istio" is forbidden`)
	for _, c := range []struct {
		err  error
		en   string
		keep []string
	}{
		{&clustermesh.Error{ID: "unknown-revision", Params: map[string]string{"Named": `"blue"`, "Known": "canary, default"}},
			`reading the cluster: no revision or revision tag "blue"; the cluster's Istio webhooks are of revisions canary, default`, []string{`"blue"`, "canary, default"}},
		{&clustermesh.Refused{Verb: "get", Resource: "configmaps", Name: "istio", Namespace: "istio-system", Err: cause},
			`reading the cluster: get configmaps istio in namespace istio-system was refused: configmaps "istio" is forbidden`, []string{"get configmaps istio", "istio-system", `"istio" is forbidden`}},
		{fmt.Errorf("wrapped: %w", &clustermesh.Error{ID: "no-default"}),
			"reading the cluster: no Istio webhook selects the namespace's Pods and there is no default revision; name one with --revision", []string{"--revision"}},
	} {
		if got := English.ClusterError(c.err); got != c.en {
			t.Errorf("English: %q, want %q", got, c.en)
		}
		if own := c.err.Error(); !strings.HasSuffix(own, c.en) {
			t.Errorf("the error's own text %q, want it to end with %q", own, c.en)
		}
		for _, lang := range []string{"ja", "ko"} {
			got := In(i18n.For(lang)).ClusterError(c.err)
			if got == c.en || !nonASCII.MatchString(got) {
				t.Errorf("%s: still English: %q", lang, got)
			}
			for _, k := range c.keep {
				if !strings.Contains(got, k) {
					t.Errorf("%s: %q lost %q", lang, got, k)
				}
			}
		}
	}
	if got := English.ClusterError(cause); got != cause.Error() {
		t.Errorf("another error: %q", got)
	}
}
