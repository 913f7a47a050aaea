package secrets

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"unicode"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// secretHit is a finding and where its value is: a scalar node of a parsed document, or a token
// on one line of a document that does not parse. A secret-document finding has neither: it is
// redacted through its values.
type secretHit struct {
	Finding
	node  *yaml.Node
	token span
	// comment is the node whose comment holds secret, a part of one of its comments' text.
	comment *yaml.Node
	secret  string
	// spans are the parts of node's value that are secrets (a password in a properties file
	// held by the value, mysql's -p in a command line); none when the whole value is one.
	spans []textSpan
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
		switch {
		case h.node != nil && h.spans != nil:
			for _, sp := range h.spans {
				if sp.to-sp.from >= minSameValue {
					values[h.node.Value[sp.from:sp.to]] = true
				}
			}
		case h.node != nil && len(h.node.Value) >= minSameValue:
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
			w.add(n, path, key, SameValue)
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
	// argvDone are the lists read as a command line with another (a container's args, with
	// its command).
	argvDone map[*yaml.Node]bool
}

func (w *secretWalker) add(n *yaml.Node, path, key string, kind Kind) {
	if w.flagged == nil {
		w.flagged = make(map[*yaml.Node]bool)
	}
	w.flagged[n] = true
	w.hits = append(w.hits, secretHit{Finding: Finding{
		Doc: w.doc.index, Line: w.doc.Line + n.Line - 1, Path: yamldoc.Clip(path), Kind: kind, Excerpt: excerpt(key),
	}, node: n})
}

func excerpt(key string) string {
	if key == "" {
		return "- " + Redacted
	}
	return yamldoc.Clip(key) + ": " + Redacted
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
			if len(path) <= yamldoc.MaxEcho {
				p += itemKey(c, i)
			}
			each(c, p, "", fn)
		}
	case yaml.ScalarNode:
		fn(n, path, key, false)
	}
}

// node walks n, found at path under key (key is "" for a list item).
func (w *secretWalker) node(n *yaml.Node, path, key string) {
	switch n.Kind {
	case yaml.MappingNode:
		w.mapping(n, path)
	case yaml.SequenceNode:
		for i, c := range n.Content {
			w.node(c, itemPath(path, c, i), "")
		}
		if !w.argvDone[n] {
			w.argv(path, n.Content, nil)
		}
		w.env(n, path)
	case yaml.AliasNode:
		// A value written once with an anchor and used here by alias is scanned where it is
		// used (its key says what it is); the anchored scalar is what is redacted. Aliases of
		// collections were walked where they are defined.
		if t := n.Alias; t != nil && t.Kind == yaml.ScalarNode && !w.flagged[t] {
			w.node(t, path, key)
		}
	case yaml.ScalarNode:
		w.scalar(n, path, key)
	}
}

// scalar flags a string value (or a number: a password may be one) by what it is, by its key's
// name (db_password: …, in a ConfigMap's data, an annotation, a label, a Helm chart's values, a
// mesh's config), by what it holds (a file's or a command line's secrets: textSecrets), or by
// a credential of a known format that only its decoded value shows (a YAML escape, a
// continued line). A value under a custom tag (!vault …) is read as the string YAML decodes.
func (w *secretWalker) scalar(n *yaml.Node, path, key string) {
	if n.Value == "" || n.Value == Redacted || w.flagged[n] {
		return
	}
	byName := true
	switch n.Tag {
	case "", "!!str", "!!binary", "!!int", "!!float":
	default:
		if !strings.HasPrefix(n.Tag, "!") || strings.HasPrefix(n.Tag, "!!") {
			return
		}
		// A tag that says where the value comes from (!Ref DbPassword, Home Assistant's
		// !secret db_password, !env DB_PASSWORD): the value is a name, not the secret.
		byName = !slices.Contains(referenceTags, strings.ToLower(n.Tag))
	}
	v := n.Value
	switch {
	case isPrivateKey(v):
		w.add(n, path, key, PrivateKey)
		return
	case isRegistryCredential(v):
		w.add(n, path, key, RegistryCredential)
		return
	case highEntropy(v):
		w.add(n, path, key, HighEntropy)
		return
	}
	// A value of one line is all secret when its key says so; a longer one is a file whose
	// secrets are found in it (a .pgpass, an application.properties).
	multiline := strings.Contains(v, "\n")
	if byName && !multiline && key != "" && keyName(key) && nameValue(v) && nameNumber(key, v) {
		w.add(n, path, key, EnvName)
		if s := authScheme(v); s > 0 {
			// Authorization: Bearer …: the credential after its scheme.
			w.hits[len(w.hits)-1].spans = []textSpan{{from: s, to: len(v), kind: EnvName}}
		}
		return
	}
	if sp := textSecrets(v); len(sp) > 0 {
		w.add(n, path, key, sp[0].kind)
		w.hits[len(w.hits)-1].spans = sp
		return
	}
	if byName && multiline && key != "" && bare(v) && keyName(key) && nameValue(v) && nameNumber(key, v) {
		w.add(n, path, key, EnvName)
		return
	}
	if w.decoded(n) {
		if ls := leaks(n.Value); len(ls) > 0 {
			w.addKnown(n, path, key, false, ls[0].Rule)
		}
	}
}

// referenceTags are the tags whose value names where a value is.
var referenceTags = []string{"!ref", "!secret", "!env", "!include", "!getatt", "!importvalue", "!sub", "!findinmap", "!getparameter", "!vault_ref"}

// fileName says whether a key names a file (.pgpass, db-password.txt): its value is the file.
func fileName(key string) bool {
	i := strings.LastIndexByte(key, '.')
	return i >= 0 && i < len(key)-1 && strings.IndexFunc(key[i+1:], func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

// authScheme is the length of an HTTP authorization scheme and its space at v's start
// ("Bearer ", "Basic "), 0 if there is none.
func authScheme(v string) int {
	for _, s := range []string{"Bearer ", "Basic ", "Token ", "Digest ", "bearer ", "basic ", "token "} {
		if strings.HasPrefix(v, s) && len(v) > len(s) {
			return len(s)
		}
	}
	return 0
}

// bare says whether a file's text is one word on one line (db-password.txt: |, then the
// password).
func bare(v string) bool {
	return !strings.ContainsAny(strings.TrimSpace(v), " \t\n:=")
}

// decoded says whether n's value is not its text: a double-quoted scalar with an escape or a
// continued line, or a tagged one. gitleaks reads the text; such a value is read again.
func (w *secretWalker) decoded(n *yaml.Node) bool {
	if n.Style&yaml.TaggedStyle != 0 || n.Tag != "" && !strings.HasPrefix(n.Tag, "!!") {
		return true
	}
	if n.Style&yaml.DoubleQuotedStyle == 0 || n.Line < 1 || n.Line > len(w.doc.lines) {
		return false
	}
	return strings.Contains(w.doc.lines[n.Line-1], `\`)
}

// argv flags the secrets of a command line written as a list (command: [mysql], args: [-uroot,
// -pSecret]; or args: [--password, hunter2]): the words are joined as a shell would see them and
// read by commandSecrets; a span that is a whole item flags the item, one inside an item that
// part of it.
func (w *secretWalker) argv(path string, items []*yaml.Node, paths []string) {
	var b strings.Builder
	starts := make([]int, len(items))
	for i, c := range items {
		c = yamldoc.Deref(c)
		if c.Kind != yaml.ScalarNode {
			return
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		starts[i] = b.Len()
		b.WriteString(c.Value)
	}
	line := b.String()
	if !strings.Contains(line, "-") {
		return
	}
	for _, sp := range commandSecrets(fieldsAt(line)) {
		i, _ := slices.BinarySearch(starts, sp.from+1)
		i--
		c := yamldoc.Deref(items[i])
		if w.flagged[c] || sp.to > starts[i]+len(c.Value) {
			continue
		}
		p := itemPath(path, items[i], i)
		if paths != nil {
			p = paths[i]
		}
		w.add(c, p, "", FlagValue)
		if from, to := sp.from-starts[i], sp.to-starts[i]; from > 0 || to < len(c.Value) {
			w.hits[len(w.hits)-1].spans = []textSpan{{from: from, to: to, kind: FlagValue}}
		}
	}
}

func itemPath(path string, c *yaml.Node, i int) string {
	if len(path) <= yamldoc.MaxEcho {
		return path + itemKey(c, i)
	}
	return path
}

// entry is yamldoc.MappingEntry's value of name in n, looked for in the mappings n merges (<<: *base,
// <<: [*a, *b]) when n has none of its own, with an alias resolved.
func entry(n *yaml.Node, name string) *yaml.Node {
	n = yamldoc.Deref(n)
	if _, v := yamldoc.MappingEntry(n, name); v != nil {
		return yamldoc.Deref(v)
	}
	_, merge := yamldoc.MappingEntry(n, "<<")
	if merge == nil {
		return nil
	}
	merge = yamldoc.Deref(merge)
	bases := []*yaml.Node{merge}
	if merge.Kind == yaml.SequenceNode {
		bases = merge.Content
	}
	for _, b := range bases {
		if _, v := yamldoc.MappingEntry(yamldoc.Deref(b), name); v != nil {
			return yamldoc.Deref(v)
		}
	}
	return nil
}

// pathKey is path with key k after it, as the diff writes it, until the path is longer than a
// finding shows it (clip): from there on it stays as it is, so a value nested n levels deep
// costs n to walk, not n².
func pathKey(path, k string) string {
	if len(path) > yamldoc.MaxEcho {
		return path
	}
	return yamldoc.JoinKey(path, k)
}

// itemKey names a list item as the diff does: by its name when it has one, else by position.
func itemKey(n *yaml.Node, i int) string {
	if _, v := yamldoc.MappingEntry(n, "name"); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
		return "[" + v.Value + "]"
	}
	return fmt.Sprintf("[%d]", i)
}

// registrySecretTypes are the Secret types that hold registry credentials.
var registrySecretTypes = []string{"kubernetes.io/dockerconfigjson", "kubernetes.io/dockercfg"}

func (w *secretWalker) mapping(n *yaml.Node, path string) {
	kindKey, kind := yamldoc.MappingEntry(n, "kind")
	// Kubernetes's kinds are case-sensitive, but a "secret" written in lower case holds secrets all
	// the same.
	isSecret := kind != nil && kind.Kind == yaml.ScalarNode && strings.EqualFold(kind.Value, "Secret")
	registry := false
	if isSecret {
		if _, t := yamldoc.MappingEntry(n, "type"); t != nil && slices.Contains(registrySecretTypes, t.Value) {
			registry = true
		}
	}
	at := len(w.hits)
	w.commandArgs(n, path)
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
		w.hits = slices.Insert(w.hits, at, secretHit{Finding: Finding{
			Doc: w.doc.index, Line: w.doc.Line + kindKey.Line - 1, Path: yamldoc.Clip(yamldoc.JoinKey(path, "kind")), Kind: Document, Excerpt: "kind: Secret",
		}})
	}
}

// commandArgs reads a container's command and args as one command line (command: [mysql],
// args: [-uroot, -pSecret]).
func (w *secretWalker) commandArgs(n *yaml.Node, path string) {
	_, cmd := yamldoc.MappingEntry(n, "command")
	_, args := yamldoc.MappingEntry(n, "args")
	if cmd == nil || args == nil || cmd.Kind != yaml.SequenceNode || args.Kind != yaml.SequenceNode {
		return
	}
	var paths []string
	for i, c := range cmd.Content {
		paths = append(paths, itemPath(pathKey(path, "command"), c, i))
	}
	for i, c := range args.Content {
		paths = append(paths, itemPath(pathKey(path, "args"), c, i))
	}
	if w.argvDone == nil {
		w.argvDone = make(map[*yaml.Node]bool)
	}
	w.argvDone[cmd], w.argvDone[args] = true, true
	w.argv(path, slices.Concat(cmd.Content, args.Content), paths)
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
		kind := DataValue
		decoded, _ := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v.Value), ""))
		switch {
		case isPrivateKey(v.Value) || isPrivateKey(string(decoded)):
			kind = PrivateKey
		case registry || isRegistryCredential(v.Value) || isRegistryCredential(string(decoded)):
			kind = RegistryCredential
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
		k, v := n.Content[i], yamldoc.Deref(n.Content[i+1])
		p := pathKey(path, k.Value)
		w.node(v, p, k.Value)
		if v.Kind == yaml.ScalarNode && !w.flagged[v] && v.Value != "" && v.Value != Redacted && secretName(k.Value) && !filePath(v.Value) && !placeholder(v.Value) {
			w.add(v, p, k.Value, EnvName)
		}
	}
}

// env flags the values of entries of a list of names and values whose names say they are
// secret (a container's env; a header list such as an OpenTelemetry provider's {name:
// Authorization, value: …}), unless the value was flagged already (a private key in
// DB_PASSWORD is a private key).
func (w *secretWalker) env(n *yaml.Node, path string) {
	for i, item := range n.Content {
		if yamldoc.Deref(item).Kind != yaml.MappingNode {
			continue
		}
		name, value := entry(item, "name"), entry(item, "value")
		if name == nil {
			name = entry(item, "key")
		}
		if name == nil || value == nil || value.Kind != yaml.ScalarNode || name.Kind != yaml.ScalarNode || !secretName(name.Value) || !nameValue(value.Value) {
			continue
		}
		if w.flagged[value] {
			continue
		}
		w.add(value, yamldoc.JoinKey(path+itemKey(item, i), "value"), name.Value, EnvName)
	}
}
