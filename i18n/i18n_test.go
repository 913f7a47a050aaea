package i18n

import (
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// catalog is every message of one language, by id, with the file that defines it.
type catalog map[string]struct {
	file string
	msg  *goi18n.Message
}

// readCatalogs parses each locales file on its own, so that an id defined twice is seen.
func readCatalogs(t *testing.T, fsys fs.FS) (map[string]catalog, []string) {
	t.Helper()
	names, err := fs.Glob(fsys, "locales/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	cats := map[string]catalog{}
	for _, name := range names {
		base := path.Base(name)
		parts := strings.Split(base, ".")
		if len(parts) != 3 || !slices.Contains(Codes, parts[1]) {
			problems = append(problems, base+": not AREA.LANG.toml with LANG one of "+strings.Join(Codes, ", "))
			continue
		}
		data, _ := fs.ReadFile(fsys, name)
		mf, err := goi18n.ParseMessageFileBytes(data, base, map[string]goi18n.UnmarshalFunc{"toml": tomlUnmarshal})
		if err != nil {
			problems = append(problems, base+": "+err.Error())
			continue
		}
		c := cats[parts[1]]
		if c == nil {
			c = catalog{}
			cats[parts[1]] = c
		}
		for _, m := range mf.Messages {
			if !strings.HasPrefix(m.ID, parts[0]+".") {
				problems = append(problems, base+": "+m.ID+" does not start with the file's area, "+parts[0]+".")
			}
			if prev, ok := c[m.ID]; ok {
				problems = append(problems, base+": "+m.ID+" is already defined in "+prev.file)
			}
			c[m.ID] = struct {
				file string
				msg  *goi18n.Message
			}{base, m}
		}
	}
	return cats, problems
}

var (
	placeholder = regexp.MustCompile(`{{\s*\.([A-Za-z][A-Za-z0-9_]*)\s*}}`)
	action      = regexp.MustCompile(`{{.*?}}`)
	code        = regexp.MustCompile("`[^`]*`")
)

// forms are a message's plural forms that have text.
func forms(m *goi18n.Message) map[string]string {
	out := map[string]string{}
	for f, s := range map[string]string{"zero": m.Zero, "one": m.One, "two": m.Two, "few": m.Few, "many": m.Many, "other": m.Other} {
		if s != "" {
			out[f] = s
		}
	}
	return out
}

// integerForms are the CLDR plural forms a language uses for whole counts (the only counts
// sidecarlab has), by x/text's rules.
func integerForms(code string) []string {
	names := map[plural.Form]string{plural.Zero: "zero", plural.One: "one", plural.Two: "two", plural.Few: "few", plural.Many: "many", plural.Other: "other"}
	tag := language.MustParse(code)
	var out []string
	for i := 0; i <= 1000; i++ {
		f := names[plural.Cardinal.MatchPlural(tag, i, 0, 0, 0, 0)]
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// shape is what every language's text of a message must share: the placeholders it uses, the
// code it quotes (field names and keys are never translated), and whether it is a plural.
func shape(m *goi18n.Message) (names, codes []string) {
	seen := map[string]bool{}
	for _, s := range forms(m) {
		for _, p := range placeholder.FindAllStringSubmatch(s, -1) {
			if !seen["p"+p[1]] {
				seen["p"+p[1]] = true
				names = append(names, p[1])
			}
		}
		for _, c := range code.FindAllString(s, -1) {
			if !seen["c"+c] {
				seen["c"+c] = true
				codes = append(codes, c)
			}
		}
	}
	sort.Strings(names)
	sort.Strings(codes)
	return names, codes
}

// afterPlaceholder is a placeholder, maybe closed by a quote or backtick, and the particle
// written after it.
var afterPlaceholder = regexp.MustCompile("}}[\"'`]?(으로|로|이|가|을|를|은|는|와|과)")

// fixedParticles are the particles written in one form after a placeholder: the form depends on
// the word the placeholder brings (particles), so the catalog writes both — {{.Key}}이(가),
// {{.To}}(으)로. A particle that starts a longer word (이며, 로그) is not one.
func fixedParticles(s string) []string {
	var out []string
	for _, m := range afterPlaceholder.FindAllStringSubmatchIndex(s, -1) {
		next, _ := utf8.DecodeRuneInString(s[m[1]:])
		if next == '(' || next >= 0xAC00 && next <= 0xD7A3 && next != '의' && next != '서' {
			continue
		}
		out = append(out, "the particle "+s[m[2]:m[3]]+" after a placeholder depends on its value: write the pair, as 이(가), 을(를), 은(는), 와(과), (으)로")
	}
	return out
}

// checkCatalogs is every problem of a set of catalogs: an id missing in a language or defined in
// one language only, another language's placeholders or quoted code, a template action that is
// not a plain {{.Name}}, plural forms that are not the language's (CLDR), a file name that does
// not say its language.
func checkCatalogs(t *testing.T, fsys fs.FS) []string {
	cats, problems := readCatalogs(t, fsys)
	en := cats[Default]
	if en == nil {
		en = catalog{}
	}
	for _, code := range Codes {
		c := cats[code]
		want := integerForms(code)
		for id, e := range c {
			for f, s := range forms(e.msg) {
				for _, a := range action.FindAllString(s, -1) {
					if !placeholder.MatchString(a) || placeholder.FindString(a) != a {
						problems = append(problems, code+" "+id+": "+a+" is not a plain {{.Name}} placeholder")
					}
				}
				if strings.Count(s, "`")%2 != 0 {
					problems = append(problems, code+" "+id+": an unclosed ` in "+f)
				}
				if code == "ko" {
					for _, p := range fixedParticles(s) {
						problems = append(problems, code+" "+id+": "+p)
					}
				}
			}
			if code != Default {
				if _, ok := en[id]; !ok {
					problems = append(problems, code+" "+id+": not in the English catalog (in "+e.file+")")
				}
			}
		}
		for id, e := range en {
			m, ok := c[id]
			if !ok {
				problems = append(problems, code+" "+id+": missing (English has it in "+e.file+")")
				continue
			}
			wantNames, wantCodes := shape(e.msg)
			names, codes := shape(m.msg)
			if !slices.Equal(wantNames, names) {
				problems = append(problems, code+" "+id+": placeholders "+strings.Join(names, ",")+", English has "+strings.Join(wantNames, ","))
			}
			if !slices.Equal(wantCodes, codes) {
				problems = append(problems, code+" "+id+": quoted code "+strings.Join(codes, " ")+", English has "+strings.Join(wantCodes, " "))
			}
			got := forms(m.msg)
			if len(forms(e.msg)) == 1 {
				if len(got) != 1 || got["other"] == "" {
					problems = append(problems, code+" "+id+": not a plural in English, so only other")
				}
				continue
			}
			for _, f := range want {
				if got[f] == "" {
					problems = append(problems, code+" "+id+": plural form "+f+" missing")
				}
			}
			for f := range got {
				if !slices.Contains(want, f) {
					problems = append(problems, code+" "+id+": plural form "+f+" is not "+code+"'s")
				}
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// TestCatalogs: the three languages have the same messages, each with the same placeholders and
// the same quoted code, and the plural forms of its language.
func TestCatalogs(t *testing.T) {
	for _, p := range checkCatalogs(t, catalogs) {
		t.Error(p)
	}
}

// TestCatalogsCheck: the check trips on each kind of mistake, and passes a good set.
func TestCatalogsCheck(t *testing.T) {
	good := fstest.MapFS{
		"locales/a.en.toml": {Data: []byte("[a]\nx = \"Set `a` to {{.V}}\"\n[a.n]\none = \"{{.Count}} pod\"\nother = \"{{.Count}} pods\"\n")},
		"locales/a.ja.toml": {Data: []byte("[a]\nx = \"`a` を {{.V}} に\"\n[a.n]\nother = \"Pod {{.Count}} 個\"\n")},
		// The pair after a placeholder; 이며 and 로그 start words, not particles.
		"locales/a.ko.toml": {Data: []byte("[a]\nx = \"`a`를 {{.V}}(으)로, {{.V}}이며 {{.V}}로그\"\n[a.n]\nother = \"파드 {{.Count}}개\"\n")},
	}
	if p := checkCatalogs(t, good); len(p) != 0 {
		t.Fatalf("a good set has problems: %q", p)
	}
	for name, c := range map[string]struct{ file, data, want string }{
		"missing":         {"locales/a.ko.toml", "[a.n]\nother = \"파드 {{.Count}}개\"\n", "ko a.x: missing"},
		"extra":           {"locales/a.ja.toml", "[a]\nx = \"`a` を {{.V}} に\"\ny = \"余分\"\n[a.n]\nother = \"{{.Count}}\"\n", "ja a.y: not in the English catalog"},
		"placeholder":     {"locales/a.ja.toml", "[a]\nx = \"`a` を {{.W}} に\"\n[a.n]\nother = \"{{.Count}}\"\n", "ja a.x: placeholders W, English has V"},
		"unused":          {"locales/a.ja.toml", "[a]\nx = \"`a` を変更\"\n[a.n]\nother = \"{{.Count}}\"\n", "ja a.x: placeholders , English has V"},
		"code translated": {"locales/a.ja.toml", "[a]\nx = \"`エー` を {{.V}} に\"\n[a.n]\nother = \"{{.Count}}\"\n", "ja a.x: quoted code"},
		"not plain":       {"locales/a.ja.toml", "[a]\nx = \"`a` を {{.V | printf \\\"%q\\\"}} に\"\n[a.n]\nother = \"{{.Count}}\"\n", "is not a plain"},
		"plural form":     {"locales/a.ja.toml", "[a]\nx = \"`a` を {{.V}} に\"\n[a.n]\none = \"{{.Count}}\"\nother = \"{{.Count}}\"\n", "ja a.n: plural form one is not ja's"},
		"plural missing":  {"locales/a.en.toml", "[a]\nx = \"Set `a` to {{.V}}\"\n[a.n]\nzero = \"{{.Count}} pods\"\nother = \"{{.Count}} pods\"\n", "en a.n: plural form one missing"},
		"duplicate":       {"locales/b.en.toml", "[a]\nx = \"Set `a` to {{.V}}\"\n", "b.en.toml: a.x is already defined in a.en.toml"},
		"bad name":        {"locales/b.de.toml", "[b]\nx = \"y\"\n", "b.de.toml: not AREA.LANG.toml"},
		"unclosed code":   {"locales/a.ja.toml", "[a]\nx = \"`a を {{.V}} に\"\n[a.n]\nother = \"{{.Count}}\"\n", "ja a.x: an unclosed `"},
		"not its area":    {"locales/b.en.toml", "[c]\nx = \"y\"\n", "b.en.toml: c.x does not start with the file's area, b."},
		"fixed particle":  {"locales/a.ko.toml", "[a]\nx = \"`a`를 {{.V}}로\"\n[a.n]\nother = \"파드 {{.Count}}개\"\n", "ko a.x: the particle 로 after a placeholder"},
		"quoted particle": {"locales/a.ko.toml", "[a]\nx = \"`a`를 `{{.V}}`가 바꿈\"\n[a.n]\nother = \"파드 {{.Count}}개\"\n", "ko a.x: the particle 가 after a placeholder"},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for k, v := range good {
				fsys[k] = v
			}
			fsys[c.file] = &fstest.MapFile{Data: []byte(c.data)}
			p := checkCatalogs(t, fsys)
			if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, c.want) }) {
				t.Errorf("no problem containing %q in %q", c.want, p)
			}
		})
	}
}

func TestNegotiate(t *testing.T) {
	for _, c := range []struct{ query, cookie, accept, want string }{
		{"", "", "", "en"},
		{"", "", "ja,en-US;q=0.9,en;q=0.8", "ja"},
		{"", "", "ko-KR,ko;q=0.9", "ko"},
		{"", "", "fr-FR,fr;q=0.9", "en"},
		{"", "", "fr;q=0.9,ko;q=0.5", "ko"},
		{"", "", "zh-TW,ja;q=0.3", "ja"},
		{"", "ko", "ja", "ko"},                                     // the remembered choice beats the browser's
		{"ja", "ko", "en", "ja"},                                   // a link's ?lang= beats both
		{"de", "xx", "ko", "ko"},                                   // unknown codes are ignored
		{"", "", "*;q=0.1,\x00;;", "en"},                           // a header that does not parse
		{"", "", strings.Repeat("en-US;q=0.1,", 200) + "ja", "en"}, // read only so far
	} {
		if got := Negotiate(c.query, c.cookie, c.accept); got != c.want {
			t.Errorf("Negotiate(%q, %q, %q) = %q, want %q", c.query, c.cookie, c.accept, got, c.want)
		}
	}
}

func TestLocalizer(t *testing.T) {
	fsys := fstest.MapFS{
		"locales/t.en.toml": {Data: []byte("[t]\nhi = \"Hello\"\necho = \"value: {{.V}}\"\n[t.pitfalls]\none = \"{{.Count}} pitfall\"\nother = \"{{.Count}} pitfalls\"\n")},
		"locales/t.ko.toml": {Data: []byte("[t]\nhi = \"안녕하세요\"\necho = \"값: {{.V}}\"\n[t.pitfalls]\nother = \"함정 {{.Count}}개\"\n")},
		"locales/t.ja.toml": {Data: []byte("[t]\necho = \"値: {{.V}}\"\n")},
		"locales/u.en.toml": {Data: []byte("[u]\nbye = \"Bye\"\n")},
	}
	en := newLocalizer(fsys, "en", nil)
	ko, ja := newLocalizer(fsys, "ko", en), newLocalizer(fsys, "ja", en)
	for _, c := range []struct{ got, want string }{
		{ko.T("t.hi"), "안녕하세요"},
		{ko.T("t.hi"), "안녕하세요"}, // from the memo
		{en.N("t.pitfalls", 1), "1 pitfall"},
		{en.N("t.pitfalls", 3), "3 pitfalls"},
		{ko.N("t.pitfalls", 1), "함정 1개"},
		{ja.T("t.hi"), "Hello"}, // missing in ja: English, and recorded
		{ja.T("u.bye"), "Bye"},  // ja has no catalog u: English, and recorded
		{ja.N("t.pitfalls", 2), "2 pitfalls"},
		{en.T("t.no.such.message"), "t.no.such.message"},
		{en.T("nowhere"), "nowhere"},
		// A parameter's value is data, never a template: the reader's text cannot run.
		{ja.TMap("t.echo", map[string]string{"V": "{{.V}} {{printf \"%d\" 1}}"}), "値: {{.V}} {{printf \"%d\" 1}}"},
		{en.T("t.echo", "V", 7), "value: 7"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	m := Missing()
	for _, want := range []string{"ja t.hi", "ja u.bye", "en t.no.such.message", "en nowhere"} {
		if !slices.ContainsFunc(m, func(s string) bool { return strings.HasPrefix(s, want+":") }) {
			t.Errorf("Missing() = %q lacks %q", m, want)
		}
	}
	if For("nope").Lang() != "en" || For("ko").Lang() != "ko" {
		t.Error("For: an unknown code is English")
	}
}

// readCounter is an fs.FS that counts the files read from it.
type readCounter struct {
	fstest.MapFS
	mu    sync.Mutex
	reads map[string]int
}

func (r *readCounter) ReadFile(name string) ([]byte, error) {
	r.mu.Lock()
	r.reads[name]++
	r.mu.Unlock()
	return r.MapFS.ReadFile(name)
}

// TestLocalizerReadsOneCatalog: a Localizer reads no catalog until a message is worded, then only
// the catalog of the message's area and language, once — a CLI run does not parse every
// language's every catalog.
func TestLocalizerReadsOneCatalog(t *testing.T) {
	fsys := &readCounter{MapFS: fstest.MapFS{}, reads: map[string]int{}}
	for _, name := range []string{"a.en", "a.ja", "b.en", "b.ja"} {
		area, _, _ := strings.Cut(name, ".")
		fsys.MapFS["locales/"+name+".toml"] = &fstest.MapFile{Data: []byte("[" + area + "]\nx = \"" + name + "\"\n")}
	}
	en := newLocalizer(fsys, "en", nil)
	ja := newLocalizer(fsys, "ja", en)
	if len(fsys.reads) != 0 {
		t.Fatalf("made Localizers read %v", fsys.reads)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := ja.T("b.x", "N", 1); got != "b.ja" {
				t.Errorf("ja b.x = %q", got)
			}
		})
	}
	wg.Wait()
	if want := map[string]int{"locales/b.ja.toml": 1}; !maps.Equal(fsys.reads, want) {
		t.Errorf("read %v, want %v", fsys.reads, want)
	}
}

// TestFor: For is each language's Localizer, over that language's embedded catalogs.
func TestFor(t *testing.T) {
	for _, code := range Codes {
		l := For(code)
		if l.Lang() != code {
			t.Errorf("For(%q).Lang() = %q", code, l.Lang())
		}
		if len(l.areas) == 0 {
			t.Errorf("%s: no catalogs found", code)
		}
	}
	if got := For("ja").T("lang.label"); got != "言語" {
		t.Errorf("ja lang.label = %q", got)
	}
}
