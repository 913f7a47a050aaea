package api

import "strconv"

// IsSentence says whether a JSON field of the API's answers or of the CLI's JSON output holds
// sentences a person reads (a string, or a list of them). Those follow the reader's language
// (the API: Accept-Language or ?lang=; the CLI: --lang or the locale); every other field is
// data, the same bytes in every language. Where the text is Istio's or a parser's own, it stays
// as they wrote it.
func IsSentence(field string) bool {
	switch field {
	case "message", "text", "what", "short", "question", "why", "fix", "injectReasons", "runtime", "where":
		return true
	}
	return false
}

// SetSentencesAside removes the sentence fields (IsSentence, holding a string or a list of
// strings) from v, a decoded JSON value, and returns them by their path (".findings[0].message"):
// what is left is the data, which must not change with the language.
func SetSentencesAside(v any) map[string]any {
	out := map[string]any{}
	setAside(v, "", out)
	return out
}

func setAside(v any, path string, out map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if IsSentence(k) && isText(x) {
				out[path+"."+k] = x
				delete(v, k)
				continue
			}
			setAside(x, path+"."+k, out)
		}
	case []any:
		for i, x := range v {
			setAside(x, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

// isText is whether a decoded JSON value is a string or a list of strings.
func isText(v any) bool {
	switch v := v.(type) {
	case string:
		return true
	case []any:
		for _, x := range v {
			if _, ok := x.(string); !ok {
				return false
			}
		}
		return true
	}
	return false
}
