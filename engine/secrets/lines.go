package secrets

import (
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// scanLines scans a document that does not parse, line by line: a private key's first line, a
// registry credential's, random-looking tokens, the credentials gitleaks' rules found (ls), and
// what lineSecrets finds (a key that says secret and its value, a password flag, a URL's
// password), each a token on its line.
func scanLines(d scanDoc, ls []leak) []secretHit {
	var hits []secretHit
	pending := false
	for i, l := range d.lines {
		var spans [][2]int
		var kinds []Kind
		var rules []string

		// A private key or a registry credential is flagged to the line's end; random-looking
		// tokens before it are flagged too, or they would be found once the rest is redacted.
		end, endKind := len(l), Kind("")
		switch loc := privateKeyRE.FindStringIndex(l); {
		case loc != nil:
			end, endKind = loc[0], PrivateKey
		case strings.Contains(l, `"auths"`):
			j := strings.Index(l, "{")
			if j < 0 || j > strings.Index(l, `"auths"`) {
				j = strings.Index(l, `"auths"`)
			}
			end, endKind = j, RegistryCredential
		}
		clean := digestRE.ReplaceAllStringFunc(l[:end], func(s string) string { return strings.Repeat(" ", len(s)) })
		for _, loc := range tokenRE.FindAllStringIndex(clean, -1) {
			if randomToken(l[loc[0]:loc[1]]) {
				spans, kinds, rules = append(spans, [2]int{loc[0], loc[1]}), append(kinds, HighEntropy), append(rules, "")
			}
		}
		for _, lk := range ls {
			// Each place the credential is on this line (the rule found it here, or on another).
			for from := 0; ; {
				j := strings.Index(l[from:], lk.Secret)
				if j < 0 {
					break
				}
				sp := [2]int{from + j, from + j + len(lk.Secret)}
				spans, kinds, rules = append(spans, sp), append(kinds, KnownFormat), append(rules, lk.Rule)
				from = sp[1]
			}
		}
		// The name rules and what a line holds (password: …, --password …, a URL's password),
		// as in a value; an env entry's name on the line before its value.
		var ts []textSpan
		ts, pending = lineSecrets(l[:end], 0, nil, pending)
		for _, t := range mergeTextSpans(ts) {
			spans, kinds, rules = append(spans, [2]int{t.from, t.to}), append(kinds, t.kind), append(rules, "")
		}
		if endKind != "" {
			spans, kinds, rules = append(spans, [2]int{end, len(l)}), append(kinds, endKind), append(rules, "")
		}
		if len(spans) == 0 {
			continue
		}
		spans, kinds, rules = mergeSpans(spans, kinds, rules)
		// The excerpt is the line with every flagged token replaced.
		var ex strings.Builder
		prev := 0
		for _, sp := range spans {
			ex.WriteString(l[prev:sp[0]])
			ex.WriteString(Redacted)
			prev = sp[1]
		}
		ex.WriteString(l[prev:])
		excerpt := yamldoc.Clip(strings.TrimSpace(ex.String()))
		for j, sp := range spans {
			hits = append(hits, secretHit{Finding: Finding{
				Doc: d.index, Line: d.Line + i, Kind: kinds[j], Rule: rules[j], Excerpt: excerpt,
			}, token: span{line: d.Line + i, from: sp[0], to: sp[1]}})
		}
	}
	return hits
}

// mergeSpans sorts the spans of one line and makes overlapping ones one (the first one's kind
// and rule), so that each byte is redacted once.
func mergeSpans(spans [][2]int, kinds []Kind, rules []string) ([][2]int, []Kind, []string) {
	idx := make([]int, len(spans))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return spans[a][0] - spans[b][0] })
	var s [][2]int
	var k []Kind
	var r []string
	for _, i := range idx {
		if n := len(s); n > 0 && spans[i][0] < s[n-1][1] {
			s[n-1][1] = max(s[n-1][1], spans[i][1])
			continue
		}
		s, k, r = append(s, spans[i]), append(k, kinds[i]), append(r, rules[i])
	}
	return s, k, r
}
