package web

import (
	"context"
	"sync"

	"github.com/a-h/templ"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// jsMessages are the page script's words (static/src/main.js), catalog ids under page.js., with
// the placeholders the script fills at run time (its t() replaces "{{.Name}}" by the value).
var jsMessages = map[string][]string{
	"tabFocus": nil, "tabIndent": nil, "nowIndents": nil, "nowFocus": nil, "editorLabel": nil,
	"error": nil, "pitfall": nil, "injecting": nil, "namespaceError": nil, "rejected": nil, "rejectedYAML": nil, "rejectedSchema": nil, "uploadFailed": nil, "uploadNotRead": nil, "shared": nil, "empty": nil, "refused": nil,
	"unreachable": {"Error"}, "actionFailed": {"Status"}, "seeError": nil, "noLink": {"Error"},
	"changeCopied": nil, "linkCopied": nil, "embedCopied": nil, "yamlCopied": nil, "stale": nil,
	"roomAt": {"Step"}, "roomMoved": {"Step"}, "roomHeld": nil, "roomFailed": {"Error"}, "roomEnded": nil,
	"slidePage": {"Page", "Pages"}, "qrHide": nil, "qrShow": nil,
}

// JSWords are the script's words in l's language, keyed without the page.js. prefix. A
// placeholder stays "{{.Name}}" for the script to fill: the catalog's template gets its own
// placeholder as data, so nothing of the reader's ever passes through a template here.
func JSWords(l *i18n.Localizer) map[string]string {
	out := make(map[string]string, len(jsMessages))
	for key, params := range jsMessages {
		var kv []any
		for _, p := range params {
			kv = append(kv, p, "{{."+p+"}}")
		}
		out[key] = l.T("page.js."+key, kv...)
	}
	return out
}

// jsWords is the JSON island (<script type="application/json" id="i18n-js">) main.js reads
// once: data, not code, so the page's CSP has nothing to admit.
func jsWords(ctx context.Context) templ.Component {
	l := i18n.FromContext(ctx)
	words, ok := jsWordsCache.Load(l.Lang())
	if !ok {
		words, _ = jsWordsCache.LoadOrStore(l.Lang(), JSWords(l))
	}
	return templ.JSONScript("i18n-js", words)
}

// jsWordsCache holds JSWords per language (three at most): the catalogs never change.
var jsWordsCache sync.Map

// defaultNamespace is the namespace name the settings show as a placeholder: a value, the same
// in every language.
const defaultNamespace = "default"

// enforceLabel is a Pod Security level's name in the settings: the level itself (a value), or
// the words for none set.
func enforceLabel(ctx context.Context, o Option) string {
	if o.Value == "" {
		return T(ctx, "page.ns.enforceUnset")
	}
	return o.Value
}
