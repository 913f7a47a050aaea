package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// runEnv is runCLI with an environment: the locale variables a test sets.
func runEnv(t *testing.T, env map[string]string, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

var (
	langJa = map[string]string{"LANG": "ja_JP.UTF-8"}
	langC  = map[string]string{"LANG": "C"}
)

// noMissing fails the test when a message the CLI asked for is not in a catalog.
func noMissing(t *testing.T) {
	t.Helper()
	if m := i18n.Missing(); len(m) > 0 {
		t.Errorf("messages missing from the catalogs: %q", m)
	}
}

// TestLocaleLang: LC_ALL, then LC_MESSAGES, then LANG decides, by the locale's language; C,
// POSIX, unset and a language we do not speak are English; --lang overrides the locale.
func TestLocaleLang(t *testing.T) {
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, nil, "en"},
		{map[string]string{"LANG": "ja_JP.UTF-8"}, nil, "ja"},
		{map[string]string{"LANG": "ko_KR.UTF-8"}, nil, "ko"},
		{map[string]string{"LANG": "ja"}, nil, "ja"},
		{map[string]string{"LANG": "ko_KR.eucKR@euro"}, nil, "ko"},
		{map[string]string{"LANG": "en_US.UTF-8"}, nil, "en"},
		{map[string]string{"LANG": "C"}, nil, "en"},
		{map[string]string{"LANG": "C.UTF-8"}, nil, "en"},
		{map[string]string{"LANG": "POSIX"}, nil, "en"},
		{map[string]string{"LANG": "de_DE.UTF-8"}, nil, "en"},
		{map[string]string{"LANG": "not a locale!"}, nil, "en"},
		{map[string]string{"LANG": "ja_JP.UTF-8", "LC_ALL": "ko_KR.UTF-8"}, nil, "ko"},
		{map[string]string{"LANG": "ko_KR.UTF-8", "LC_MESSAGES": "ja_JP.UTF-8"}, nil, "ja"},
		{map[string]string{"LC_MESSAGES": "ja_JP.UTF-8", "LC_ALL": "C"}, nil, "en"},
		{map[string]string{"LANG": "ja_JP.UTF-8", "LC_ALL": ""}, nil, "ja"},
		{map[string]string{"LANG": "ja_JP.UTF-8"}, []string{"check", "--lang", "en"}, "en"},
		{map[string]string{"LANG": "C"}, []string{"--lang=ko", "check"}, "ko"},
		{map[string]string{"LANG": "ja_JP.UTF-8"}, []string{"check", "--lang", "de"}, "ja"},
		{nil, []string{"check", "--", "--lang", "ja"}, "en"},
	}
	for _, c := range cases {
		got := cliLang(c.args, func(k string) string { return c.env[k] })
		if got != c.want {
			t.Errorf("env %v, args %q: %s, want %s", c.env, c.args, got, c.want)
		}
	}
}

// TestJapaneseErrorsAndPitfalls: under LANG=ja_JP.UTF-8 a document's error names its document
// and line in Japanese, a pitfall line and the --fail-on line are Japanese; under LANG=C they
// are the English ones.
func TestJapaneseErrorsAndPitfalls(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bad.yaml": podNamed("fine") + "---\n" + badYAML})
	bad := dir + "/bad.yaml"
	_, stderr, err := runEnv(t, langJa, "", "inject", "-f", bad)
	if got := errorLine(t, err, stderr); !strings.Contains(got, bad+": ドキュメント2、14行目、マニフェスト: ") {
		t.Errorf("ja error: %q", got)
	}
	_, stderr, err = runEnv(t, langC, "", "inject", "-f", bad)
	if got := errorLine(t, err, stderr); !strings.Contains(got, bad+": document 2, line 14, manifest: ") {
		t.Errorf("C error: %q", got)
	}

	_, stderr, err = runEnv(t, langJa, classicJob, "inject", "-f", "-", "--fail-on", "error")
	if exitCodeOf(err) != 1 || !strings.Contains(stderr, "落とし穴: stdin:") || !strings.Contains(stderr, "sidecarlab: 重大度error以上の落とし穴があります（--fail-on）") {
		t.Errorf("ja pitfalls: %v, %q", err, stderr)
	}
	if strings.Contains(stderr, "pitfall: ") || strings.Contains(stderr, "or worse") {
		t.Errorf("ja pitfalls in English: %q", stderr)
	}
	_, stderr, _ = runEnv(t, langC, classicJob, "inject", "-f", "-", "--fail-on", "error")
	if !strings.Contains(stderr, "pitfall: stdin:") || !strings.Contains(stderr, "sidecarlab: pitfalls of severity error or worse (--fail-on)") {
		t.Errorf("C pitfalls: %q", stderr)
	}
	noMissing(t)
}

// TestJapaneseCheck: check -o text keeps its compiler-like lines (a problem matcher reads them)
// with the words in Japanese, and says why it failed in Japanese; -o github's fix is labelled in
// Japanese.
func TestJapaneseCheck(t *testing.T) {
	enOut, _, _ := runEnv(t, langC, "", "check", "-f", tree, "-R", "-o", "text")
	out, stderr, err := runEnv(t, langJa, "", "check", "-f", tree, "-R", "-o", "text")
	if exitCodeOf(err) != 1 || !strings.Contains(stderr, "sidecarlab: 重大度warning以上の落とし穴があります（--fail-on）") {
		t.Errorf("ja check: %v, %q", err, stderr)
	}
	if heads, enHeads := lineHeads(out), lineHeads(enOut); len(heads) == 0 || strings.Join(heads, "\n") != strings.Join(enHeads, "\n") {
		t.Errorf("ja check's lines %q, English %q", heads, enHeads)
	}
	gh, _, _ := runEnv(t, langJa, classicJob, "check", "-f", "-", "-o", "github")
	if !strings.Contains(gh, "::error file=stdin,") || !strings.Contains(gh, " 修正: ") || strings.Contains(gh, " Fix: ") {
		t.Errorf("ja github: %q", gh)
	}
	gh, _, _ = runEnv(t, langC, classicJob, "check", "-f", "-", "-o", "github")
	if !strings.Contains(gh, " Fix: ") || strings.Contains(gh, "修正") {
		t.Errorf("C github: %q", gh)
	}
	noMissing(t)
}

// TestLocaleOrder: LC_ALL=ko overrides LANG=ja; --lang en overrides both; a usage error is in
// the language chosen.
func TestLocaleOrder(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		lang []string
		want string
	}{
		{"LANG=ja", langJa, nil, "--fail-on \"sometimes\": info、warning、errorまたはnoneのいずれかを指定してください"},
		{"LC_ALL=ko over LANG=ja", map[string]string{"LANG": "ja_JP.UTF-8", "LC_ALL": "ko_KR.UTF-8"}, nil, "--fail-on \"sometimes\": info, warning, error 또는 none 중 하나를 지정해야 합니다"},
		{"--lang en over LANG=ja", langJa, []string{"--lang", "en"}, "--fail-on \"sometimes\": want info, warning, error or none"},
		{"--lang=ja over LANG=C", langC, []string{"--lang=ja"}, "--fail-on \"sometimes\": info、warning、errorまたはnoneのいずれかを指定してください"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"check", "-f", "-", "--fail-on", "sometimes"}, c.lang...)
			_, _, err := runEnv(t, c.env, testkit.Deployment, args...)
			if exitCodeOf(err) != 2 || err.Error() != c.want {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
	noMissing(t)
}

// TestMachineOutputLanguageRule: in the CLI's JSON only the sentences follow the language (as in
// the API): check, inject and admit -o json under LANG=ja are the same as under LANG=C once the
// sentences are set aside, and their messages are Japanese; SARIF, whose runs declare no
// language, is the same bytes.
func TestMachineOutputLanguageRule(t *testing.T) {
	ja, _, _ := runEnv(t, langJa, "", "check", "-f", tree, "-R", "-o", "sarif", "--fail-on", "none")
	c, _, _ := runEnv(t, langC, "", "check", "-f", tree, "-R", "-o", "sarif", "--fail-on", "none")
	if ja == "" || ja != c {
		t.Errorf("-o sarif differs with the language:\nja: %s\nC:  %s", ja, c)
	}
	japanese := func(s string) bool {
		return strings.IndexFunc(s, func(r rune) bool { return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) }) >= 0
	}
	for _, cmd := range []struct {
		name, stdin string
		args        []string
		worded      []string // sentences that must be Japanese
	}{
		{"check", "", []string{"check", "-f", tree, "-R", "-o", "json", "--fail-on", "none"}, []string{"[0].message"}},
		{"inject", classicJob, []string{"inject", "-f", "-", "-o", "json"}, []string{".findings[0].message", ".findings[0].fix.text"}},
		{"admit", testkit.Deployment, []string{"admit", "-f", "-", "-n", "shop", "-o", "json"}, []string{"[0].injectReasons", "[0].trace[0].text"}},
	} {
		t.Run(cmd.name, func(t *testing.T) {
			decode := func(env map[string]string) any {
				out, _, _ := runEnv(t, env, cmd.stdin, cmd.args...)
				var v any
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Fatalf("%v: %v\n%.300s", env, err, out)
				}
				return v
			}
			ja, c := decode(langJa), decode(langC)
			jaWords, cWords := api.SetSentencesAside(ja), api.SetSentencesAside(c)
			if d := cmp.Diff(c, ja); d != "" {
				t.Errorf("the data changed with the language (-C +ja):\n%s", d)
			}
			if d := cmp.Diff(slices.Sorted(maps.Keys(cWords)), slices.Sorted(maps.Keys(jaWords))); d != "" {
				t.Errorf("the sentences differ in where they are (-C +ja):\n%s", d)
			}
			for _, p := range cmd.worded {
				j, e := fmt.Sprint(jaWords[p]), fmt.Sprint(cWords[p])
				if cWords[p] == nil || j == e || !japanese(j) {
					t.Errorf("%s: %q under LANG=ja, %q under LANG=C", p, j, e)
				}
			}
		})
	}
	noMissing(t)
}

// TestLangFlag: an unknown --lang is a usage error that names the choices; a known one is not;
// help (its text, examples and flags) is in the language chosen.
func TestLangFlag(t *testing.T) {
	_, _, err := runEnv(t, nil, testkit.Deployment, "inject", "-f", "-", "--lang", "de")
	if exitCodeOf(err) != 2 || err.Error() != `--lang "de": want en, ja or ko` {
		t.Errorf("--lang de: %v", err)
	}
	if _, _, err := runEnv(t, nil, testkit.Deployment, "inject", "-f", "-", "--lang", "ko"); err != nil {
		t.Errorf("--lang ko: %v", err)
	}
	out, _, err := runEnv(t, langJa, "", "check", "--help")
	if err != nil || !strings.Contains(out, "injectと同じくマニフェストに注入を行い") || strings.Contains(out, "Inject the manifests as inject does") ||
		!strings.Contains(out, "出力形式: text, json, sarif, github") || !strings.Contains(out, "# ツリーのすべてのマニフェスト。") ||
		!strings.Contains(out, "\n使い方:\n") || !strings.Contains(out, "checkのヘルプ") {
		t.Errorf("ja help: %v\n%s", err, out)
	}
	out, _, _ = runEnv(t, langJa, "", "check", "--help", "--lang", "en")
	if !strings.Contains(out, "Inject the manifests as inject does") || !strings.Contains(out, "output format: text, json, sarif, github") {
		t.Errorf("--lang en help:\n%s", out)
	}
	noMissing(t)
}

// TestOtherCommandsInKoreanAndJapanese: batch's table headers and total, admit's text,
// annotations' header and version's line follow the language; batch -o csv, which is data, does
// not (admit -o json: TestMachineOutputLanguageRule).
func TestOtherCommandsInKoreanAndJapanese(t *testing.T) {
	langKo := map[string]string{"LC_ALL": "ko_KR.UTF-8"}
	out, _, err := runEnv(t, langKo, testkit.Deployment, "batch", "-f", "-")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 3 || !strings.HasPrefix(lines[0], "문서") || !strings.Contains(lines[0], "함정") || !strings.HasPrefix(lines[2], "합계: ") {
		t.Errorf("ko batch table: %v\n%s", err, out)
	}
	en, _, _ := runEnv(t, langC, testkit.Deployment, "batch", "-f", "-")
	if !strings.HasPrefix(en, "DOC") || !strings.Contains(en, "\ntotal: ") {
		t.Errorf("C batch table:\n%s", en)
	}
	ko, _, _ := runEnv(t, langKo, testkit.Deployment, "batch", "-f", "-", "-o", "csv")
	c, _, _ := runEnv(t, langC, testkit.Deployment, "batch", "-f", "-", "-o", "csv")
	if ko == "" || ko != c {
		t.Errorf("batch -o csv differs with the language:\nko: %s\nC:  %s", ko, c)
	}

	out, stderr, err := runEnv(t, langJa, testkit.Deployment, "admit", "-f", "-", "-n", "shop", "--namespace-labels", "istio-injection=enabled,pod-security.kubernetes.io/enforce=baseline")
	if exitCodeOf(err) != 1 || !strings.Contains(out, "ドキュメント1: Deployment/web → Namespace shopのPod ") || !strings.Contains(out, "注入済み、拒否") ||
		!strings.Contains(stderr, "sidecarlab: 拒否: ドキュメント1（Deployment/web）") {
		t.Errorf("ja admit: %v\n%s\n%s", err, out, stderr)
	}

	out, _, _ = runEnv(t, langJa, "", "annotations")
	if !strings.HasPrefix(out, "名前 ") || !strings.Contains(out, "説明（Istio）") {
		t.Errorf("ja annotations: %.200s", out)
	}
	out, _, _ = runEnv(t, langKo, "", "version")
	if !strings.Contains(out, ", 커밋 ") {
		t.Errorf("ko version: %q", out)
	}
	noMissing(t)
}

// TestBatchColumnsHaveWords: every column the engine gives has a header in every language (a
// column added to the engine without one fails here).
func TestBatchColumnsHaveWords(t *testing.T) {
	for _, code := range i18n.Codes {
		for _, col := range engine.BatchColumnNames() {
			if id, got := columnID(col), i18n.For(code).T(columnID(col)); got == id || got == "" {
				t.Errorf("%s: no header for column %q (%s)", code, col, id)
			}
		}
	}
	noMissing(t)
}

// TestShareAsksInTheCLILanguage: share sends the CLI's language (Accept-Language), so the
// server's refusals come back in it, and its own messages are in it too.
func TestShareAsksInTheCLILanguage(t *testing.T) {
	var asked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.Header.Get("Accept-Language"))
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer srv.Close()
	cases := []struct {
		env        map[string]string
		lang, want string
	}{
		{langJa, "ja", srv.URL + "の応答は500 Internal Server Errorです: boom"},
		{map[string]string{"LANG": "ko_KR.UTF-8"}, "ko", srv.URL + "의 응답: 500 Internal Server Error: boom"},
		{langC, "en", srv.URL + " answered 500 Internal Server Error: boom"},
	}
	for _, c := range cases {
		_, _, err := runEnv(t, c.env, testkit.Deployment, "share", "-f", "-", "--server", srv.URL)
		if err == nil || err.Error() != c.want || asked.Load() != c.lang {
			t.Errorf("LANG %v: %v (Accept-Language %v), want %q", c.env, err, asked.Load(), c.want)
		}
	}
	_, _, err := runEnv(t, langJa, testkit.Deployment, "share", "-f", "-")
	if exitCodeOf(err) != 2 || !strings.Contains(err.Error(), "が必要です") {
		t.Errorf("ja share without --server: %v", err)
	}
	noMissing(t)
}

// TestEngineErrorsInTheCLILanguage: the engine's own input errors (an empty manifest, a bad
// annotation key) are worded in the CLI's language, inside a file or not; the English is the
// error's own text, unchanged; Istio's or the validator's words stay as they are.
func TestEngineErrorsInTheCLILanguage(t *testing.T) {
	ja := i18n.For("ja")
	_, _, err := runEnv(t, langJa, "", "inject", "-f", "-")
	if err == nil || !strings.Contains(err.Error(), ja.T("input.manifest-empty")) {
		t.Errorf("ja, empty manifest: %v", err)
	}
	_, _, err = runEnv(t, langC, "", "inject", "-f", "-")
	if err == nil || err.Error() != "manifest: the manifest is empty; paste a Pod, Deployment, Job or any workload" {
		t.Errorf("C, empty manifest: %v", err)
	}
	_, _, err = runEnv(t, map[string]string{"LANG": "ko_KR.UTF-8"}, "kind: Pod\n", "inject", "-f", "-", "--annotate", "bad key=1")
	if err == nil || !strings.Contains(err.Error(), "1단계") || !strings.Contains(err.Error(), "name part must consist of") {
		t.Errorf("ko, bad annotation key: %v", err)
	}
	noMissing(t)
}

// TestFaultsInTheCLILanguage: a fault run returns (a bug's failure, with an id) is printed in
// the CLI's language with the input error under it worded too, and in English as its own
// Error; errors.As still finds it; an error of no id stays as it is.
func TestFaultsInTheCLILanguage(t *testing.T) {
	f := &input.Fault{ID: "webhook-patch", Err: &input.Error{ID: "manifest-empty"}}
	ja := (&cli{lang: i18n.For("ja")}).localize(f)
	var back *input.Fault
	if !strings.HasPrefix(ja.Error(), i18n.For("ja").T("errors.fault.webhook-patch")+": "+i18n.For("ja").T("input.manifest-empty")) || !errors.As(ja, &back) || back != f {
		t.Errorf("ja: %q", ja)
	}
	if en := (&cli{lang: i18n.For("en")}).localize(f); en.Error() != f.Error() || !strings.Contains(en.Error(), "patch could not be read: the manifest is empty") {
		t.Errorf("en: %q", en)
	}
	plain := errors.New("plain")
	if got := (&cli{lang: i18n.For("ja")}).localize(plain); got != plain {
		t.Errorf("an error of no id: %v", got)
	}
}

// TestBatchTableInTheCLILanguage: the batch table's cells that are words (a result, yes or no,
// per node) are in the CLI's language, as the page's table has them, while the CSV keeps the
// engine's cells: they are data.
func TestBatchTableInTheCLILanguage(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"ds.yaml": "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n  selector:\n    matchLabels: {app: agent}\n  template:\n    metadata:\n      labels: {app: agent}\n    spec:\n      containers:\n      - name: agent\n        image: agent\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
	})
	files := []string{dir + "/ds.yaml", dir + "/cm.yaml"}
	ja := i18n.For("ja")
	out, _, err := runEnv(t, langJa, "", append([]string{"batch", "-o", "table"}, files...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{ja.T("results.batch.per-node"), ja.T("results.status.injected"), ja.T("results.status.passed-through"), ja.T("results.answer.no")} {
		if !strings.Contains(out, want) {
			t.Errorf("ja table lacks %q:\n%s", want, out)
		}
	}
	for _, english := range []string{"per node", "injected", "passed through"} {
		if strings.Contains(out, english) {
			t.Errorf("ja table says %q:\n%s", english, out)
		}
	}
	en, _, err := runEnv(t, langC, "", append([]string{"batch", "-o", "table"}, files...)...)
	if err != nil || !strings.Contains(en, "per node") || !strings.Contains(en, "passed through") {
		t.Errorf("C table: %v\n%s", err, en)
	}
	csv, _, err := runEnv(t, langJa, "", append([]string{"batch", "-o", "csv"}, files...)...)
	if err != nil || !strings.Contains(csv, "per node") || strings.Contains(csv, ja.T("results.batch.per-node")) {
		t.Errorf("ja CSV: %v\n%s", err, csv)
	}
	noMissing(t)
}
