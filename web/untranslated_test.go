package web

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	templparser "github.com/a-h/templ/parser/v2"
	"github.com/a-h/templ/parser/v2/visitor"
)

// untranslatedPending are the templates not yet worded through the catalogs; the list only
// shrinks. A file here is still checked for parsing; the check of its text is what waits.
var untranslatedPending = map[string]bool{
	"results.templ": true,
}

// sameInEveryLanguage are the words a page writes as they are in Japanese and Korean too:
// names of products, formats and keys.
var sameInEveryLanguage = map[string]bool{
	"sidecarlab": true, "Istio": true, "istio": true, "istioctl": true, "kubectl": true, "Kubernetes": true,
	"Envoy": true, "YAML": true, "JSON": true, "CSV": true, "SARIF": true, "GitHub": true, "Markdown": true,
	"OK": true, "ID": true, "URL": true, "HTTP": true, "API": true, "CLI": true, "CNI": true,
}

// humanAttributes are the attributes a person reads (or a screen reader says).
var humanAttributes = map[string]bool{
	"title": true, "aria-label": true, "alt": true, "placeholder": true, "aria-description": true,
	"aria-roledescription": true, "aria-valuetext": true, "label": true,
}

// verbatimElements hold code, keys and values, shown as they are.
var verbatimElements = map[string]bool{"code": true, "kbd": true, "pre": true, "samp": true, "script": true, "style": true}

var (
	wordRun       = regexp.MustCompile(`[A-Za-z][A-Za-z'’]+`)
	capitalisedOr = regexp.MustCompile(`^[A-Z][a-z]+\b|[A-Za-z]{2,}\s+[A-Za-z]{2,}`)
)

// codeLike is a token of code, a key or a value: it has a character words do not.
func codeLike(tok string) bool {
	return strings.ContainsAny(tok, "./_=:{}[]()<>#@$%*+|\\\"`0123456789") ||
		strings.Count(tok, "-") > 0 && strings.ToLower(tok) == tok
}

// untranslatedText is the words of raw template text no catalog says: "" when it has none.
func untranslatedText(s string) string {
	var words []string
	for _, tok := range strings.Fields(s) {
		if codeLike(tok) {
			continue
		}
		for _, w := range wordRun.FindAllString(tok, -1) {
			if !sameInEveryLanguage[w] {
				words = append(words, w)
			}
		}
	}
	return strings.Join(words, " ")
}

// untranslatedLiteral is a Go string literal in a template's expression that reads as words (a
// capitalised word, or two words): a label passed to a component, a sentence built in place.
func untranslatedLiteral(s string) string {
	var kept []string
	for _, tok := range strings.Fields(s) {
		if !codeLike(tok) && !sameInEveryLanguage[strings.Trim(tok, ",;!?")] {
			kept = append(kept, tok)
		}
	}
	rest := strings.Join(kept, " ")
	// A word with a space before or after it is a piece of a sentence being built.
	if capitalisedOr.MatchString(rest) || rest != "" && strings.TrimSpace(s) != s {
		return rest
	}
	return ""
}

// worded are the functions that take message ids and parameter names: their literals are keys.
var worded = map[string]bool{"T": true, "N": true, "M": true, "Msg": true, "TMap": true}

// literalsIn are the words of the string literals in a Go expression, but for the ids and
// parameter names given to T, N, M and Msg. In a human attribute (strict), any word counts.
func literalsIn(expr string, strict bool) []string {
	var root ast.Node
	if e, err := parser.ParseExpr(expr); err == nil {
		root = e
	} else {
		// A statement-like expression (a for clause, a switch): look at its literals anyway.
		f, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc _() {\n"+expr+"\n{}}", 0)
		if err != nil {
			return nil
		}
		root = f
	}
	var out []string
	ast.Inspect(root, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			name := ""
			switch fun := n.Fun.(type) {
			case *ast.Ident:
				name = fun.Name
			case *ast.SelectorExpr:
				name = fun.Sel.Name
			}
			if worded[name] {
				for _, a := range n.Args {
					if _, lit := a.(*ast.BasicLit); !lit {
						out = append(out, literalsIn(types(a), strict)...)
					}
				}
				return false
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return false
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				return false
			}
			w := untranslatedLiteral(s)
			if strict {
				w = untranslatedText(s)
			}
			if w != "" {
				out = append(out, w)
			}
		}
		return true
	})
	return out
}

// types is an expression's source again, for a second look at a worded call's arguments.
func types(e ast.Expr) string {
	var b strings.Builder
	_ = printer.Fprint(&b, token.NewFileSet(), e)
	return b.String()
}

// untranslated lists the text of a template file that does not come from the catalogs, as
// "line: words".
func untranslated(t *testing.T, name, src string) []string {
	t.Helper()
	tf, err := templparser.ParseString(src)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []string
	add := func(r templparser.Range, what string) {
		out = append(out, strconv.Itoa(int(r.From.Line)+1)+": "+what)
	}
	exprWords := func(e templparser.Expression, strict bool) {
		for _, w := range literalsIn(e.Value, strict) {
			add(e.Range, w)
		}
	}
	v := visitor.New()
	element := v.Element
	v.Element = func(n *templparser.Element) error {
		if verbatimElements[n.Name] {
			return nil
		}
		return element(n)
	}
	v.Text = func(n *templparser.Text) error {
		if w := untranslatedText(n.Value); w != "" {
			add(n.Range, w)
		}
		return nil
	}
	v.ConstantAttribute = func(n *templparser.ConstantAttribute) error {
		if humanAttributes[n.Key.String()] {
			if w := untranslatedText(n.Value); w != "" {
				add(n.Range, n.Key.String()+"="+w)
			}
		}
		return nil
	}
	v.ExpressionAttribute = func(n *templparser.ExpressionAttribute) error {
		if humanAttributes[n.Key.String()] {
			exprWords(n.Expression, true)
		}
		return nil
	}
	v.StringExpression = func(n *templparser.StringExpression) error {
		exprWords(n.Expression, false)
		return nil
	}
	call := v.CallTemplateExpression
	v.CallTemplateExpression = func(n *templparser.CallTemplateExpression) error {
		exprWords(n.Expression, false)
		return call(n)
	}
	elem := v.TemplElementExpression
	v.TemplElementExpression = func(n *templparser.TemplElementExpression) error {
		exprWords(n.Expression, false)
		return elem(n)
	}
	if err := tf.Visit(v); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoUntranslatedText: every word a template shows comes from the catalogs (T, N, M, Msg):
// no literal text between tags, in a human attribute (title, aria-label, alt, placeholder), or
// as a string literal that reads as words inside an expression. Code (<code>, <kbd>, <pre>),
// keys, values and names of products are allowed.
func TestNoUntranslatedText(t *testing.T) {
	files, _ := filepath.Glob("*.templ")
	if len(files) == 0 {
		t.Fatal("no templates")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found := untranslated(t, f, string(src))
		if untranslatedPending[f] {
			if len(found) == 0 {
				t.Errorf("%s has no untranslated text left: take it off untranslatedPending", f)
			}
			continue
		}
		for _, w := range found {
			t.Errorf("%s:%s", f, w)
		}
	}
	for f := range untranslatedPending {
		if !slices.Contains(files, f) {
			t.Errorf("untranslatedPending names %s, which is not a template", f)
		}
	}
}

// TestUntranslatedCheck: the check finds each kind of literal text, and passes worded text.
func TestUntranslatedCheck(t *testing.T) {
	const tmpl = `package web

templ good(v string) {
	<p title={ T(ctx, "x.title") }>{ T(ctx, "x.body", "Key", v) }</p>
	<code>sidecar.istio.io/inject: "false"</code>
	<kbd>Ctrl</kbd> + <kbd>Enter</kbd>
	@M("lab.step", "N", 2)
	<span class="step-t" data-kind="added">istio-proxy · sidecarlab · 1.2.3</span>
	<a href={ templ.SafeURL("/s/" + v) }>{ v }</a>
}

templ bad(v string) {
	<p>Apply the steps</p>
	<button title="Toggle dark mode">◐</button>
	<span>{ "document " + v }</span>
	@tab("diff", "Diff")
	<img alt={ "Istio logo" }/>
}
`
	got := untranslated(t, "t.templ", tmpl)
	want := []string{"13: Apply the steps", "14: title=Toggle dark mode", "15: document", "16: Diff", "17: logo"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
