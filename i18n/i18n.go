// Package i18n words sidecarlab's messages in the reader's language. The words live in message
// catalogs (locales/AREA.LANG.toml, read by go-i18n, with CLDR's plural rules); this package
// chooses the language (a ?lang= parameter, the remembered choice, the Accept-Language header,
// negotiated with x/text's matcher) and hands the edges — the pages, the API's human text, the
// CLI — a Localizer. The engine never sees a language: it reports ids and parameters. Nothing is
// parsed at start: a catalog is read when one of its messages is first worded.
package i18n

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

//go:embed locales/*.toml
var catalogs embed.FS

// Languages are the languages sidecarlab speaks, English first: it is the fallback, and the
// language every catalog is checked against.
var Languages = []language.Tag{language.English, language.Japanese, language.Korean}

// Codes are Languages as the short codes ?lang=, the cookie and <html lang> use.
var Codes = []string{"en", "ja", "ko"}

// Names are each language's name in itself, for the switcher.
var Names = map[string]string{"en": "English", "ja": "日本語", "ko": "한국어"}

// Default is the language used when nothing else decides.
const Default = "en"

// matcher matches a reader's languages to the ones sidecarlab speaks; made when first used.
var matcher = sync.OnceValue(func() language.Matcher { return language.NewMatcher(Languages) })

// Match is the language sidecarlab speaks that best fits tags (x/text's matcher), English when
// none fits.
func Match(tags ...language.Tag) string {
	_, i, conf := matcher().Match(tags...)
	if conf == language.No {
		return Default
	}
	return Codes[i]
}

// locs are the Localizers of Codes, in that order. Making them reads no catalog: a catalog is
// parsed when one of its messages is first asked for, so a run of the CLI parses one language's
// CLI messages, not every catalog (parsing them all costs tens of milliseconds at start;
// BENCHMARKS.md).
var locs = sync.OnceValue(func() []*Localizer {
	out := make([]*Localizer, len(Codes))
	for i, code := range Codes {
		var fallback *Localizer
		if i > 0 {
			fallback = out[0] // English
		}
		out[i] = newLocalizer(catalogs, code, fallback)
	}
	return out
})

// newLocalizer is the Localizer of code over the catalogs in fsys (locales/AREA.LANG.toml). A
// message its catalogs lack is worded by fallback's (English's), when there is one.
func newLocalizer(fsys fs.FS, code string, fallback *Localizer) *Localizer {
	l := &Localizer{code: code, fallback: fallback, areas: map[string]func() (*goi18n.Localizer, error){}}
	names, _ := fs.Glob(fsys, "locales/*."+code+".toml") // the pattern is well-formed: no error
	for _, name := range names {
		area := strings.TrimSuffix(path.Base(name), "."+code+".toml")
		l.areas[area] = sync.OnceValues(func() (*goi18n.Localizer, error) {
			b, err := load(fsys, code, name)
			if err != nil {
				return nil, err
			}
			return goi18n.NewLocalizer(b, code), nil
		})
	}
	return l
}

// load parses one catalog file into a bundle of its own language.
func load(fsys fs.FS, code, name string) (*goi18n.Bundle, error) {
	tag, err := language.Parse(code)
	if err != nil {
		return nil, err
	}
	b := goi18n.NewBundle(tag)
	b.RegisterUnmarshalFunc("toml", tomlUnmarshal)
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	if _, err := b.ParseMessageFileBytes(data, path.Base(name)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// Localizer words messages in one language. It is safe for concurrent use; For hands out one
// per language, shared.
type Localizer struct {
	code string
	// areas are the language's catalogs by area, each parsed when first used: a message's id
	// starts with its area (cli.version.short is in cli.LANG.toml; TestCatalogs checks).
	areas map[string]func() (*goi18n.Localizer, error)
	// fallback is the Localizer that words what this one's catalogs lack; nil for English.
	fallback *Localizer
	// plain are the messages without parameters, worded once.
	plain sync.Map // id → string
}

// For is the Localizer of a language code (en, ja, ko); any other code gets English.
func For(code string) *Localizer {
	all := locs()
	for i, c := range Codes {
		if c == code {
			return all[i]
		}
	}
	return all[0]
}

// Lang is the language's code: en, ja or ko.
func (l *Localizer) Lang() string { return l.code }

// T words the message id with its parameters, given as pairs: T("x", "key", k, "value", v). A
// message the catalogs lack is its id, and is recorded (Missing) so that tests find it.
func (l *Localizer) T(id string, kv ...any) string {
	if len(kv) == 0 {
		if s, ok := l.plain.Load(id); ok {
			return s.(string)
		}
	}
	s := l.localize(&goi18n.LocalizeConfig{MessageID: id, TemplateData: pairs(kv)})
	if len(kv) == 0 {
		l.plain.Store(id, s)
	}
	return s
}

// TMap is T with the parameters as a map, as findings carry them.
func (l *Localizer) TMap(id string, params map[string]string) string {
	if len(params) == 0 {
		return l.T(id)
	}
	return l.localize(&goi18n.LocalizeConfig{MessageID: id, TemplateData: params})
}

// N words a message whose words depend on a count, by the language's plural rules (CLDR): the
// count is the parameter Count.
func (l *Localizer) N(id string, count int, kv ...any) string {
	data := pairs(kv)
	if data == nil {
		data = map[string]any{}
	}
	data["Count"] = count
	return l.localize(&goi18n.LocalizeConfig{MessageID: id, PluralCount: count, TemplateData: data})
}

func (l *Localizer) localize(c *goi18n.LocalizeConfig) string {
	area, _, _ := strings.Cut(c.MessageID, ".")
	load, ok := l.areas[area]
	if !ok {
		return l.missing(c, fmt.Errorf("no catalog %s.%s.toml", area, l.code))
	}
	gl, err := load()
	if err != nil {
		return l.missing(c, err)
	}
	s, err := gl.Localize(c)
	if err != nil {
		if s == "" {
			return l.missing(c, err)
		}
		recordMissing(l.code, c.MessageID, err)
	}
	if l.code == "ko" {
		s = particles(s) // 이(가) after a placeholder: the form its word takes
	}
	return s
}

// missing records a message this language could not word, and words it in English instead
// (its id when English cannot either).
func (l *Localizer) missing(c *goi18n.LocalizeConfig, err error) string {
	recordMissing(l.code, c.MessageID, err)
	if l.fallback != nil {
		return l.fallback.localize(c)
	}
	return c.MessageID
}

func pairs(kv []any) map[string]any {
	if len(kv) == 0 {
		return nil
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return m
}

var missing struct {
	sync.Mutex
	seen map[string]string
}

// recordMissing keeps at most 100 problems: the ids are the code's, not the reader's.
func recordMissing(code, id string, err error) {
	missing.Lock()
	defer missing.Unlock()
	if missing.seen == nil {
		missing.seen = map[string]string{}
	}
	if len(missing.seen) < 100 {
		missing.seen[code+" "+id] = err.Error()
	}
}

// Missing are the messages asked for that a catalog lacks (or could not word), as "lang id:
// error", sorted: tests fail on any.
func Missing() []string {
	missing.Lock()
	defer missing.Unlock()
	var out []string
	for k, v := range missing.seen {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}

// Negotiate chooses the language of a request: an explicit ?lang= first (a link that must open
// in one language), then the reader's remembered choice (the cookie), then the Accept-Language
// header by x/text's matcher; English when none of them names a language we speak.
func Negotiate(query, cookie, acceptLanguage string) string {
	for _, c := range []string{query, cookie} {
		if slices.Contains(Codes, c) {
			return c
		}
	}
	if acceptLanguage == "" {
		return Default
	}
	if len(acceptLanguage) > maxAcceptLanguage {
		acceptLanguage = acceptLanguage[:maxAcceptLanguage]
		if i := strings.LastIndexByte(acceptLanguage, ','); i > 0 {
			acceptLanguage = acceptLanguage[:i]
		}
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return Default
	}
	return Match(tags...)
}

// maxAcceptLanguage bounds the header read: a browser sends well under 200 bytes.
const maxAcceptLanguage = 512

type ctxKey struct{}

// NewContext carries l to the templates and handlers below.
func NewContext(ctx context.Context, l *Localizer) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// FromContext is the request's Localizer, English when none was set.
func FromContext(ctx context.Context) *Localizer {
	if l, ok := ctx.Value(ctxKey{}).(*Localizer); ok {
		return l
	}
	return For(Default)
}

func tomlUnmarshal(data []byte, v any) error { return toml.Unmarshal(data, v) }
