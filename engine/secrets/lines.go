package secrets

import (
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
		var spans []textSpan

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
				spans = append(spans, textSpan{from: loc[0], to: loc[1], kind: HighEntropy})
			}
		}
		for _, lk := range ls {
			// Each place the credential is on this line (the rule found it here, or on another).
			for from := 0; ; {
				j := strings.Index(l[from:], lk.Secret)
				if j < 0 {
					break
				}
				sp := textSpan{from: from + j, to: from + j + len(lk.Secret), kind: KnownFormat, rule: lk.Rule}
				spans = append(spans, sp)
				from = sp.to
			}
		}
		// The name rules and what a line holds (password: …, --password …, a URL's password),
		// as in a value; an env entry's name on the line before its value.
		spans, pending = lineSecrets(l[:end], 0, spans, pending)
		if endKind != "" {
			spans = append(spans, textSpan{from: end, to: len(l), kind: endKind})
		}
		if len(spans) == 0 {
			continue
		}
		spans = mergeTextSpans(spans)
		// The excerpt is the line with every flagged token replaced.
		var ex strings.Builder
		prev := 0
		for _, sp := range spans {
			ex.WriteString(l[prev:sp.from])
			ex.WriteString(Redacted)
			prev = sp.to
		}
		ex.WriteString(l[prev:])
		excerpt := yamldoc.Clip(strings.TrimSpace(ex.String()))
		for _, sp := range spans {
			hits = append(hits, secretHit{Finding: Finding{
				Doc: d.index, Line: d.Line + i, Kind: sp.kind, Rule: sp.rule, Excerpt: excerpt,
			}, token: span{line: d.Line + i, from: sp.from, to: sp.to}})
		}
	}
	return hits
}
