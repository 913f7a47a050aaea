package engine

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// SecretKind says why a value looks like something that should not be shared. The words for
// each kind are in package explain.
type SecretKind string

const (
	// SecretDocument: the document is a Secret (its data values are findings of their own).
	SecretDocument SecretKind = "secret-document"
	// SecretDataValue: a value under a Secret's data or stringData.
	SecretDataValue SecretKind = "data-value"
	// SecretEnvName: an env value whose variable's name says password, token, key, secret, ….
	SecretEnvName SecretKind = "env-name"
	// SecretHighEntropy: a long token that looks random (see highEntropy).
	SecretHighEntropy SecretKind = "high-entropy"
	// SecretPrivateKey: a PEM private key (or a Secret value that decodes to one).
	SecretPrivateKey SecretKind = "private-key"
	// SecretRegistryCredential: a Docker config (a dockerconfigjson Secret's value, or any value
	// with "auths" in it).
	SecretRegistryCredential SecretKind = "registry-credential"
	// SecretURLCredential: a URL with a password in it (postgres://admin:hunter2@db:5432/x).
	SecretURLCredential SecretKind = "url-credential"
	// SecretFlagValue: the value of a command-line flag whose name says password, token, key,
	// secret, … (--password=hunter2, or the argument after --password).
	SecretFlagValue SecretKind = "flag-value"
	// SecretSameValue: a value equal to one flagged elsewhere in the manifest (a password that
	// is also a ConfigMap's value): redacted with it.
	SecretSameValue SecretKind = "same-value"
	// SecretComment: a comment that holds one (# password: hunter2, a URL with a password, a
	// password flag, a random-looking token, a credential of a known format).
	SecretComment SecretKind = "comment"
	// SecretKnownFormat: a credential of a format one of gitleaks' rules knows (an AWS access
	// key id, a Slack webhook URL, a GitHub token, …), anywhere: a value, a mapping's key, a
	// step, a setting. Rule names the rule.
	SecretKnownFormat SecretKind = "known-format"
)

// SecretKinds lists every kind ScanSecrets reports, in the order a person reads them.
var SecretKinds = []SecretKind{SecretDocument, SecretDataValue, SecretEnvName, SecretFlagValue, SecretURLCredential, SecretPrivateKey,
	SecretRegistryCredential, SecretKnownFormat, SecretHighEntropy, SecretSameValue, SecretComment}

// Redacted is what Redact writes in place of a flagged value.
const Redacted = "<redacted>"

// SecretFinding is one value of a manifest that should not be shared as is. It never carries the
// value: Excerpt is the value's key with Redacted in place of the value.
type SecretFinding struct {
	// Doc is the 1-based document; Line the 1-based line of the value in the whole input. Both
	// are 0 for a finding in an annotation step, and Step is its 1-based number.
	Doc  int `json:"doc,omitempty"`
	Line int `json:"line,omitempty"`
	Step int `json:"step,omitempty"`
	// Path names the value the way the diff names fields
	// (spec.template.spec.containers[app].env[DB_PASSWORD].value); empty in a document that
	// does not parse.
	Path string     `json:"path,omitempty"`
	Kind SecretKind `json:"kind"`
	// Rule is the gitleaks rule of a known-format finding (aws-access-token).
	Rule    string `json:"rule,omitempty"`
	Excerpt string `json:"excerpt"`
	// Setting names the setting of a finding in the settings (ScanSettings): SettingInstallSet
	// (Line is the --set option's 1-based number, Path its path), SettingInstallOverlay (Line
	// is the overlay's line) or SettingNamespaceLabel (Path is the label's key).
	Setting string `json:"setting,omitempty"`
}

// The settings ScanSettings looks at.
const (
	SettingInstallSet     = "install.set"
	SettingInstallOverlay = "install.overlay"
	SettingNamespaceLabel = "namespace.labels"
	// SettingMesh is a mesh's own configuration (InstallOptions.Mesh); Path names the part
	// (meshParts) and Line is that part's line.
	SettingMesh = "install.mesh"
)

// meshParts are the texts of a mesh's own configuration, by the names its JSON gives them.
func meshParts(m *OwnMesh) []struct {
	name string
	text *string
} {
	return []struct {
		name string
		text *string
	}{{"injectorConfig", &m.InjectorConfig}, {"values", &m.Values}, {"meshConfig", &m.MeshConfig}, {"webhooks", &m.Webhooks}}
}

// MaxSecretFindings bounds the findings ScanSecrets returns (the total is counted beyond it):
// every echoed list is bounded.
const MaxSecretFindings = 100

// ScanSecrets looks through a manifest for what should not be shared: Secret documents and
// their values, env values whose names say they are secret, private keys, registry
// credentials, and long random-looking tokens. It returns at most MaxSecretFindings findings and
// the total found. It is a heuristic on the text, before any injection: it runs on manifests
// Istio rejects too, and on documents that do not parse (line by line).
func ScanSecrets(manifest []byte) (findings []SecretFinding, total int) {
	hits := scanSecrets(splitScanDocs(manifest))
	for i, h := range hits {
		if i == MaxSecretFindings {
			break
		}
		findings = append(findings, h.SecretFinding)
	}
	return findings, len(hits)
}

// ScanSteps looks at the values of annotation steps as ScanSecrets looks at a manifest's
// values: a private key, a registry credential or a random-looking token in one is a finding
// (Step names it). An annotation's name says nothing about its value, so names are not read.
func ScanSteps(steps []Step) []SecretFinding {
	var out []SecretFinding
	for i, st := range steps {
		if st.Remove || st.Value == "" || st.Value == Redacted {
			continue
		}
		if kind, ok := valueKind(st.Value); ok {
			out = append(out, SecretFinding{Step: i + 1, Kind: kind, Excerpt: excerpt(st.Key)})
			continue
		}
		if name, ok := secretProxyMetadata(st.Value); ok {
			out = append(out, SecretFinding{Step: i + 1, Path: "proxyMetadata." + clip(name), Kind: SecretEnvName, Excerpt: excerpt(st.Key)})
			continue
		}
		if ls := leaks(st.Value); len(ls) > 0 {
			out = append(out, SecretFinding{Step: i + 1, Kind: SecretKnownFormat, Rule: ls[0].Rule, Excerpt: excerpt(st.Key)})
		}
	}
	return out
}

// ScanSettings looks at what a state holds beside its manifest and steps: each install option
// (--set path=value: its value as a manifest's value, and by its path's last name, as an env
// variable's), the install overlay (an IstioOperator document, as a manifest), and the labels of
// the Cluster view's namespace (values and keys, for credentials of known formats and
// random-looking values). It returns at most MaxSecretFindings findings.
func ScanSettings(s Settings) []SecretFinding {
	var out []SecretFinding
	for i, set := range s.Install.Set {
		if f, ok := setFinding(set); ok {
			f.Line = i + 1
			out = append(out, f)
		}
	}
	if strings.TrimSpace(s.Install.Overlay) != "" {
		fs, _ := ScanSecrets([]byte(s.Install.Overlay))
		for _, f := range fs {
			f.Doc, f.Setting = 0, SettingInstallOverlay
			out = append(out, f)
		}
	}
	for _, part := range meshParts(&s.Install.Mesh) {
		if strings.TrimSpace(*part.text) == "" {
			continue
		}
		// Values are JSON, the rest YAML: both read as a manifest's text.
		fs, _ := ScanSecrets([]byte(*part.text))
		for _, f := range fs {
			f.Doc, f.Setting = 0, SettingMesh
			if f.Path == "" {
				f.Path = part.name
			} else {
				f.Path = part.name + ": " + f.Path
			}
			out = append(out, f)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Namespace.Labels)) {
		if f, ok := labelFinding(k, s.Namespace.Labels[k]); ok {
			out = append(out, f)
		}
	}
	return out[:min(len(out), MaxSecretFindings)]
}

// setFinding is the finding of one --set option, if it holds a secret.
func setFinding(set string) (SecretFinding, bool) {
	path, v, ok := strings.Cut(strings.TrimSpace(set), "=")
	if !ok || v == "" || v == Redacted {
		return SecretFinding{}, false
	}
	f := SecretFinding{Setting: SettingInstallSet, Path: clip(path), Excerpt: clip(path) + "=" + Redacted}
	last := path[strings.LastIndexByte(path, '.')+1:]
	if kind, ok := valueKind(v); ok {
		f.Kind = kind
	} else if secretName(last) && !filePath(v) && !placeholder(v) {
		f.Kind = SecretEnvName
	} else if ls := leaks(v); len(ls) > 0 {
		f.Kind, f.Rule = SecretKnownFormat, ls[0].Rule
	} else {
		return SecretFinding{}, false
	}
	return f, true
}

// labelFinding is the finding of one namespace label, if its value or key holds a secret. A
// label's value is at most 63 letters, digits, "-", "_" and ".": no URL or flag fits.
func labelFinding(k, v string) (SecretFinding, bool) {
	f := SecretFinding{Setting: SettingNamespaceLabel, Path: clip(k), Excerpt: clip(k) + ": " + Redacted}
	if ls := leaks(k + ": " + v); len(ls) > 0 {
		f.Kind, f.Rule = SecretKnownFormat, ls[0].Rule
		if strings.Contains(k, ls[0].Secret) {
			f.Path, f.Excerpt = "", Redacted+": …"
		}
		return f, true
	}
	if highEntropy(v) {
		f.Kind = SecretHighEntropy
		return f, true
	}
	return SecretFinding{}, false
}

// RedactSettings is s with every value ScanSettings flags replaced: a --set option's value by
// Redacted, the overlay as Redact redacts a manifest, a label's value by "redacted" (a label's
// value cannot hold Redacted's "<" and ">") and a label whose key holds a credential renamed
// "redacted-N".
func RedactSettings(s Settings) (Settings, error) {
	set := slices.Clone(s.Install.Set)
	for i, o := range set {
		if _, ok := setFinding(o); ok {
			path, _, _ := strings.Cut(strings.TrimSpace(o), "=")
			set[i] = path + "=" + Redacted
		}
	}
	s.Install.Set = set
	if strings.TrimSpace(s.Install.Overlay) != "" {
		red, err := Redact([]byte(s.Install.Overlay))
		if err != nil {
			return s, err
		}
		s.Install.Overlay = red
	}
	for _, part := range meshParts(&s.Install.Mesh) {
		if fs, _ := ScanSecrets([]byte(*part.text)); len(fs) == 0 {
			continue
		}
		red, err := Redact([]byte(*part.text))
		if err != nil {
			return s, err
		}
		*part.text = red
	}
	if len(s.Namespace.Labels) > 0 {
		labels := make(map[string]string, len(s.Namespace.Labels))
		n := 0
		for _, k := range slices.Sorted(maps.Keys(s.Namespace.Labels)) {
			v := s.Namespace.Labels[k]
			f, ok := labelFinding(k, v)
			switch {
			case !ok:
				labels[k] = v
			case f.Path == "":
				n++
				labels[fmt.Sprintf("redacted-%d", n)] = "redacted"
			default:
				labels[k] = "redacted"
			}
		}
		s.Namespace.Labels = labels
	}
	return s, nil
}

// secretProxyMetadata reads a step's value as a ProxyConfig (proxy.istio.io/config's YAML) and
// names the first of its proxyMetadata, environment variables of the proxy, whose name says it
// is secret (DB_PASSWORD: hunter2), as env does for a container's.
func secretProxyMetadata(v string) (string, bool) {
	var root yaml.Node
	if !strings.Contains(v, "proxyMetadata") || yaml.Unmarshal([]byte(v), &root) != nil || len(root.Content) == 0 {
		return "", false
	}
	md := entry(root.Content[0], "proxyMetadata")
	if md == nil || md.Kind != yaml.MappingNode {
		return "", false
	}
	for i := 0; i+1 < len(md.Content); i += 2 {
		k, val := md.Content[i], deref(md.Content[i+1])
		if val.Kind == yaml.ScalarNode && val.Value != "" && val.Value != Redacted && secretName(k.Value) && !filePath(val.Value) {
			return k.Value, true
		}
	}
	return "", false
}

// RedactSteps is steps with the value of each step ScanSteps flags replaced by Redacted. A
// redacted value of an annotation Istio reads (proxy.istio.io/config) changes what it does;
// the others reach the output as they are.
func RedactSteps(steps []Step) []Step {
	out := slices.Clone(steps)
	for _, f := range ScanSteps(steps) {
		out[f.Step-1].Value = Redacted
	}
	return out
}

// secretHit is a finding and where its value is: a scalar node of a parsed document, or a token
// on one line of a document that does not parse. A secret-document finding has neither: it is
// redacted through its values.
type secretHit struct {
	SecretFinding
	node  *yaml.Node
	token span
	// comment is the node whose comment holds secret, a part of one of its comments' text.
	comment *yaml.Node
	secret  string
}

// span is [from, to) bytes of one input line (1-based, the whole input's).
type span struct{ line, from, to int }

// scanDoc is one document of the input, parsed when it parses.
type scanDoc struct {
	yamldoc.Doc
	index int
	root  *yaml.Node // nil when the document does not parse
	lines []string   // Raw's lines, without their "\n"
}

func splitScanDocs(in []byte) []scanDoc {
	// A bad separator ends the documents that can be read; the rest is not scanned as YAML, but a
	// state with it cannot be injected either: the line scan below reads what Split kept.
	docs, _ := yamldoc.Split(in)
	out := make([]scanDoc, len(docs))
	for i, d := range docs {
		sd := scanDoc{Doc: d, index: i + 1, lines: strings.Split(strings.TrimSuffix(string(d.Raw), "\n"), "\n")}
		var root yaml.Node
		if yaml.Unmarshal(d.Raw, &root) == nil && len(root.Content) > 0 {
			sd.root = &root
		}
		out[i] = sd
	}
	return out
}

func scanSecrets(docs []scanDoc) []secretHit {
	var hits []secretHit
	var walkers []*secretWalker
	// known are the credentials gitleaks' rules found, in any document.
	known := map[string]bool{}
	for _, d := range docs {
		ls := leaks(string(d.Raw))
		for _, l := range ls {
			if len(l.Secret) >= minSameValue {
				known[l.Secret] = true
			}
		}
		if d.root == nil {
			hits = append(hits, scanLines(d, ls)...)
			continue
		}
		w := &secretWalker{doc: d}
		w.node(d.root.Content[0], "", "")
		w.comments(d.root)
		w.leaks(ls)
		walkers = append(walkers, w)
		hits = append(hits, w.hits...)
	}
	// A flagged value is a secret wherever else it is: the same text as a whole scalar of any
	// document is flagged too, and so is every scalar that holds a credential gitleaks found, so
	// that redacting the one does not leave the other.
	values := map[string]bool{}
	for _, h := range hits {
		if h.node != nil && len(h.node.Value) >= minSameValue {
			values[h.node.Value] = true
		}
	}
	if len(values) > 0 || len(known) > 0 {
		for _, w := range walkers {
			at := len(w.hits)
			w.same(w.doc.root.Content[0], "", "", values, known)
			hits = append(hits, w.hits[at:]...)
		}
	}
	return hits
}

// leaks flags what gitleaks' rules found in the document's text: every scalar, value or
// mapping key, that holds the credential (it is found in the text where it is written: an
// alias's value is its anchor's scalar), or else the comment that holds it. A credential the
// rules match across lines (a private key's PEM block, with its indentation) is in a scalar our
// own rules flag already.
func (w *secretWalker) leaks(ls []leak) {
	for _, l := range ls {
		found := false
		each(w.doc.root.Content[0], "", "", func(n *yaml.Node, path, key string, isKey bool) {
			if !strings.Contains(n.Value, l.Secret) {
				return
			}
			found = true
			if !w.flagged[n] {
				w.addKnown(n, path, key, isKey, l.Rule)
			}
		})
		if !found {
			w.commentLeak(w.doc.root, l)
		}
	}
}

// addKnown flags n for gitleaks' rule; a mapping key is shown as the key it is.
func (w *secretWalker) addKnown(n *yaml.Node, path, key string, isKey bool, rule string) {
	w.add(n, path, key, SecretKnownFormat)
	h := &w.hits[len(w.hits)-1]
	h.Rule = rule
	if isKey {
		h.Excerpt = Redacted + ":"
	}
}

// commentLeak flags the comments, of n or of a node under it, that hold the credential l.
func (w *secretWalker) commentLeak(n *yaml.Node, l leak) {
	for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
		for _, line := range strings.Split(c, "\n") {
			if !strings.Contains(line, l.Secret) || slices.ContainsFunc(w.hits, func(h secretHit) bool { return h.comment == n && strings.Contains(h.secret, l.Secret) }) {
				continue
			}
			ex := strings.ReplaceAll(strings.TrimSpace(line), l.Secret, Redacted)
			w.hits = append(w.hits, secretHit{SecretFinding: SecretFinding{
				Doc: w.doc.index, Line: w.doc.Line + max(n.Line, 1) - 1, Kind: SecretComment, Rule: l.Rule, Excerpt: clip(ex),
			}, comment: n, secret: l.Secret})
		}
	}
	for _, c := range n.Content {
		w.commentLeak(c, l)
	}
}

// each calls fn with every scalar under n, mapping keys (isKey) and values, with its path and
// its key as node names them. Aliases are not followed: their scalars are where they are
// defined.
func each(n *yaml.Node, path, key string, fn func(n *yaml.Node, path, key string, isKey bool)) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode {
				fn(k, path, "", true)
			}
			each(n.Content[i+1], pathKey(path, k.Value), k.Value, fn)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := path
			if len(path) <= maxEcho {
				p += itemKey(c, i)
			}
			each(c, p, "", fn)
		}
	case yaml.ScalarNode:
		fn(n, path, key, false)
	}
}

// comments flags what its comments hold (commentSecrets), in n and every node under it.
func (w *secretWalker) comments(n *yaml.Node) {
	for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
		for _, line := range strings.Split(c, "\n") {
			for _, s := range commentSecrets(line) {
				ex := strings.ReplaceAll(strings.TrimSpace(line), s, Redacted)
				w.hits = append(w.hits, secretHit{SecretFinding: SecretFinding{
					Doc: w.doc.index, Line: w.doc.Line + max(n.Line, 1) - 1, Kind: SecretComment, Excerpt: clip(ex),
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
// says it is one (password: hunter2, DB_TOKEN=…), a URL's password, a password flag's value, a
// random-looking token.
func commentSecrets(text string) []string {
	var out []string
	for _, m := range commentKeyRE.FindAllStringSubmatch(text, -1) {
		if v := strings.Trim(m[2], `"',;`); v != "" && secretName(m[1]) && !filePath(v) && !placeholder(v) && v != Redacted {
			out = append(out, v)
		}
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

// minSameValue is the shortest flagged value looked for elsewhere: shorter ones ("true", a
// port) are too common to be the same secret.
const minSameValue = 5

// same flags every scalar not flagged yet whose value is one of values, or holds one of known
// (mapping keys too), and the comments that hold one of known.
func (w *secretWalker) same(n *yaml.Node, path, key string, values, known map[string]bool) {
	each(n, path, key, func(n *yaml.Node, path, key string, isKey bool) {
		// checksum/* annotations are hashes by convention (annotations): one equal to a value
		// flagged as random-looking is the same hash, not a secret's copy.
		if w.flagged[n] || strings.HasPrefix(key, "checksum/") {
			return
		}
		if (!isKey && values[n.Value]) || holdsAny(n.Value, known) {
			w.add(n, path, key, SecretSameValue)
			if isKey {
				w.hits[len(w.hits)-1].Excerpt = Redacted + ":"
			}
		}
	})
	for s := range known {
		w.commentLeak(w.doc.root, leak{Secret: s})
	}
}

// holdsAny says whether v holds one of known.
func holdsAny(v string, known map[string]bool) bool {
	if len(v) < minSameValue {
		return false
	}
	for s := range known {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

// secretWalker walks one parsed document.
type secretWalker struct {
	doc  scanDoc
	hits []secretHit
	// flagged are the nodes with a finding already.
	flagged map[*yaml.Node]bool
}

func (w *secretWalker) add(n *yaml.Node, path, key string, kind SecretKind) {
	if w.flagged == nil {
		w.flagged = make(map[*yaml.Node]bool)
	}
	w.flagged[n] = true
	w.hits = append(w.hits, secretHit{SecretFinding: SecretFinding{
		Doc: w.doc.index, Line: w.doc.Line + n.Line - 1, Path: clip(path), Kind: kind, Excerpt: excerpt(key),
	}, node: n})
}

func excerpt(key string) string {
	if key == "" {
		return "- " + Redacted
	}
	return clip(key) + ": " + Redacted
}

// node walks n, found at path under key (key is "" for a list item).
func (w *secretWalker) node(n *yaml.Node, path, key string) {
	switch n.Kind {
	case yaml.MappingNode:
		w.mapping(n, path)
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := path
			if len(path) <= maxEcho {
				p += itemKey(c, i)
			}
			w.node(c, p, "")
			// The argument after a flag that names a secret on its own (--password, hunter2).
			if f := deref(c); i > 0 && f.Kind == yaml.ScalarNode && !w.flagged[f] {
				if prev := deref(n.Content[i-1]); prev.Kind == yaml.ScalarNode && secretFlag(prev.Value) && f.Value != "" && f.Value != Redacted && !filePath(f.Value) {
					w.add(f, p, prev.Value, SecretFlagValue)
				}
			}
		}
		if key == "env" {
			w.env(n, path)
		}
	case yaml.AliasNode:
		// A value written once with an anchor and used here by alias is scanned where it is
		// used (its key says what it is); the anchored scalar is what is redacted. Aliases of
		// collections were walked where they are defined.
		if t := n.Alias; t != nil && t.Kind == yaml.ScalarNode && !w.flagged[t] {
			w.node(t, path, key)
		}
	case yaml.ScalarNode:
		if n.Value == "" || n.Value == Redacted || (n.Tag != "!!str" && n.Tag != "!!binary" && n.Tag != "") {
			return
		}
		if kind, ok := valueKind(n.Value); ok {
			w.add(n, path, key, kind)
		}
	}
}

// entry is mappingEntry's value of name in n, looked for in the mappings n merges (<<: *base,
// <<: [*a, *b]) when n has none of its own, with an alias resolved.
func entry(n *yaml.Node, name string) *yaml.Node {
	n = deref(n)
	if _, v := mappingEntry(n, name); v != nil {
		return deref(v)
	}
	_, merge := mappingEntry(n, "<<")
	if merge == nil {
		return nil
	}
	merge = deref(merge)
	bases := []*yaml.Node{merge}
	if merge.Kind == yaml.SequenceNode {
		bases = merge.Content
	}
	for _, b := range bases {
		if _, v := mappingEntry(deref(b), name); v != nil {
			return deref(v)
		}
	}
	return nil
}

// pathKey is path with key k after it, as the diff writes it, until the path is longer than a
// finding shows it (clip): from there on it stays as it is, so a value nested n levels deep
// costs n to walk, not n².
func pathKey(path, k string) string {
	if len(path) > maxEcho {
		return path
	}
	return joinKey(path, k)
}

// itemKey names a list item as the diff does: by its name when it has one, else by position.
func itemKey(n *yaml.Node, i int) string {
	if _, v := mappingEntry(n, "name"); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
		return "[" + v.Value + "]"
	}
	return fmt.Sprintf("[%d]", i)
}

// registrySecretTypes are the Secret types that hold registry credentials.
var registrySecretTypes = []string{"kubernetes.io/dockerconfigjson", "kubernetes.io/dockercfg"}

func (w *secretWalker) mapping(n *yaml.Node, path string) {
	kindKey, kind := mappingEntry(n, "kind")
	// Kubernetes's kinds are case-sensitive, but a "secret" written in lower case holds secrets all
	// the same.
	isSecret := kind != nil && kind.Kind == yaml.ScalarNode && strings.EqualFold(kind.Value, "Secret")
	registry := false
	if isSecret {
		if _, t := mappingEntry(n, "type"); t != nil && slices.Contains(registrySecretTypes, t.Value) {
			registry = true
		}
	}
	at := len(w.hits)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := pathKey(path, k.Value)
		if isSecret && (k.Value == "data" || k.Value == "stringData") && v.Kind == yaml.MappingNode {
			w.secretData(v, p, registry)
			continue
		}
		if k.Value == "binaryData" && v.Kind == yaml.MappingNode {
			// A ConfigMap's binary values: keystores and certificates travel there.
			w.secretData(v, p, false)
			continue
		}
		if k.Value == "annotations" && v.Kind == yaml.MappingNode {
			w.annotations(v, p)
			continue
		}
		if k.Value == "proxyMetadata" && v.Kind == yaml.MappingNode {
			w.proxyMetadata(v, p)
			continue
		}
		w.node(v, p, k.Value)
	}
	if isSecret && len(w.hits) > at {
		// The Secret itself is named first, when it has values left to redact: a Secret whose
		// values are all redacted (or empty) gives nothing away.
		w.hits = slices.Insert(w.hits, at, secretHit{SecretFinding: SecretFinding{
			Doc: w.doc.index, Line: w.doc.Line + kindKey.Line - 1, Path: clip(joinKey(path, "kind")), Kind: SecretDocument, Excerpt: "kind: Secret",
		}})
	}
}

// secretData makes every value of a Secret's data or stringData a finding.
func (w *secretWalker) secretData(n *yaml.Node, path string, registry bool) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := pathKey(path, k.Value)
		if v.Kind != yaml.ScalarNode {
			w.node(v, p, k.Value)
			continue
		}
		if v.Value == "" || v.Value == Redacted {
			continue
		}
		kind := SecretDataValue
		decoded, _ := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v.Value), ""))
		switch {
		case isPrivateKey(v.Value) || isPrivateKey(string(decoded)):
			kind = SecretPrivateKey
		case registry || isRegistryCredential(v.Value) || isRegistryCredential(string(decoded)):
			kind = SecretRegistryCredential
		}
		w.add(v, p, k.Value, kind)
	}
}

// annotations skips the values of checksum/* annotations, which are meant to look random (a
// hash of a config, to roll pods when it changes: Helm's documented idiom).
func (w *secretWalker) annotations(n *yaml.Node, path string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if strings.HasPrefix(k.Value, "checksum/") && v.Kind == yaml.ScalarNode && !isPrivateKey(v.Value) && !isRegistryCredential(v.Value) {
			continue
		}
		w.node(v, pathKey(path, k.Value), k.Value)
	}
}

// proxyMetadata flags the values of a ProxyConfig's proxyMetadata (the proxy's environment
// variables, as in an install overlay's meshConfig.defaultConfig) whose names say they are
// secret, as env does for a container's.
func (w *secretWalker) proxyMetadata(n *yaml.Node, path string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		p := pathKey(path, k.Value)
		w.node(v, p, k.Value)
		if v.Kind == yaml.ScalarNode && !w.flagged[v] && v.Value != "" && v.Value != Redacted && secretName(k.Value) && !filePath(v.Value) && !placeholder(v.Value) {
			w.add(v, p, k.Value, SecretEnvName)
		}
	}
}

// env flags the values of env entries whose names say they are secret, unless the value was
// flagged already (a private key in DB_PASSWORD is a private key).
func (w *secretWalker) env(n *yaml.Node, path string) {
	for i, item := range n.Content {
		name, value := entry(item, "name"), entry(item, "value")
		if name == nil || value == nil || value.Kind != yaml.ScalarNode || value.Value == "" || value.Value == Redacted || !secretName(name.Value) || filePath(value.Value) {
			continue
		}
		if w.flagged[value] {
			continue
		}
		w.add(value, joinKey(path+itemKey(item, i), "value"), name.Value, SecretEnvName)
	}
}

// filePath says whether a value is an absolute file path: it says where a secret is
// (ISTIO_META_TLS_CLIENT_KEY: /etc/identity/client-key.pem, in Istio's own test data), not what.
func filePath(v string) bool {
	return strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \t\n")
}

// secretWords are the words of a variable's name that say its value is secret; nameWords the
// last words that say it is only where a secret is (a path, a file, a Secret's name).
var (
	secretWords = []string{"password", "passwd", "pwd", "pass", "passphrase", "token", "secret", "key", "apikey", "credential", "credentials", "auth"}
	nameWords   = []string{"name", "file", "path", "dir", "ref", "namespace", "url", "uri"}
)

// secretName says whether an env variable's name says its value is secret: one of its words
// (split at _, -, . and camelCase) is a secret word, and its last word does not say it names
// a place instead (TLS_KEY_FILE, SECRET_NAME).
func secretName(name string) bool {
	words := nameSplit(name)
	if len(words) == 0 || slices.Contains(nameWords, words[len(words)-1]) {
		return false
	}
	return slices.ContainsFunc(words, func(w string) bool { return slices.Contains(secretWords, w) })
}

func nameSplit(name string) []string {
	var words []string
	var cur []rune
	prev := rune(0)
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			if len(cur) > 0 {
				words = append(words, strings.ToLower(string(cur)))
			}
			cur = cur[:0]
		case unicode.IsUpper(r) && unicode.IsLower(prev) && len(cur) > 0:
			words = append(words, strings.ToLower(string(cur)))
			cur = append(cur[:0], r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	if len(cur) > 0 {
		words = append(words, strings.ToLower(string(cur)))
	}
	return words
}

// valueKind classifies any other string value: a private key, a registry credential, or a
// random-looking token.
func valueKind(v string) (SecretKind, bool) {
	switch {
	case isPrivateKey(v):
		return SecretPrivateKey, true
	case isRegistryCredential(v):
		return SecretRegistryCredential, true
	case len(urlPasswords(v)) > 0:
		return SecretURLCredential, true
	case len(flagValues(v)) > 0:
		return SecretFlagValue, true
	case highEntropy(v):
		return SecretHighEntropy, true
	}
	return "", false
}

// urlCredentialRE finds a URL's user information with a password: scheme://user:password@.
var urlCredentialRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:([^/\s@]+)@`)

// urlPasswords are the passwords of the URLs in v that are not placeholders (${DB_PASSWORD},
// {{ .password }}, <password>, ****).
func urlPasswords(v string) []string {
	var out []string
	for _, m := range urlCredentialRE.FindAllStringSubmatch(v, -1) {
		if !placeholder(m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

func placeholder(s string) bool {
	return strings.HasPrefix(s, "$") || strings.HasPrefix(s, "{") || strings.HasPrefix(s, "<") || strings.Trim(s, "*x") == ""
}

// flagRE finds command-line flags with a value in the same word: --name=value, -name=value.
var flagRE = regexp.MustCompile(`(?:^|\s)--?([A-Za-z][A-Za-z0-9_.-]*)=(\S+)`)

// flagValues are the values in v of flags whose names say they are secret (--password=hunter2,
// --db-token=…) that are not file paths or placeholders.
func flagValues(v string) []string {
	var out []string
	for _, m := range flagRE.FindAllStringSubmatch(v, -1) {
		if secretName(m[1]) && !filePath(m[2]) && !placeholder(m[2]) {
			out = append(out, m[2])
		}
	}
	return out
}

// secretFlag says whether an argument is a flag alone (its value the next argument) whose name
// says its value is secret: --password, -token.
func secretFlag(arg string) bool {
	name, ok := strings.CutPrefix(arg, "-")
	name = strings.TrimPrefix(name, "-")
	return ok && name != "" && !strings.ContainsAny(name, "= ") && secretName(name)
}

var privateKeyRE = regexp.MustCompile(`-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`)

func isPrivateKey(v string) bool { return privateKeyRE.MatchString(v) }

// isRegistryCredential recognises a Docker config: {"auths": …} (dockerconfigjson) or the legacy
// dockercfg's {"registry": {"auth": …}}.
func isRegistryCredential(v string) bool {
	t := strings.TrimSpace(v)
	return strings.HasPrefix(t, "{") && (strings.Contains(t, `"auths"`) || strings.Contains(t, `"auth"`))
}

// digestRE matches what is meant to look random and is not secret: a content digest, as in an
// image reference (image@sha256:…) or anywhere else.
var digestRE = regexp.MustCompile(`sha(256|384|512):[0-9a-fA-F]{32,}`)

// tokenRE cuts a value into tokens of the base64, base64url and hex alphabets; "=" only as
// base64's padding, at a token's end, so that key=value (sidecar.istio.io/proxyMemory=256Mi)
// is two tokens.
var tokenRE = regexp.MustCompile(`[A-Za-z0-9+/_-]{20,}={0,2}`)

// highEntropy says whether a value holds a long token that looks random. Secrets (API keys,
// passwords made by a generator, JWTs, base64 of random bytes) are near-uniform draws from an
// alphabet; names are words. Shannon entropy (bits per character, over the token's own
// character frequencies) tells them apart, within limits:
//
//   - Mixed-case tokens (base64, base64url, JWT parts) of at least 20 characters with upper,
//     lower and digits: flagged at ≥ 0.85 × log2(length) (the most a token of that length can
//     reach), capped at 4.3 bits. Simulated uniform base64 tokens (2,000 per length) average
//     4.04 bits at 20 characters (bound 3.67), 4.56 at 32 (bound 4.25), 4.78 at 40 and 5.18 at
//     64 (bound 4.3: past ~32 characters a token's own entropy grows slowly, 5.18 of a possible
//     6 at 64, so the uncapped bound would miss a quarter of them); 1–2 % fall below it.
//     camelCase and SCREAMING_SNAKE names fail the character mix or the bound.
//   - Hex tokens of at least 32 characters (128 bits and up): flagged at ≥ 3.0 bits; uniform
//     hex of 32 averages 3.62 and was never below 3.11; a hex run that long with few distinct
//     digits (0000…, deadbeef…) is not random.
//   - Lowercase-and-digit tokens are not flagged: pod names with hashes
//     (my-app-7d9f8b6c5d-x2kqz, 4.14 bits) are as "random" as short secrets of that alphabet, so
//     entropy cannot tell them apart; the env-name check catches such secrets where they usually
//     are.
//
// Content digests (sha256:…) are removed first: they are meant to look random.
func highEntropy(v string) bool {
	v = digestRE.ReplaceAllString(v, " ")
	for _, t := range tokenRE.FindAllString(v, -1) {
		if randomToken(t) {
			return true
		}
	}
	return false
}

func randomToken(t string) bool {
	var upper, lower, digit, hexOnly = false, false, false, true
	for _, r := range t {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= '0' && r <= '9':
			digit = true
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			hexOnly = false
		}
	}
	h := shannon(t)
	switch {
	case hexOnly && (upper != lower) && digit:
		return len(t) >= 32 && h >= 3.0
	case upper && lower && digit:
		return h >= math.Min(0.85*math.Log2(float64(len(t))), 4.3)
	}
	return false
}

// shannon is the Shannon entropy of s in bits per byte.
func shannon(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// scanLines scans a document that does not parse, line by line: a private key's first line, a
// registry credential's, random-looking tokens and the credentials gitleaks' rules found (ls),
// each a token on its line.
func scanLines(d scanDoc, ls []leak) []secretHit {
	var hits []secretHit
	for i, l := range d.lines {
		var spans [][2]int
		var kinds []SecretKind
		var rules []string
		// A private key or a registry credential is flagged to the line's end; random-looking
		// tokens before it are flagged too, or they would be found once the rest is redacted.
		end, endKind := len(l), SecretKind("")
		switch loc := privateKeyRE.FindStringIndex(l); {
		case loc != nil:
			end, endKind = loc[0], SecretPrivateKey
		case strings.Contains(l, `"auths"`):
			j := strings.Index(l, "{")
			if j < 0 || j > strings.Index(l, `"auths"`) {
				j = strings.Index(l, `"auths"`)
			}
			end, endKind = j, SecretRegistryCredential
		}
		clean := digestRE.ReplaceAllStringFunc(l[:end], func(s string) string { return strings.Repeat(" ", len(s)) })
		for _, loc := range tokenRE.FindAllStringIndex(clean, -1) {
			if randomToken(l[loc[0]:loc[1]]) {
				spans, kinds, rules = append(spans, [2]int{loc[0], loc[1]}), append(kinds, SecretHighEntropy), append(rules, "")
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
				spans, kinds, rules = append(spans, sp), append(kinds, SecretKnownFormat), append(rules, lk.Rule)
				from = sp[1]
			}
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
		excerpt := clip(strings.TrimSpace(ex.String()))
		for j, sp := range spans {
			hits = append(hits, secretHit{SecretFinding: SecretFinding{
				Doc: d.index, Line: d.Line + i, Kind: kinds[j], Rule: rules[j], Excerpt: excerpt,
			}, token: span{line: d.Line + i, from: sp[0], to: sp[1]}})
		}
	}
	return hits
}

// mergeSpans sorts the spans of one line and makes overlapping ones one (the first one's kind
// and rule), so that each byte is redacted once.
func mergeSpans(spans [][2]int, kinds []SecretKind, rules []string) ([][2]int, []SecretKind, []string) {
	idx := make([]int, len(spans))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return spans[a][0] - spans[b][0] })
	var s [][2]int
	var k []SecretKind
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

// Redact replaces every value ScanSecrets flags with Redacted and leaves every other byte of the
// manifest as it was: comments, quoting, layout, line ends. A flagged scalar keeps its style
// ("…" stays double-quoted, a block (|, >) becomes a plain scalar), so the document keeps its
// shape. Where the text of a value cannot be found exactly (a plain scalar folded over several
// lines, an anchor), that document is written again from its parsed tree with the values
// replaced (its comments kept where the YAML encoder keeps them). Each redacted document is parsed
// again and must equal the original with exactly the flagged values replaced: an in-place edit
// that does not falls back to writing the document again, and one written again that does not is
// an InputError, never a manifest with a secret left in it. In a document that does not parse,
// the flagged tokens are replaced where they are.
func Redact(manifest []byte) (string, error) {
	docs := splitScanDocs(manifest)
	hits := scanSecrets(docs)
	if len(hits) == 0 {
		return string(manifest), nil
	}
	lines := inputLines(manifest)
	byDoc := make(map[int][]secretHit)
	for _, h := range hits {
		if h.node != nil || h.token.line > 0 || h.comment != nil {
			byDoc[h.Doc] = append(byDoc[h.Doc], h)
		}
	}
	var edits []edit
	for _, d := range docs {
		dh := byDoc[d.index]
		if len(dh) == 0 {
			continue
		}
		e, err := redactDoc(d, dh)
		if err != nil {
			return "", err
		}
		edits = append(edits, e...)
	}
	return applyEdits(lines, edits)
}

// edit replaces [from, to) of the input, as (line, byte column) pairs, 1-based lines.
type edit struct {
	fromLine, fromCol, toLine, toCol int
	text                             string
}

func redactDoc(d scanDoc, hits []secretHit) ([]edit, error) {
	var edits []edit
	if d.root == nil {
		for _, h := range hits {
			edits = append(edits, edit{h.token.line, h.token.from, h.token.line, h.token.to, Redacted})
		}
		return edits, nil
	}
	replaced := make(map[*yaml.Node]bool)
	exact := true
	var scrub []secretHit
	for _, h := range hits {
		if h.comment != nil {
			// A comment is not a node's value: the document is written again with the secret
			// taken out of the comment's text.
			scrub, exact = append(scrub, h), false
			continue
		}
		if replaced[h.node] {
			continue
		}
		replaced[h.node] = true
		// Every flagged node is marked even when one cannot be edited exactly: the fallback
		// replaces them all.
		if e, ok := scalarEdit(d, h.node); ok {
			edits = append(edits, e)
		} else {
			exact = false
		}
	}
	if exact {
		if err := checkRedacted(d, edits, replaced); err == nil {
			return edits, nil
		}
	}
	// Write the document again from its tree.
	for _, h := range scrub {
		n := h.comment
		n.HeadComment = strings.ReplaceAll(n.HeadComment, h.secret, Redacted)
		n.LineComment = strings.ReplaceAll(n.LineComment, h.secret, Redacted)
		n.FootComment = strings.ReplaceAll(n.FootComment, h.secret, Redacted)
	}
	for n := range replaced {
		n.Value, n.Tag = Redacted, "!!str"
		if n.Style == yaml.LiteralStyle || n.Style == yaml.FoldedStyle {
			n.Style = 0
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(d.root); err != nil {
		return nil, &InputError{Doc: d.index, Line: d.Line, Field: "manifest", ID: "redact-failed", Params: errParams("error", err.Error()),
			Msg: "this document could not be redacted: " + err.Error()}
	}
	text := buf.String()
	var got yaml.Node
	if yaml.Unmarshal([]byte(text), &got) != nil || len(got.Content) == 0 || !sameTree(d.root.Content[0], got.Content[0], replaced) {
		return nil, &InputError{Doc: d.index, Line: d.Line, Field: "manifest", ID: "redact-differs", Msg: "this document could not be redacted: written again, it reads differently"}
	}
	first := 0
	if strings.HasPrefix(d.lines[0], "---") {
		// The separator that opens the document stays.
		first = 1
	}
	last := len(d.lines) - 1
	return []edit{{d.Line + first, 0, d.Line + last, len(d.lines[last]), strings.TrimSuffix(text, "\n")}}, nil
}

// scalarEdit finds the text of a scalar in its document: from its first character (a quote, a
// block indicator, or the value) to its last. ok is false when it cannot be found exactly.
func scalarEdit(d scanDoc, n *yaml.Node) (edit, bool) {
	li := n.Line - 1
	if li < 0 || li >= len(d.lines) || n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		return edit{}, false
	}
	line := d.lines[li]
	col, ok := byteCol(line, n.Column)
	if !ok {
		return edit{}, false
	}
	at := func(l, c int) edit { return edit{d.Line + li, col, d.Line + l, c, ""} }
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if !strings.HasPrefix(line[col:], `"`) {
			return edit{}, false
		}
		for l, c := li, col+1; l < len(d.lines); l, c = l+1, 0 {
			s := d.lines[l]
			for ; c < len(s); c++ {
				switch s[c] {
				case '\\':
					c++
				case '"':
					e := at(l, c+1)
					e.text = `"` + Redacted + `"`
					return e, true
				}
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		if !strings.HasPrefix(line[col:], `'`) {
			return edit{}, false
		}
		for l, c := li, col+1; l < len(d.lines); l, c = l+1, 0 {
			s := d.lines[l]
			for ; c < len(s); c++ {
				if s[c] == '\'' {
					if c+1 < len(s) && s[c+1] == '\'' {
						c++
						continue
					}
					e := at(l, c+1)
					e.text = "'" + Redacted + "'"
					return e, true
				}
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		if !strings.HasPrefix(line[col:], "|") && !strings.HasPrefix(line[col:], ">") {
			return edit{}, false
		}
		// The content: the lines after the header while they are blank or indented at least as
		// much as the first non-blank one (YAML's auto-detected indentation; an explicit
		// indentation indicator is left to the fallback).
		if strings.ContainsAny(strings.Fields(line[col:])[0], "123456789") {
			return edit{}, false
		}
		indent, end := -1, li
		for l := li + 1; l < len(d.lines); l++ {
			s := d.lines[l]
			if strings.TrimSpace(s) == "" {
				continue
			}
			ind := len(s) - len(strings.TrimLeft(s, " "))
			if indent < 0 {
				indent = ind
			}
			if ind < indent {
				break
			}
			end = l
		}
		if end == li {
			return edit{}, false
		}
		e := at(end, len(d.lines[end]))
		e.text = Redacted
		return e, true
	default:
		if !strings.HasPrefix(line[col:], n.Value) || strings.Contains(n.Value, "\n") {
			return edit{}, false
		}
		e := at(li, col+len(n.Value))
		e.text = Redacted
		return e, true
	}
	return edit{}, false
}

// byteCol turns yaml's 1-based column (in characters) into a byte offset in line.
func byteCol(line string, column int) (int, bool) {
	c := 0
	for i := range line {
		if c == column-1 {
			return i, true
		}
		c++
	}
	return 0, false
}

// checkRedacted applies the edits to the document alone and parses it again: it must be the
// original tree with exactly the replaced scalars changed to Redacted.
func checkRedacted(d scanDoc, edits []edit, replaced map[*yaml.Node]bool) error {
	local := make([]edit, len(edits))
	for i, e := range edits {
		e.fromLine -= d.Line - 1
		e.toLine -= d.Line - 1
		local[i] = e
	}
	lines := make([]string, len(d.lines))
	for i, l := range d.lines {
		lines[i] = l + "\n"
	}
	text, err := applyEdits(lines, local)
	if err != nil {
		return err
	}
	var got yaml.Node
	if err := yaml.Unmarshal([]byte(text), &got); err != nil || len(got.Content) == 0 {
		return errors.New("the redacted document does not parse")
	}
	if !sameTree(d.root.Content[0], got.Content[0], replaced) {
		return errors.New("the redacted document differs")
	}
	return nil
}

func sameTree(want, got *yaml.Node, replaced map[*yaml.Node]bool) bool {
	if want.Kind != got.Kind || len(want.Content) != len(got.Content) {
		return false
	}
	if replaced[want] {
		return got.Value == Redacted
	}
	if want.Value != got.Value || (want.Kind != yaml.ScalarNode && want.Tag != got.Tag) || want.Alias != nil != (got.Alias != nil) {
		return false
	}
	if want.Kind == yaml.ScalarNode && want.ShortTag() != got.ShortTag() {
		return false
	}
	for i := range want.Content {
		if !sameTree(want.Content[i], got.Content[i], replaced) {
			return false
		}
	}
	return true
}

// inputLines are the input's lines with their line ends ("\n", "\r\n" or none for the last).
func inputLines(in []byte) []string {
	s := string(in)
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// applyEdits applies edits (1-based lines, byte columns of the lines' content) to lines, which
// may carry their line ends; the edits must not overlap.
func applyEdits(lines []string, edits []edit) (string, error) {
	slices.SortFunc(edits, func(a, b edit) int {
		if a.fromLine != b.fromLine {
			return a.fromLine - b.fromLine
		}
		return a.fromCol - b.fromCol
	})
	var b strings.Builder
	l, c := 1, 0 // the next byte to copy
	for _, e := range edits {
		if e.fromLine < l || (e.fromLine == l && e.fromCol < c) || e.toLine > len(lines) {
			return "", errors.New("overlapping redactions")
		}
		for ; l < e.fromLine; l, c = l+1, 0 {
			b.WriteString(lines[l-1][c:])
		}
		b.WriteString(content(lines[l-1])[c:e.fromCol])
		b.WriteString(e.text)
		l, c = e.toLine, e.toCol
		if c > len(content(lines[l-1])) {
			return "", errors.New("a redaction outside its line")
		}
	}
	for ; l <= len(lines); l, c = l+1, 0 {
		b.WriteString(lines[l-1][c:])
	}
	return b.String(), nil
}

// content is a line without its line end.
func content(l string) string {
	return strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
}
