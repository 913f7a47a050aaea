package web

import (
	"context"
	"strings"

	"github.com/a-h/templ"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// T is the message id in the request's language (i18n.Localizer.T), for the templates.
func T(ctx context.Context, id string, kv ...any) string { return i18n.FromContext(ctx).T(id, kv...) }

// N is the message id for a count, by the language's plural rules (i18n.Localizer.N).
func N(ctx context.Context, id string, count int, kv ...any) string {
	return i18n.FromContext(ctx).N(id, count, kv...)
}

// Lang is the request's language code, for <html lang>.
func Lang(ctx context.Context) string { return i18n.FromContext(ctx).Lang() }

// Language is one entry of the switcher.
type Language struct {
	Code, Name string
	Current    bool
}

// languages are the switcher's entries, the request's marked.
func languages(ctx context.Context) []Language {
	cur := Lang(ctx)
	out := make([]Language, len(i18n.Codes))
	for i, c := range i18n.Codes {
		out[i] = Language{Code: c, Name: i18n.Names[c], Current: c == cur}
	}
	return out
}

type urlLangKey struct{}

// WithURLLang is the language the page's own address chose (?lang=, a known code): the page's
// links, forms and redirects carry it, so that the page stays in it after a click.
func WithURLLang(ctx context.Context, code string) context.Context {
	return context.WithValue(ctx, urlLangKey{}, code)
}

// CarryLang is u, an address on this site, with the page's ?lang= when its address chose one
// (WithURLLang). Links meant to be shared (the permalink, a short link) do not go through it, so
// they open in their reader's language.
func CarryLang(ctx context.Context, u string) string {
	code := urlLang(ctx)
	if code == "" || !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") {
		return u
	}
	path, frag, hasFrag := strings.Cut(u, "#")
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	out := path + sep + "lang=" + code
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// Href is CarryLang for a template's href or action.
func Href(ctx context.Context, u string) templ.SafeURL { return templ.SafeURL(CarryLang(ctx, u)) }

// urlLang is the language the page's address chose, or "".
func urlLang(ctx context.Context) string {
	code, _ := ctx.Value(urlLangKey{}).(string)
	return code
}

type backKey struct{}

// WithBack is the address the language switcher returns to (the page being read).
func WithBack(ctx context.Context, back string) context.Context {
	return context.WithValue(ctx, backKey{}, back)
}

// back is the switcher's return address: the page's, or the playground for an answer to a POST.
func back(ctx context.Context) string {
	if b, ok := ctx.Value(backKey{}).(string); ok {
		return b
	}
	return "/"
}

// segment is a run of a message's text: code (written `so` in the catalogs) or words.
type segment struct {
	Text string
	Code bool
}

// segments splits a message at its backticks: the catalogs quote code (a field, a key, a
// command) that way, and a page shows it as code. An unclosed backtick is text.
func segments(s string) []segment {
	if !strings.Contains(s, "`") {
		return []segment{{Text: s}}
	}
	var out []segment
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // unclosed: the last backtick is text
		parts[len(parts)-2] += "`" + parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	for i, p := range parts {
		if p != "" {
			out = append(out, segment{Text: p, Code: i%2 == 1})
		}
	}
	return out
}

// cutQuote cuts s around the first place quote appears in it; ok is false for an empty quote or
// one s does not hold.
func cutQuote(s, quote string) (before, after string, ok bool) {
	if quote == "" {
		return s, "", false
	}
	return strings.Cut(s, quote)
}
