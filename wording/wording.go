// Package wording words what the engine reports. The engine is language-free: a finding, a fix,
// a lifecycle event and a verdict carry ids and parameters, and this package, at the edge (the web
// pages, the JSON API, the CLI), turns them into sentences a person reads. Every sentence here
// is sidecarlab's own, in the catalogs of package i18n (locales/wording.LANG.toml), in the
// language of the Words' Localizer (English: SARIF and logs).
package wording

import (
	"context"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// Words words what the engine reports in one language.
type Words struct {
	l *i18n.Localizer
}

// In words in l's language.
func In(l *i18n.Localizer) Words { return Words{l: l} }

// For words in the request's language (i18n.FromContext).
func For(ctx context.Context) Words { return In(i18n.FromContext(ctx)) }

// loc is the Localizer of w; English for the zero Words, so that a Words nobody set still speaks.
func (w Words) loc() *i18n.Localizer {
	if w.l == nil {
		return i18n.For(i18n.Default)
	}
	return w.l
}

// English words in English: the JSON the CLI writes, which never changes with the language.
var English = In(i18n.For(i18n.Default))

// with is p with extra data (quoted values and the like), p left as it is.
func with(p map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(p)+len(kv)/2)
	for k, v := range p {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// paramNames are every parameter the wording messages use.
var paramNames = []string{
	"key", "kind", "readFrom", "suggestion", "suggestionQ", "description", "descriptionQ", "value", "valueQ",
	"read", "used", "enum", "field", "fieldQ", "version", "set", "missing", "id", "idQ",
	"path", "position", "count", "hook",
	"name", "labels", "webhook", "requirement", "configuration", "message", "namespace", "selector", "policy",
	"workloads", "attributes", "action", "target",
}

// noValue is what a message's template prints for a parameter its data lacks.
const noValue = "<no value>"

// tmap words the message id with the parameters p. A parameter p lacks is worded as nothing, as
// the words always had it, not as the template's "<no value>": only then is p completed, so
// that the common case costs one look.
func (w Words) tmap(id string, p map[string]string) string {
	s := w.loc().TMap(id, p)
	if strings.Contains(s, noValue) {
		s = w.loc().TMap(id, complete(p))
	}
	return s
}

// complete is p with every parameter of paramNames, the missing ones empty.
func complete(p map[string]string) map[string]string {
	out := with(p)
	for _, n := range paramNames {
		if _, ok := out[n]; !ok {
			out[n] = ""
		}
	}
	return out
}

// quoted is p with each named value also quoted, as NAMEQ: Go's %q, which the words use to
// show a value exactly as written.
func quoted(names ...string) func(p map[string]string) (string, map[string]string) {
	return func(p map[string]string) (string, map[string]string) {
		out := with(p)
		for _, n := range names {
			out[n+"Q"] = strconv.Quote(p[n])
		}
		return "message", out
	}
}
