// Package i18n words sidecarlab's messages in the reader's language. The words live in message
// catalogs (locales/AREA.LANG.toml, read by go-i18n, with CLDR's plural rules); this package
// chooses the language (a ?lang= parameter, the remembered choice, the Accept-Language header,
// negotiated with x/text's matcher) and hands the edges — the pages, the API's human text, the
// CLI — a Localizer. The engine never sees a language: it reports ids and parameters.
package i18n

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
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

var (
	bundle  *goi18n.Bundle
	matcher = language.NewMatcher(Languages)
	locs    = map[string]*Localizer{}
)

func init() {
	b, err := load(catalogs)
	if err != nil {
		panic(err) // the catalogs are embedded: a broken one fails every test
	}
	bundle = b
	for _, code := range Codes {
		locs[code] = newLocalizer(b, code)
	}
}

func newLocalizer(b *goi18n.Bundle, code string) *Localizer {
	return &Localizer{code: code, l: goi18n.NewLocalizer(b, code)}
}

func load(fsys fs.FS) (*goi18n.Bundle, error) {
	b := goi18n.NewBundle(language.English)
	b.RegisterUnmarshalFunc("toml", tomlUnmarshal)
	names, err := fs.Glob(fsys, "locales/*.toml")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if _, err := b.ParseMessageFileBytes(data, path.Base(name)); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return b, nil
}

// Localizer words messages in one language. It is safe for concurrent use; For hands out one
// per language, shared.
type Localizer struct {
	code string
	l    *goi18n.Localizer
	// plain are the messages without parameters, worded once.
	plain sync.Map // id → string
}

// For is the Localizer of a language code (en, ja, ko); any other code gets English.
func For(code string) *Localizer {
	if l, ok := locs[code]; ok {
		return l
	}
	return locs[Default]
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
	s, err := l.l.Localize(c)
	if err != nil {
		recordMissing(l.code, c.MessageID, err)
		if s == "" {
			return c.MessageID
		}
	}
	return s
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
		if _, ok := locs[c]; ok {
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
	_, i, conf := matcher.Match(tags...)
	if conf == language.No {
		return Default
	}
	return Codes[i]
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
	return locs[Default]
}

func tomlUnmarshal(data []byte, v any) error { return toml.Unmarshal(data, v) }
