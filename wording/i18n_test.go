package wording

import (
	"context"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// others are the words in every language but English.
var others = []Words{In(i18n.For("ja")), In(i18n.For("ko"))}

// noMissing fails when a catalog lacked a message the words asked for.
func noMissing(t *testing.T) {
	t.Helper()
	if m := i18n.Missing(); len(m) > 0 {
		t.Errorf("messages missing from the catalogs: %q", m)
	}
}

// noTemplateGap fails on a parameter a message printed as a template's "<no value>".
func noTemplateGap(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, "<no value>") {
		t.Errorf("%s: a parameter is missing: %q", what, s)
	}
}

// TestFindingInJapaneseAndKorean: a finding worded in ja and ko keeps its key (code) and its
// quoted value exactly, in a Japanese or Korean sentence, not the English one.
func TestFindingInJapaneseAndKorean(t *testing.T) {
	f := engine.Finding{Check: "workload-metadata-annotation", Fix: &engine.Fix{},
		Params: map[string]string{"key": "sidecar.istio.io/proxyCPU", "kind": "Deployment", "readFrom": "spec.template.metadata.annotations"}}
	v := engine.Finding{Check: "inject-value", Fix: &engine.Fix{}, Params: map[string]string{"value": "no", "result": "injected"}}
	for _, c := range []struct {
		w                   Words
		message, fix, value string
	}{
		{In(i18n.For("ja")), "効果はありません", "Podテンプレートに移してください。", "受け付けるのは\"true\"と\"false\"だけなので、\"no\"は無視され"},
		{In(i18n.For("ko")), "아무 효과가 없습니다", "파드 템플릿으로 옮기십시오.", "\"no\"를 무시하고"},
	} {
		msg := c.w.Message(f)
		for _, want := range []string{"sidecar.istio.io/proxyCPU", "Deployment", "spec.template.metadata.annotations", c.message} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", c.w.l.Lang(), msg, want)
			}
		}
		if strings.Contains(msg, "no effect") || strings.Contains(msg, "own metadata") {
			t.Errorf("%s: English words in %q", c.w.l.Lang(), msg)
		}
		if got := c.w.FixText(f); got != c.fix {
			t.Errorf("%s: fix %q, want %q", c.w.l.Lang(), got, c.fix)
		}
		if got := c.w.Message(v); !strings.Contains(got, c.value) {
			t.Errorf("%s: %q lacks %q", c.w.l.Lang(), got, c.value)
		}
	}
	noMissing(t)
}

// TestEnglishStaysEnglish: English is English whatever other language was used before it, and
// For takes the request's language (English without one).
func TestEnglishStaysEnglish(t *testing.T) {
	f := engine.Finding{Check: "ignore-unknown-check", Params: map[string]string{"id": "job-clasic-sidecar"}}
	const want = `sidecarlab.dev/ignore names "job-clasic-sidecar", which is not one of sidecarlab's checks, so it ignores nothing.`
	for _, w := range others {
		if got := w.Message(f); got == want {
			t.Errorf("%s: the English sentence", w.l.Lang())
		}
	}
	if got := English.Message(f); got != want {
		t.Errorf("English after ja and ko: %q, want %q", got, want)
	}
	if got := For(i18n.NewContext(context.Background(), i18n.For("ko"))).Message(f); got != others[1].Message(f) {
		t.Errorf("For a ko request: %q", got)
	}
	if got := (Words{}).Message(f); got != want {
		t.Errorf("the zero Words: %q", got)
	}
	if got := For(context.Background()).Message(f); got != want {
		t.Errorf("For a request without a language: %q", got)
	}
}

// TestGistInJapanese: the gist ends at the first pause of a Japanese sentence too (。：（；),
// not at a comma (、), which would leave a fragment.
func TestGistInJapanese(t *testing.T) {
	ja, ko := others[0], others[1]
	for _, c := range []struct {
		w    Words
		f    engine.Finding
		want string
	}{
		{ja, engine.Finding{Check: "workload-metadata-annotation", Params: map[string]string{"key": "sidecar.istio.io/proxyCPU", "kind": "Deployment", "readFrom": "x"}},
			"sidecar.istio.io/proxyCPUはDeployment自身のmetadataにあります"}, // 。
		{ja, engine.Finding{Check: "deprecated-annotation", Params: map[string]string{"key": "sidecar.istio.io/extraStat", "description": "Retired."}},
			"sidecar.istio.io/extraStatはIstioのカタログで非推奨です"}, // ：
		{ja, engine.Finding{Check: "native-sidecar-unsupported", Params: map[string]string{"version": "1.28"}}, "ネイティブサイドカー"}, // （
		{ja, engine.Finding{Check: "cronjob-pod-template-annotation", Params: map[string]string{"key": "k"}},
			"CronJobの場合、istioctl kube-injectはアノテーションをspec.jobTemplate.metadataから読むため、Podテンプレートのkはここでは効果がありません"}, // not at 、
		{ko, engine.Finding{Check: "webhook-auto-stays-classic", Params: map[string]string{"version": "1.30"}},
			"Istio의 웹훅은 기본 auto 모드에서 모든 노드가 Kubernetes 1.33 이상일 때만 네이티브 사이드카를 사용합니다"},
	} {
		if got := c.w.Gist(c.f); got != c.want {
			t.Errorf("%s %s: gist %q, want %q", c.w.l.Lang(), c.f.Check, got, c.want)
		}
	}
	noMissing(t)
}

// TestMissingParamIsEmpty: a parameter a finding lacks is worded as nothing, as before the
// catalogs, never as the template's "<no value>".
func TestMissingParamIsEmpty(t *testing.T) {
	f := engine.Finding{Check: "unknown-istio-annotation", Fix: &engine.Fix{}, Params: map[string]string{"key": "a.istio.io/x"}}
	if got := English.FixText(f); got != "Use ." {
		t.Errorf("fix without a suggestion: %q", got)
	}
	if got := English.Message(f); got != "a.istio.io/x is not an annotation Istio knows; Istio ignores it without a word." {
		t.Errorf("message without a suggestion: %q", got)
	}
	// No parameters at all, and a value that is itself "<no value>": each as it is.
	if got := others[0].Message(engine.Finding{Check: "native-sidecar-unsupported"}); strings.Contains(got, noValue) || !strings.HasPrefix(got, "ネイティブサイドカー") {
		t.Errorf("ja without params: %q", got)
	}
	if got := English.Message(engine.Finding{Check: "webhook-auto-stays-classic", Params: map[string]string{"version": noValue}}); !strings.Contains(got, "with <no value> nodes") {
		t.Errorf("a value <no value>: %q", got)
	}
}

// TestEverythingInEveryLanguage words the traces, secret findings, iptables flags, input errors,
// batch totals and counts in ja and ko: each has words of its own language (not English), keeps
// its parameters, and no message is missing.
func TestEverythingInEveryLanguage(t *testing.T) {
	steps := map[string]map[string]string{
		"namespace":                  {"name": "shop", "labels": "team=a"},
		"webhook-namespace-mismatch": {"webhook": "w.istio.io", "requirement": "istio-injection in (enabled)"},
		"webhook-object-mismatch":    {"webhook": "w.istio.io", "requirement": "sidecar.istio.io/inject!=false"},
		"webhook-rules-mismatch":     {"webhook": "w.istio.io"},
		"webhook-called":             {"webhook": "w.istio.io", "configuration": "istio-sidecar-injector", "path": "/inject"},
		"webhook-refused":            {"webhook": "w.istio.io", "message": "denied"},
		"policy-host-network":        {"inject": "false"},
		"policy-ignored-namespace":   {"namespace": "kube-system", "inject": "false"},
		"policy-label":               {"value": "true", "inject": "true"},
		"policy-annotation":          {"value": "false", "inject": "false"},
		"policy-invalid-value":       {"value": "no", "source": "policy-label"},
		"policy-never-selector":      {"selector": "app=db", "inject": "false"},
		"policy-always-selector":     {"selector": "app=web", "inject": "true"},
		"policy-default":             {"policy": "enabled", "inject": "true"},
		"rejected-pod-security":      {"message": `violates PodSecurity "restricted:latest"`},
	}
	for _, w := range others {
		lang := w.l.Lang()
		var all []admission.Step
		for _, id := range admission.TraceIDs() {
			all = append(all, admission.Step{ID: id, Params: steps[id]})
		}
		all = append(all, admission.Step{ID: "namespace", Params: map[string]string{"name": "bare"}},
			admission.Step{ID: "policy-invalid-value", Params: map[string]string{"value": "no", "source": "policy-annotation"}},
			admission.Step{ID: "policy-default", Params: map[string]string{"policy": "disabled", "inject": "false"}})
		seen := map[string]bool{}
		for _, s := range w.Trace(all) {
			en := English.TraceText(s.Step)
			if s.Text == "" || s.Text == en || seen[s.Text] {
				t.Errorf("%s trace %s: %q (English %q)", lang, s.ID, s.Text, en)
			}
			seen[s.Text] = true
			noTemplateGap(t, lang+" trace "+s.ID, s.Text)
			for k, v := range s.Params {
				if k != "inject" && k != "source" && !strings.Contains(s.Text, v) {
					t.Errorf("%s trace %s: %q lacks %s=%q", lang, s.ID, s.Text, k, v)
				}
			}
		}
		fs, _ := secrets.Scan([]byte(allSecretKinds))
		for _, f := range fs {
			if k := w.SecretKind(f); k == "" || k == English.SecretKind(f) || !strings.Contains(w.SecretLine(f), k) {
				t.Errorf("%s secret %s: %q", lang, f.Kind, w.SecretLine(f))
			}
		}
		if got := w.SecretWhere(secrets.Finding{Doc: 2, Line: 9}); got == English.SecretWhere(secrets.Finding{Doc: 2, Line: 9}) || !strings.Contains(got, "9") {
			t.Errorf("%s: SecretWhere %q", lang, got)
		}
		if got := w.SecretWhere(secrets.Finding{Step: 3}); got == English.SecretWhere(secrets.Finding{Step: 3}) || !strings.Contains(got, "3") {
			t.Errorf("%s: SecretWhere %q", lang, got)
		}
		for _, f := range []secrets.Finding{{Setting: secrets.SettingInstallSet, Line: 7}, {Setting: secrets.SettingInstallOverlay, Line: 7}, {Setting: secrets.SettingNamespaceLabel}} {
			if got := w.SecretWhere(f); got == English.SecretWhere(f) || (f.Line > 0 && !strings.Contains(got, "7")) {
				t.Errorf("%s: SecretWhere %+v: %q", lang, f, got)
			}
		}
		if got := w.SecretKind(secrets.Finding{Kind: secrets.KnownFormat, Rule: "slack-webhook-url"}); !strings.Contains(got, "slack-webhook-url") {
			t.Errorf("%s: the known-format kind does not name its rule: %q", lang, got)
		}
		for _, s := range []string{w.SecretsFound(1200), w.SecretsInLink(1200)} {
			if !strings.Contains(s, "1,200") || strings.Contains(s, "finding") {
				t.Errorf("%s: %q", lang, s)
			}
		}
		for _, s := range []string{w.SecretsChoice(), w.SecretsAPIChoice()} {
			if !strings.Contains(s, "<redacted>") {
				t.Errorf("%s: %q", lang, s)
			}
		}
		if s := w.SecretsAPIChoice(); !strings.Contains(s, "--allow-secrets") || !strings.Contains(s, "sidecarlab share --redact") {
			t.Errorf("%s: %q", lang, s)
		}
		if w.SecretsMore(3, 3) != "" || !strings.Contains(w.SecretsMore(1, 4), "3") {
			t.Errorf("%s: SecretsMore %q", lang, w.SecretsMore(1, 4))
		}
		for name := range iptablesFlags {
			if s := w.IptablesFlag(name); s == "" || s == English.IptablesFlag(name) {
				t.Errorf("%s flag %s: %q", lang, name, s)
			}
		}
		if w.IptablesFlag("no-such-flag") != "" {
			t.Errorf("%s: words for an unknown flag", lang)
		}
		for _, r := range yamlReasons {
			e := input.Error{Doc: 1, Line: 13, Field: "manifest", Msg: "yaml: line 2: " + r.reason}
			got, en := w.Input(&e), English.Input(&e)
			if got.Summary == en.Summary || got.Details != e.Text() || !strings.Contains(got.Summary, "13") {
				t.Errorf("%s yaml %q: %+v", lang, r.reason, got)
			}
		}
		for _, typ := range []string{"[]v1.Container", "v1.PodSpec", "int32", "bool", "string", "complex128"} {
			e := input.Error{Doc: 1, Line: 1, Field: "manifest", Msg: "json: cannot unmarshal number into Go struct field PodSpec.spec.x of type " + typ}
			// The type found is in the reader's words too, not JSON's English ("number").
			if got := w.Input(&e); got.Reason == English.Input(&e).Reason || !strings.Contains(got.Reason, "spec.x") ||
				!strings.Contains(got.Reason, w.loc().T("wording.input.kind.number")) || strings.Contains(got.Reason, "number") {
				t.Errorf("%s type %s: %+v", lang, typ, got)
			}
		}
		total := engine.BatchTotal{Workloads: 8, PerNode: 1, Pods: 2010, RequestsCPU: "201.2", RequestsMem: "251.5Gi"}
		if got := w.BatchTotal(total); !strings.Contains(got, "2,010") || !strings.Contains(got, "cpu=201.2 memory=251.5Gi") ||
			strings.Contains(got, "workload") || strings.Contains(got, "none") {
			t.Errorf("%s batch: %q", lang, got)
		}
		if got := w.Ignored(2); got == "" || got == English.Ignored(2) || !strings.Contains(got, "2") || w.Ignored(0) != "" {
			t.Errorf("%s ignored: %q", lang, got)
		}
		// Ids sidecarlab has no words for fall back to themselves, in every language.
		if got := w.Question(lifecycle.Verdict{ID: "new-verdict"}); got != "new-verdict" {
			t.Errorf("%s: unknown question %q", lang, got)
		}
		if got := w.Why(lifecycle.Verdict{ID: "new-verdict", Reason: "why"}); got != "new-verdict why" {
			t.Errorf("%s: unknown reason %q", lang, got)
		}
		if got := w.What(lifecycle.Event{Event: "new-event"}); got != "new-event" {
			t.Errorf("%s: unknown event %q", lang, got)
		}
		if got := w.Message(engine.Finding{Check: "new-check"}); got != "new-check" || w.Summary("new-check") != "" {
			t.Errorf("%s: unknown check %q", lang, got)
		}
	}
	ja := others[0].Input(&input.Error{Doc: 1, Line: 13, Field: "manifest", Msg: "yaml: line 5: mapping values are not allowed in this context"})
	if want := "ドキュメント1、13行目: ここではマッピングの値は使えません。インデントを確認してください"; ja.Summary != want {
		t.Errorf("ja input: %q, want %q", ja.Summary, want)
	}
	noMissing(t)
}
