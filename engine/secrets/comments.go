package secrets

import (
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// comments flags what its comments hold (commentSecrets), in n and every node under it.
func (w *secretWalker) comments(n *yaml.Node) {
	for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
		for _, line := range strings.Split(c, "\n") {
			for _, s := range commentSecrets(line) {
				ex := strings.ReplaceAll(strings.TrimSpace(line), s, Redacted)
				w.hits = append(w.hits, secretHit{Finding: Finding{
					Doc: w.doc.index, Line: w.doc.Line + max(n.Line, 1) - 1, Kind: Comment, Excerpt: yamldoc.Clip(ex),
				}, comment: n, secret: s})
			}
		}
	}
	for _, c := range n.Content {
		w.comments(c)
	}
}

// commentKeyRE finds "name: value" and "name=value" in a comment's text.
var commentKeyRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.-]*)\s*[:=]\s*(\S+)`)

// commentSecrets are the parts of a comment's text that are secrets: the value of a name that
// says it is one (password: hunter2, admin pw: …, DB_TOKEN=…), a URL's password, a password
// flag's value (mysql -pSecret too), a random-looking token.
func commentSecrets(text string) []string {
	var out []string
	for _, m := range commentKeyRE.FindAllStringSubmatch(text, -1) {
		if v := strings.Trim(m[2], `"',;`); keyName(m[1]) && nameValue(v) {
			out = append(out, v)
		}
	}
	for _, sp := range textSecrets(text) {
		out = append(out, text[sp.from:sp.to])
	}
	out = append(out, urlPasswords(text)...)
	out = append(out, flagValues(text)...)
	for _, t := range tokenRE.FindAllString(digestRE.ReplaceAllString(text, " "), -1) {
		if randomToken(t) {
			out = append(out, t)
		}
	}
	return out
}

// commentLeak flags the comments, of n or of a node under it, that hold the credential l.
func (w *secretWalker) commentLeak(n *yaml.Node, l leak) {
	for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
		for _, line := range strings.Split(c, "\n") {
			if !strings.Contains(line, l.Secret) || slices.ContainsFunc(w.hits, func(h secretHit) bool { return h.comment == n && strings.Contains(h.secret, l.Secret) }) {
				continue
			}
			ex := strings.ReplaceAll(strings.TrimSpace(line), l.Secret, Redacted)
			w.hits = append(w.hits, secretHit{Finding: Finding{
				Doc: w.doc.index, Line: w.doc.Line + max(n.Line, 1) - 1, Kind: Comment, Rule: l.Rule, Excerpt: yamldoc.Clip(ex),
			}, comment: n, secret: l.Secret})
		}
	}
	for _, c := range n.Content {
		w.commentLeak(c, l)
	}
}
