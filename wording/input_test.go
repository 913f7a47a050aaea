package wording

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/catalog"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/BurntSushi/toml"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// TestInputWords: a YAML or typing error of the manifest is said once, in words, with where it
// is; the parser's text is kept as details. Other errors pass as they are.
func TestInputWords(t *testing.T) {
	cases := []struct {
		e              input.Error
		summary, avoid string
	}{
		{input.Error{Doc: 1, Line: 13, Field: "manifest", Msg: "error converting YAML to JSON: yaml: line 5: mapping values are not allowed in this context"},
			"document 1, line 13: a mapping value is not allowed here — check the indentation", "converting"},
		{input.Error{Doc: 2, Line: 4, Field: "manifest", Msg: "error converting YAML to JSON: yaml: line 4: found character that cannot start any token"},
			"document 2, line 4: this character cannot start a value — YAML does not allow tabs", "token"},
		{input.Error{Doc: 1, Line: 1, Field: "manifest", Msg: "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number into Go struct field PodSpec.spec.containers of type []v1.Container"},
			"document 1, line 1: spec.containers must be a list, not a number", "Go struct"},
		{input.Error{Doc: 1, Line: 2, Field: "manifest", Msg: "error converting YAML to JSON: yaml: line 2: something new"},
			"document 1, line 2: something new", "converting"},
	}
	for _, c := range cases {
		got := English.Input(&c.e)
		if !strings.HasPrefix(got.Summary, c.summary) || strings.Contains(got.Summary, c.avoid) {
			t.Errorf("%q: summary %q, want it to start with %q and not say %q", c.e.Text(), got.Summary, c.summary, c.avoid)
		}
		if got.Details != c.e.Text() {
			t.Errorf("%q: details %q, want the parser's text", c.e.Text(), got.Details)
		}
		if strings.Count(got.Summary, "line") > 1 {
			t.Errorf("%q: the line is said more than once: %q", c.e.Text(), got.Summary)
		}
	}
	// Not about the manifest's text: unchanged, no details.
	other := input.Error{Field: `annotation "sidecar.istio.io/proxyCPU"`, Msg: `invalid value "x"`}
	if got := English.Input(&other); got.Summary != other.Error() || got.Details != "" {
		t.Errorf("an annotation error: %+v", got)
	}
}

// engineInputIDs collects, with go/ast over the sources of the engine and its packages, every
// input.Error ID they set: the string ID: of an input.Error literal (Error inside package
// input), and the first argument of the fail helpers (proxyconfig's fail(id, …)).
func engineInputIDs(t *testing.T, dir string) map[string]string {
	return literalIDs(t, dir, "Error")
}

// literalIDs collects the string ID: of every input.<typ> literal in the sources under dir, and
// for Error the first argument of the fail helpers.
func literalIDs(t *testing.T, dir, typ string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		add := func(e ast.Expr) {
			if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && s != "" {
					ids[s] = fset.Position(lit.Pos()).String()
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if isInput(f, n.Type, typ) {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "ID" {
								add(kv.Value)
							}
						}
					}
				}
			case *ast.CallExpr:
				if fn, ok := n.Fun.(*ast.Ident); ok && typ == "Error" && fn.Name == "fail" && len(n.Args) > 0 {
					add(n.Args[0])
				}
			}
			return true
		})
	}
	return ids
}

// isInput says the type of a composite literal in f is input.<name>.
func isInput(f *ast.File, typ ast.Expr, name string) bool {
	switch t := typ.(type) {
	case *ast.SelectorExpr:
		pkg, ok := t.X.(*ast.Ident)
		return ok && pkg.Name == "input" && t.Sel.Name == name
	case *ast.Ident:
		return f.Name.Name == "input" && t.Name == name
	}
	return false
}

// inputCatalogs are the input catalogs' ids, by language, as the files have them.
func inputCatalogs(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, lang := range []string{"en", "ja", "ko"} {
		var f struct{ Input map[string]string }
		if _, err := toml.DecodeFile("../i18n/locales/input."+lang+".toml", &f); err != nil {
			t.Fatal(err)
		}
		out[lang] = map[string]bool{}
		for id := range f.Input {
			out[lang][id] = true
		}
	}
	return out
}

// missingInputIDs are the ids some language's catalog lacks, as "lang id".
func missingInputIDs(ids map[string]string, catalogs map[string]map[string]bool) []string {
	var out []string
	for id := range ids {
		for _, lang := range []string{"en", "ja", "ko"} {
			if !catalogs[lang][id] {
				out = append(out, lang+" "+id)
			}
		}
	}
	return out
}

// TestInputIDsInCatalogs: every ID the engine gives an InputError is in every language's
// catalog.
func TestInputIDsInCatalogs(t *testing.T) {
	ids := engineInputIDs(t, "../engine")
	maps.Copy(ids, engineInputIDs(t, "../admission"))
	for _, want := range []string{"manifest-empty", "not-utf8", "too-many-steps", "unknown-mode", "proxyconfig-not-bool", "annotations-total", "step-format", "upgrade-no-mesh", "not-a-pod-maker"} {
		if _, ok := ids[want]; !ok {
			t.Errorf("the collector missed %s (found %d ids)", want, len(ids))
		}
	}
	catalogs := inputCatalogs(t)
	if m := missingInputIDs(ids, catalogs); len(m) > 0 {
		t.Errorf("not in the catalogs: %v", m)
	}
	// The check trips on an id no catalog has, and on one only Japanese lacks.
	if m := missingInputIDs(map[string]string{"no-such-error": ""}, catalogs); len(m) != 3 {
		t.Errorf("an unknown id is missing in every language, got %v", m)
	}
	delete(catalogs["ja"], "manifest-empty")
	if m := missingInputIDs(map[string]string{"manifest-empty": ""}, catalogs); len(m) != 1 || m[0] != "ja manifest-empty" {
		t.Errorf("an id only Japanese lacks: got %v", m)
	}
}

// TestFaultIDsInCatalogs: every id a Fault is given below the edge is in every language's
// errors.fault section, and a fault is worded from it: in English exactly as its Error, in
// Japanese and Korean not in English, with the error under it after it.
func TestFaultIDsInCatalogs(t *testing.T) {
	ids := map[string]string{}
	for _, dir := range []string{"../engine", "../admission", "../clustermesh", "../report"} {
		maps.Copy(ids, literalIDs(t, dir, "Fault"))
	}
	for _, want := range []string{"default-install", "webhook-status", "batch-format", "no-pod-template"} {
		if _, ok := ids[want]; !ok {
			t.Errorf("the collector missed %s (found %d ids)", want, len(ids))
		}
	}
	catalogs := map[string]map[string]bool{}
	for _, lang := range []string{"en", "ja", "ko"} {
		var f struct {
			Errors struct{ Fault map[string]string }
		}
		if _, err := toml.DecodeFile("../i18n/locales/errors."+lang+".toml", &f); err != nil {
			t.Fatal(err)
		}
		catalogs[lang] = map[string]bool{}
		for id := range f.Errors.Fault {
			catalogs[lang][id] = true
		}
	}
	if m := missingInputIDs(ids, catalogs); len(m) > 0 {
		t.Errorf("not in the catalogs: %v", m)
	}
	if m := missingInputIDs(map[string]string{"no-such-fault": ""}, catalogs); len(m) != 3 {
		t.Errorf("an unknown id is missing in every language, got %v", m)
	}
	under := &input.Error{Doc: 2, ID: "manifest-empty"}
	for id := range ids {
		f := &input.Fault{ID: id, Params: input.Params("name", "ztunnel", "type", "*v1.Service", "code", "500", "body", "boom"), Err: under}
		if got := English.FaultText(f); got != f.Error() || !strings.HasSuffix(got, ": "+under.Error()) {
			t.Errorf("%s in English: %q, its Error %q", id, got, f.Error())
		}
		for _, lang := range []string{"ja", "ko"} {
			got := In(i18n.For(lang)).FaultText(f)
			if strings.Contains(got, i18n.For("en").TMap("errors.fault."+id, f.Params)) || !strings.HasSuffix(got, ": "+In(i18n.For(lang)).InputErrorText(under)) {
				t.Errorf("%s in %s: %q", id, lang, got)
			}
		}
	}
}

// realInputErrors are errors the engine gives, each with what must stay in every language.
func realInputErrors(t *testing.T, e *engine.Engine) []struct {
	name string
	err  *input.Error
	keep []string
} {
	t.Helper()
	ctx := context.Background()
	pod := []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: app\n    image: nginx\n")
	inputErr := func(err error) *input.Error {
		t.Helper()
		var ie *input.Error
		if !errors.As(err, &ie) {
			t.Fatalf("want an *InputError, got %v", err)
		}
		return ie
	}
	steps := make([]input.Step, 101)
	for i := range steps {
		steps[i] = input.Step{Key: "sidecar.istio.io/proxyCPU", Value: "100m"}
	}
	_, empty := e.Timeline(ctx, []byte("  \n"), nil, engine.Settings{})
	_, utf := e.Timeline(ctx, []byte("kind: Pod\n\xff\xfe\n"), nil, engine.Settings{})
	_, many := e.Timeline(ctx, pod, steps, engine.Settings{})
	_, version := e.Timeline(ctx, pod, nil, engine.Settings{Mode: "webhook", KubernetesVersion: "2.0"})
	_, mode := e.Timeline(ctx, pod, nil, engine.Settings{Mode: "sideways"})
	_, option := e.Install(ctx, engine.InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts"}})
	_, key := e.Timeline(ctx, pod, []input.Step{{Key: "sidecar.istio.io/proxy CPU", Value: "1"}}, engine.Settings{})
	_, step := input.ParseStep("sidecar.istio.io/inject")
	_, proxy := catalog.SetProxyConfigField("", "holdApplicationUntilProxyStarts", "yes")
	_, twoRevisions := engine.ParseMeshConfigMaps(revisionsPaste(2))
	_, manyRevisions := engine.ParseMeshConfigMaps(revisionsPaste(3000))
	return []struct {
		name string
		err  *input.Error
		keep []string
	}{
		{"empty manifest", inputErr(empty), nil},
		{"invalid UTF-8", inputErr(utf), []string{"UTF-8", "YAML"}},
		{"too many steps", inputErr(many), []string{"101", "100"}},
		{"bad kubernetes version", inputErr(version), []string{`"2.0"`, "1.34"}},
		{"bad mode", inputErr(mode), []string{`"sideways"`, "kube-inject", "webhook", "native", "classic"}},
		{"install option without a value", inputErr(option), []string{"PATH=VALUE", "values.global.proxy.holdApplicationUntilProxyStarts=true"}},
		{"bad annotation key in step 1", inputErr(key), []string{"1"}},
		{"step without =", inputErr(step), []string{`"sidecar.istio.io/inject"`, "KEY=VALUE", "-KEY"}},
		{"proxy config bool", inputErr(proxy), []string{`"yes"`, "true", "false"}},
		{"two revisions' ConfigMaps", inputErr(twoRevisions), []string{"rev-0000, rev-0001", "istio-sidecar-injector"}},
		{"3,000 revisions' ConfigMaps", inputErr(manyRevisions), []string{"3000", "rev-0000", "rev-0009", "2990", "istio-sidecar-injector"}},
	}
}

// revisionsPaste is a List of n revisions' injector ConfigMaps, revisions rev-0000, rev-0001, …
func revisionsPaste(n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: istio-sidecar-injector-rev-%04d}, data: {config: \"templates: {}\", values: \"{}\"}}\n", i)
	}
	return []byte(b.String())
}

// TestManyRevisionsInEveryLanguage: the error for a paste of 3,000 revisions stays short in
// every language (the first names and how many more), and names the count; two are all named.
func TestManyRevisionsInEveryLanguage(t *testing.T) {
	_, many := engine.ParseMeshConfigMaps(revisionsPaste(3000))
	_, two := engine.ParseMeshConfigMaps(revisionsPaste(2))
	for _, lang := range []string{"en", "ja", "ko"} {
		w := In(i18n.For(lang))
		var ie *input.Error
		if !errors.As(many, &ie) {
			t.Fatalf("3,000 revisions: %v", many)
		}
		if got := w.InputErrorText(ie); len(got) > 2<<10 || !strings.Contains(got, "3000") || strings.Contains(got, "rev-0010") {
			t.Errorf("%s, 3,000 revisions: %d bytes: %.400s", lang, len(got), got)
		}
		if !errors.As(two, &ie) {
			t.Fatalf("two revisions: %v", two)
		}
		if got := w.InputErrorText(ie); !strings.Contains(got, "rev-0000, rev-0001") {
			t.Errorf("%s, two revisions: %.400s", lang, got)
		}
	}
}

// englishInEngine is the English sentence an error of sidecarlab's own carries beside its id: the
// engine makes none (words at the edge), so there is nothing for it to drift from the catalogs.
func englishInEngine(e *input.Error) string {
	if e.ID != "" {
		return e.Msg
	}
	return ""
}

// TestInputErrorsWorded: real errors of the engine carry an id and its parameters and no English
// of their own (englishInEngine); the English the CLI and the logs print (Text, Error) is the
// English catalog's, as the edges word it; in Japanese and Korean the sentence is another,
// keeping its numbers, values and keys.
func TestInputErrorsWorded(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, c := range realInputErrors(t, e) {
		if c.err.ID == "" {
			t.Errorf("%s: no ID (%q)", c.name, c.err.Text())
			continue
		}
		if en := englishInEngine(c.err); en != "" {
			t.Errorf("%s: the engine wrote its English: %q", c.name, en)
		}
		if got := English.InputText(c.err); got != c.err.Text() {
			t.Errorf("%s: the English catalog says\n%q\nthe error says\n%q", c.name, got, c.err.Text())
		}
		if got := English.Input(c.err).Summary; c.err.Field != "manifest" && got != c.err.Error() {
			t.Errorf("%s: English summary %q, want the error as it is, %q", c.name, got, c.err.Error())
		}
		for _, lang := range []string{"ja", "ko"} {
			got := In(i18n.For(lang)).InputText(c.err)
			if got == c.err.Text() || !nonASCII.MatchString(got) {
				t.Errorf("%s in %s: still English: %q", c.name, lang, got)
			}
			for _, k := range c.keep {
				if !strings.Contains(got, k) {
					t.Errorf("%s in %s: %q lost %q", c.name, lang, got, k)
				}
			}
		}
	}
	if m := i18n.Missing(); len(m) > 0 {
		t.Errorf("missing: %v", m)
	}
}

// nonASCII finds a character of Japanese or Korean text.
var nonASCII = regexp.MustCompile(`[^\x00-\x7f]`)

// TestInputTextDrift: englishInEngine trips on an error of ours that carries its English, not on
// one without or on someone else's text; a step's prefix is worded, also around a foreign text.
func TestInputTextDrift(t *testing.T) {
	drifted := &input.Error{ID: "unknown-mode", Params: map[string]string{"modeQ": `"x"`}, Msg: `unknown mode "x"; want one of kube-inject, webhook`}
	if englishInEngine(drifted) == "" {
		t.Error("an error of ours that carries its English went unnoticed")
	}
	if en := englishInEngine(&input.Error{ID: "unknown-mode", Params: map[string]string{"modeQ": `"x"`}}); en != "" {
		t.Errorf("an error with its id alone: %q", en)
	}
	ja := In(i18n.For("ja"))
	foreign := &input.Error{Field: `annotation "a"`, Params: map[string]string{"step": "2"}, Msg: "invalid value 'x' for annotation 'a': bad"}
	if en := englishInEngine(foreign); en != "" {
		t.Errorf("someone else's text: %q", en)
	}
	if got, want := foreign.Text(), "step 2: invalid value 'x' for annotation 'a': bad"; got != want {
		t.Errorf("Text: %q, want %q", got, want)
	}
	if got := English.InputText(foreign); got != foreign.Text() {
		t.Errorf("English: %q, want %q", got, foreign.Text())
	}
	if got, want := ja.InputText(foreign), "ステップ2: invalid value 'x' for annotation 'a': bad"; got != want {
		t.Errorf("ja: %q, want %q", got, want)
	}
}

// TestForeignInputVerbatim: a YAML parser's error has no ID and reads the same in every
// language (its words, if any, come from wording.input.yaml, not from the input catalog).
func TestForeignInputVerbatim(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tl, err := e.Timeline(context.Background(), []byte("kind: Pod\nmetadata:\n  name: [p\n"), nil, engine.Settings{})
	var ie *input.Error
	if err != nil && !errors.As(err, &ie) {
		t.Fatal(err)
	}
	if ie == nil && tl != nil {
		for _, d := range tl.Steps[0].Documents {
			if d.Error != nil {
				ie = d.Error
			}
		}
	}
	if ie == nil {
		t.Fatal("no input error for broken YAML")
	}
	if ie.ID != "" {
		t.Fatalf("a YAML parser's error has ID %q", ie.ID)
	}
	for _, lang := range []string{"en", "ja", "ko"} {
		if got := In(i18n.For(lang)).InputText(ie); got != ie.Text() {
			t.Errorf("%s: %q, want the parser's text %q", lang, got, ie.Text())
		}
		if got := In(i18n.For(lang)).Input(ie).Details; got != ie.Text() {
			t.Errorf("%s: details %q, want the parser's text %q", lang, got, ie.Text())
		}
	}
}

// TestFieldText: the fields the engine names in English are worded in the reader's language (the
// names in them kept), the English is the engine's own text, and a field it does not know (a
// form's) is shown as it is.
func TestFieldText(t *testing.T) {
	ja := In(i18n.For("ja"))
	for _, f := range []string{"manifest", "kubernetes version", "install", "install overlay", "steps", "mode", "annotations", "annotation",
		`annotation "sidecar.istio.io/inject"`, `annotation "proxy.istio.io/config" field "concurrency"`, `install option "a=b"`, `file "f.yaml"`} {
		if got := English.FieldText(f); got != f {
			t.Errorf("English %q = %q", f, got)
		}
		got := ja.FieldText(f)
		if got == f {
			t.Errorf("ja %q not worded", f)
		}
		if _, name, ok := strings.Cut(f, " "); ok && strings.Contains(name, `"`) {
			for _, q := range strings.Split(name, `"`)[1:] {
				if q != "" && !strings.Contains(q, " field ") && !strings.Contains(got, q) {
					t.Errorf("ja %q = %q lost %q", f, got, q)
				}
			}
		}
	}
	if got := ja.FieldText("v:sidecar.istio.io/proxyCPU"); got != "v:sidecar.istio.io/proxyCPU" {
		t.Errorf("a form's field: %q", got)
	}
	if got := ja.FieldText(`annotation "x" field "y"`); got != `アノテーション"x"のフィールド"y"` {
		t.Errorf("ja annotation field: %q", got)
	}
	if m := i18n.Missing(); len(m) > 0 {
		t.Errorf("missing: %q", m)
	}
}

// TestInputErrorText: an input error's where (document, line, field) is worded, one way for the
// API, the pages and the CLI; without one the message stands alone. In English it is the
// engine's own Error(), byte for byte.
func TestInputErrorText(t *testing.T) {
	ja, en := In(i18n.For("ja")), In(i18n.For("en"))
	for _, c := range []struct {
		e    input.Error
		want string
	}{
		{input.Error{Doc: 2, Line: 13, Field: "manifest", Msg: "yaml: x"}, "ドキュメント2、13行目、マニフェスト: yaml: x"},
		{input.Error{Doc: 2, Field: "annotation \"a\"", Msg: "m"}, "ドキュメント2、アノテーション\"a\": m"},
		{input.Error{Line: 3, Msg: "m"}, "3行目: m"},
		{input.Error{Msg: "m"}, "m"},
	} {
		if got := ja.InputErrorText(&c.e); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
		if got, want := en.InputErrorText(&c.e), c.e.Error(); got != want {
			t.Errorf("%+v: English %q, want %q", c.e, got, want)
		}
	}
}

// TestOnePlace: every place in the input is worded by where and at, whoever says it: a secret's
// place and its line (the share dialog, the CLI), a finding's line (the CLI) and At (the
// editor's marker, a line of the namespace labels). Each is compared with where and at in every
// language, so that a wording of its own (a full-width colon in Japanese) fails; in English
// each reads as it did before it went through them.
func TestOnePlace(t *testing.T) {
	secret := secrets.Finding{Doc: 2, Line: 9, Path: "spec.x", Kind: secrets.EnvName, Excerpt: "PASSWORD: <redacted>"}
	finding := engine.Finding{Check: "job-classic-sidecar", Severity: engine.SeverityError, Doc: 2, Path: "spec.x"}
	for _, lang := range i18n.Codes {
		w := In(i18n.For(lang))
		what := w.SecretKind(secret) + " (" + secret.Excerpt + ")"
		for _, c := range []struct{ name, got, want string }{
			{"SecretWhere", w.SecretWhere(secret), w.where(2, 9, 0, "")},
			{"SecretLine", w.SecretLine(secret), w.at(w.where(2, 9, 0, "")+w.loc().T("wording.where.sep")+"spec.x", what)},
			{"Line", w.Line(finding), "error [job-classic-sidecar] " + w.at(w.where(2, 0, 0, "")+" spec.x", w.Message(finding))},
			{"At", w.At(2, 0, 0, "", "m"), w.at(w.where(2, 0, 0, ""), "m")},
			{"At a field", w.At(0, 3, 0, "x", "m"), w.at(w.where(0, 3, 0, "x"), "m")},
		} {
			if c.got != c.want {
				t.Errorf("%s %s: %q, want %q", lang, c.name, c.got, c.want)
			}
		}
	}
	ja := In(i18n.For("ja"))
	for _, c := range []struct{ got, want string }{
		{English.SecretWhere(secret), "document 2, line 9"},
		{English.SecretLine(secret), "document 2, line 9, spec.x: a value whose name says it is a password, token, key or secret (PASSWORD: <redacted>)"},
		{English.Line(finding), "error [job-classic-sidecar] document 2 spec.x: " + English.Message(finding)},
		{English.At(2, 0, 0, "", "m"), "document 2: m"},
		{English.At(0, 3, 0, "namespace labels", "m"), "line 3, namespace labels: m"},
		{ja.SecretLine(secret), "ドキュメント2、9行目、spec.x: " + ja.SecretKind(secret) + " (PASSWORD: <redacted>)"},
		{ja.Line(finding), "error [job-classic-sidecar] ドキュメント2 spec.x: " + ja.Message(finding)},
		{ja.At(2, 0, 0, "", "m"), "ドキュメント2: m"},
		{ja.At(0, 3, 0, "Namespaceのラベル", "m"), "3行目、Namespaceのラベル: m"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// TestBrokenInputKinds: each broken input of the engine's corpus (engine/testdata/broken, its
// kind on its first line) is said to be of its kind — not YAML, or not what Kubernetes reads —
// in words of ours, in English, Japanese and Korean, never the parser's message alone; an error
// of Istio's is of neither kind.
func TestBrokenInputKinds(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	files, err := filepath.Glob("../engine/testdata/broken/*.yaml")
	if err != nil || len(files) < 20 {
		t.Fatalf("%d broken inputs (%v)", len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := strings.CutPrefix(strings.SplitN(string(b), "\n", 2)[0], "# kind: ")
		r, err := e.Inject(t.Context(), b, nil, engine.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		errs := r.Errors()
		if len(errs) != 1 {
			t.Fatalf("%s: %d errors", f, len(errs))
		}
		if got := ErrorKind(errs[0]); got != want {
			t.Errorf("%s: kind %q, want %q (%s)", filepath.Base(f), got, want, errs[0].Text())
		}
		// In words of ours where we know the reason: the reason is not the parser's text.
		for _, w := range []Words{English, In(i18n.For("ja")), In(i18n.For("ko"))} {
			if in := w.Input(errs[0]); in.Reason == errs[0].Text() || strings.Contains(in.Reason, "converting YAML") {
				t.Errorf("%s: the reason is the parser's text: %q", filepath.Base(f), in.Reason)
			}
		}
	}
	istio := &input.Error{Doc: 1, Line: 1, Field: "manifest", Msg: "could not parse proxy config: invalid character 'b'"}
	if got := ErrorKind(istio); got != KindIstio {
		t.Errorf("Istio's error: kind %q", got)
	}
}

// TestOlderTemplateWords: an injection template written for another Istio is said to be, with
// what it uses that this Istio's injector lacks and, where the real meshes show it, the releases
// whose templates use it; Istio's own text stays behind "details". Other template errors are
// Istio's text as before.
func TestOlderTemplateWords(t *testing.T) {
	istio := engine.Version().Istio
	for _, c := range []struct {
		e    input.Error
		want string // "" for Istio's text unchanged
	}{
		{input.Error{Field: "your mesh", Msg: `injection templates: template: inject:437: function "render" not defined`},
			`your mesh: the injection template calls render, as the templates of Istio 1.2–1.7 do, and Istio ` + istio + `'s injector has no such function`},
		{input.Error{Doc: 1, Line: 1, Msg: `failed to run injection template: template: inject:192:12: executing "inject" at <.EstimatedConcurrency>: can't evaluate field EstimatedConcurrency in type *inject.SidecarTemplateData`},
			`document 1, line 1: the injection template reads .EstimatedConcurrency, as the templates of Istio 1.11–1.17 do`},
		{input.Error{Field: "your mesh", Msg: `injection templates: template: inject:3: function "frobnicate" not defined`},
			`your mesh: the injection template calls frobnicate, a function Istio ` + istio + `'s injector does not have`},
		{input.Error{Field: "your mesh", Msg: `injection templates: template: inject:3: unexpected EOF`}, ""},
	} {
		got := English.Input(&c.e)
		if c.want == "" {
			if got.Summary != c.e.Error() || got.Details != "" {
				t.Errorf("%q: %+v, want Istio's text as it is", c.e.Text(), got)
			}
			continue
		}
		if !strings.HasPrefix(got.Summary, c.want) || got.Details != c.e.Text() {
			t.Errorf("%q: summary %q (details %q), want it to start %q, with Istio's text as details", c.e.Text(), got.Summary, got.Details, c.want)
		}
		for _, code := range []string{"ja", "ko"} {
			name := olderTemplate.FindStringSubmatch(c.e.Text())
			if in := In(i18n.For(code)).Input(&c.e); in.Reason == c.e.Text() || !strings.Contains(in.Reason, name[1]+name[2]) || !strings.Contains(in.Reason, istio) {
				t.Errorf("%s: %q", code, in.Reason)
			}
		}
	}
}
