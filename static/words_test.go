package static

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

// wordCall is a call of main.js's t("key"…): a word the page sends in its JSON island.
var wordCall = regexp.MustCompile(`\bt\("([A-Za-z]+)"`)

// literalStatus is a status line written as an English literal instead of a word.
var literalStatus = regexp.MustCompile(`setStatus\(\s*["'\x60]`)

// scriptWords checks a script's source against the words the page sends: the keys it uses that
// the page lacks, the page's keys it never uses, and its literal status lines.
func scriptWords(src string, sent map[string]string) (unknown, unused []string, literal int) {
	used := map[string]bool{}
	for _, m := range wordCall.FindAllStringSubmatch(src, -1) {
		used[m[1]] = true
		if _, ok := sent[m[1]]; !ok && !slices.Contains(unknown, m[1]) {
			unknown = append(unknown, m[1])
		}
	}
	for k := range sent {
		if !used[k] {
			unused = append(unused, k)
		}
	}
	slices.Sort(unknown)
	slices.Sort(unused)
	return unknown, unused, len(literalStatus.FindAllString(src, -1))
}

// TestScriptWords: every word main.js shows comes from the catalogs (page.js.*, sent as the
// page's #i18n-js island) in every language, none the page sends is left unused, no status
// line is an English literal, and the committed bundle is built from the script that reads them.
func TestScriptWords(t *testing.T) {
	src, err := os.ReadFile("src/main.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range i18n.Codes {
		unknown, unused, literal := scriptWords(string(src), web.JSWords(i18n.For(code)))
		if len(unknown) > 0 || len(unused) > 0 || literal > 0 {
			t.Errorf("%s: main.js uses words the page does not send %q; the page sends unused %q; %d literal status lines", code, unknown, unused, literal)
		}
	}
	if missing := i18n.Missing(); len(missing) != 0 {
		t.Errorf("messages missing from the catalogs: %q", missing)
	}
	bundle, err := files.ReadFile("dist/app.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(bundle), "i18n-js") || strings.Contains(string(bundle), "Link copied.") {
		t.Error("dist/app.js is not built from the script that reads its words from the page: run npm run build")
	}
}

// TestScriptWordsCheck: the check finds an unknown word, an unused one and a literal status.
func TestScriptWordsCheck(t *testing.T) {
	sent := map[string]string{"linkCopied": "Link copied.", "stale": "x"}
	src := `copyText(l).then(() => setStatus(t("linkCopied"))); setStatus(t("nope", { Error: e })); setStatus("Injecting…");`
	unknown, unused, literal := scriptWords(src, sent)
	if !slices.Equal(unknown, []string{"nope"}) || !slices.Equal(unused, []string{"stale"}) || literal != 1 {
		t.Errorf("unknown %q, unused %q, literal %d", unknown, unused, literal)
	}
	if unknown, unused, literal := scriptWords(`setStatus(t("linkCopied")); t("stale")`, sent); len(unknown)+len(unused)+literal != 0 {
		t.Errorf("a clean script: unknown %q, unused %q, literal %d", unknown, unused, literal)
	}
}
