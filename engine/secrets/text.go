package secrets

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// textSpan is a secret inside a longer text, [from, to) bytes of it, and why it is one.
type textSpan struct {
	from, to int
	kind     Kind
	// rule names gitleaks' rule for a KnownFormat span.
	rule string
}

// textTriggers are what a line must hold (in lower case) for textSecrets to read it: every rule
// below needs one of them, except .pgpass's, which needs four colons.
var textTriggers = []string{"pass", "pw", "secret", "token", "key", "auth", "cred", "machine", "://", " -a", " -p", "-u"}

// textSecrets finds the secrets inside a text value, line by line: what a file put in a value
// holds (application.properties' spring.datasource.password=…, an ini or .env file's keys, a
// YAML file's or an injection template's keys and env entries, a directive (redis.conf's
// requirepass …), a JSON or Python key in quotes, PHP's define('DB_PASSWORD', …), an XML
// element (<password>…</password>), .npmrc's :_authToken=…, .netrc's "password p", .pgpass's
// host:port:db:user:password), a connection string's Password=…, a URL's password, and a
// command line's password flags (--password x, mysql -pSecret, redis-cli -a secret). Each span
// is the value alone, so that redacting it keeps the file around it.
func textSecrets(s string) []textSpan {
	var out []textSpan
	var pendingName bool // the line before was "- name: <a secret name>" of an env entry
	for off := 0; off <= len(s); {
		end := strings.IndexByte(s[off:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += off
		}
		line := s[off:end]
		if len(line) > 0 {
			out, pendingName = lineSecrets(line, off, out, pendingName)
		}
		off = end + 1
	}
	return mergeTextSpans(out)
}

// lineRE is a key and its value at a line's start: key: value (YAML), key=value and key = value
// (properties, ini, .env, export KEY=value), and a list item's - key: value.
var lineRE = regexp.MustCompile(`^\s*(?:export\s+|-\s+)?["']?([A-Za-z_][A-Za-z0-9_.\-\[\]]*)["']?\s*([:=])[ \t]*(.*)$`)

// pairRE is key=value inside a line: a connection string's Password=…; (.NET, ODBC), a URL's
// query (?user=root&password=…), a JVM property (-Dspring.datasource.password=…), an inline
// variable (PGPASSWORD=… psql), kubectl's --from-literal=password=….
var pairRE = regexp.MustCompile(`(?:^|[\s;&?,=:\-])([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*=[ \t]*("[^"]*"|'[^']*'|[^\s;&,"']+)`)

// quotedPairRE is a quoted key and its quoted value inside a line: JSON's "password": "…" (a
// one-line config.json), Python's 'PASSWORD': '…', PHP's 'password' => '…' and
// define('DB_PASSWORD', '…') (a list of strings, "a","b", is not a pair).
var quotedPairRE = regexp.MustCompile(`(define\(\s*)?["']([A-Za-z_][A-Za-z0-9_.\-]*)["']\s*([:,]|=>)\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')`)

// xmlRE is an XML element with text: Maven's settings.xml <password>…</password>.
var xmlRE = regexp.MustCompile(`<([A-Za-z_][A-Za-z0-9_.\-:]*)>([^<]+)</([A-Za-z_][A-Za-z0-9_.\-:]*)>`)

func lineSecrets(line string, off int, out []textSpan, pendingName bool) ([]textSpan, bool) {
	lower := strings.ToLower(line)
	if !slices.ContainsFunc(textTriggers, func(t string) bool { return strings.Contains(lower, t) }) {
		if strings.Count(line, ":") == 4 {
			out = appendPgpass(line, off, out)
		}
		return out, false
	}
	// A command line's flags first: a span of several rules is named by the first.
	toks := fieldsAt(line)
	for _, sp := range commandSecrets(toks) {
		out = append(out, textSpan{from: off + sp.from, to: off + sp.to, kind: FlagValue})
	}
	nextPending := false
	if m := lineRE.FindStringSubmatchIndex(line); m != nil {
		key, sep := line[m[2]:m[3]], line[m[4]:m[5]]
		from, to := valueBounds(line, m[6], m[7], sep == ":")
		if sep == "=" && m[5] == m[4]+1 && line[m[4]-1] != ' ' {
			// KEY=value then more words is a command's inline variable (PGPASSWORD=… psql):
			// the value ends at the first space.
			if j := strings.IndexAny(line[from:to], " \t"); j >= 0 && line[from] != '"' && line[from] != '\'' {
				to = from + j
			}
		}
		v := line[from:to]
		switch {
		case key == "name" && sep == ":" && secretName(v):
			nextPending = true
		case strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") || strings.HasPrefix(v, "&") || strings.HasPrefix(v, "*"):
			// A structure (JSON's "channel_creds": [{…}]), an anchor or an alias: its own
			// lines are read.
		case (keyName(key) && nameNumber(key, v) || key == "value" && pendingName) && nameValue(v):
			out = append(out, textSpan{from: off + from, to: off + to, kind: EnvName})
		}
	}
	out = appendPairs(line, off, out, 0)
	if strings.ContainsAny(line, `"'`) {
		for _, m := range quotedPairRE.FindAllStringSubmatchIndex(line, -1) {
			from, to := m[8], m[9]
			if from < 0 {
				from, to = m[10], m[11]
			}
			if line[m[6]:m[7]] == "," && m[2] < 0 {
				continue
			}
			if keyName(line[m[4]:m[5]]) && nameValue(line[from:to]) {
				out = append(out, textSpan{from: off + from, to: off + to, kind: EnvName})
			}
		}
	}
	if strings.Contains(line, "</") {
		for _, m := range xmlRE.FindAllStringSubmatchIndex(line, -1) {
			if name := line[m[2]:m[3]]; name == line[m[6]:m[7]] && keyName(name) && nameValue(line[m[4]:m[5]]) {
				out = append(out, textSpan{from: off + m[4], to: off + m[5], kind: EnvName})
			}
		}
	}
	for _, m := range urlCredentialRE.FindAllStringSubmatchIndex(line, -1) {
		if !placeholder(line[m[2]:m[3]]) {
			out = append(out, textSpan{from: off + m[2], to: off + m[3], kind: URLCredential})
		}
	}
	// A configuration file's directive: requirepass foobared (redis.conf), masterauth ….
	if len(toks) == 2 && envVar(strings.NewReplacer("-", "_", ".", "_").Replace(toks[0].text)) && keyName(toks[0].text) && nameValue(toks[1].text) {
		out = append(out, textSpan{from: off + toks[1].at, to: off + toks[1].at + len(toks[1].text), kind: EnvName})
	}
	out = appendNetrc(toks, off, out)
	if strings.Count(line, ":") == 4 {
		out = appendPgpass(line, off, out)
	}
	return out, nextPending
}

// valueBounds are the bounds of a line's value from [from, to): without its quotes, and without
// a trailing comment (" #…") when it is YAML's or an ini file's.
// appendPairs adds the values of pairRE's pairs in line whose keys say secret; a value that is
// a pair itself (--from-literal=password=…) is read again.
func appendPairs(line string, off int, out []textSpan, depth int) []textSpan {
	for _, m := range pairRE.FindAllStringSubmatchIndex(line, -1) {
		from, to := unquote(line, m[4], m[5])
		v := line[from:to]
		switch {
		case keyName(line[m[2]:m[3]]) && nameValue(v):
			out = append(out, textSpan{from: off + from, to: off + to, kind: EnvName})
		case depth < 2 && strings.Contains(v, "="):
			out = appendPairs(v, off+from, out, depth+1)
		}
	}
	return out
}

func valueBounds(line string, from, to int, yamlish bool) (int, int) {
	v := line[from:to]
	if len(v) > 0 && (v[0] == '"' || v[0] == '\'') {
		if j := strings.IndexByte(v[1:], v[0]); j >= 0 {
			return from + 1, from + 1 + j
		}
	}
	if j := strings.Index(v, " #"); j >= 0 {
		v = v[:j]
	}
	if yamlish {
		v = strings.TrimRight(v, ",")
	}
	return from, from + len(strings.TrimRight(v, " \t;"))
}

func unquote(line string, from, to int) (int, int) {
	if to-from >= 2 && (line[from] == '"' || line[from] == '\'') && line[to-1] == line[from] {
		return from + 1, to - 1
	}
	return from, to
}

// token is a word of a command line and where it starts.
type token struct {
	text string
	at   int
}

// fieldsAt are line's words (split at spaces and tabs outside quotes, as a shell splits them:
// --password="two words" is one) with their offsets.
func fieldsAt(line string) []token {
	var out []token
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for quote := byte(0); j < len(line) && (quote != 0 || line[j] != ' ' && line[j] != '\t'); j++ {
			switch c := line[j]; {
			case quote == 0 && (c == '"' || c == '\''):
				if strings.IndexByte(line[j+1:], c) >= 0 {
					quote = c
				}
			case c == quote:
				quote = 0
			}
		}
		if j > i {
			out = append(out, token{line[i:j], i})
		}
		i = j
	}
	return out
}

// shortPasswordFlags are the commands whose short flag takes a password: mysql's -p (its value
// fused, -pSecret, or the next word), redis-cli's -a, sshpass's, mongo's and docker login's -p.
var shortPasswordFlags = map[string]string{
	"mysql": "-p", "mysqldump": "-p", "mysqladmin": "-p", "mysqlimport": "-p", "mysqlcheck": "-p", "mysqlsh": "-p",
	"mariadb": "-p", "mariadb-dump": "-p", "mariadb-admin": "-p", "redis-cli": "-a", "valkey-cli": "-a", "sshpass": "-p",
	"mongo": "-p", "mongosh": "-p", "mongodump": "-p", "mongorestore": "-p", "mongoexport": "-p", "mongoimport": "-p",
	"docker": "-p", "podman": "-p", "helm": "-p", "skopeo": "-p", "buildah": "-p",
}

// commandPrefixes are words before a command that are not it.
var commandPrefixes = []string{"sudo", "exec", "env", "time", "command", "nohup", "-", "#", "//", "$", ">"}

// commandSecrets are the password values of the command lines in toks (several, split at ;,
// &&, || and |): a flag whose name says secret and its value in the next word (--password x,
// -token x), one with its value after "=" (--password=x), a command's short password flag
// (shortPasswordFlags), and curl's -u/--user user:password. Spans are in the tokens' line.
func commandSecrets(toks []token) []textSpan {
	var out []textSpan
	cmd := ""
	for i := 0; i < len(toks); i++ {
		t := toks[i].text
		if t == ";" || t == "&&" || t == "||" || t == "|" || strings.HasSuffix(t, ":") && !strings.HasPrefix(t, "-") {
			// The end of a command, or a label before one (# debug: mysql …).
			cmd = ""
			continue
		}
		if cmd == "" && slices.Contains(commandPrefixes, t) {
			continue
		}
		if cmd == "" && !strings.HasPrefix(t, "-") {
			// The command: past inline variables (PGPASSWORD=… psql), sudo and the like, a
			// list item's "- " and a comment's "#".
			if strings.Contains(t, "=") {
				continue
			}
			cmd = path.Base(strings.Trim(t, `"'(`))
			continue
		}
		if cmd == "" {
			cmd = "?" // arguments without their command (a container's args)
		}
		next := func() (token, bool) {
			// A value is a word: not another flag, a redirection, a comment or an aside.
			if i+1 < len(toks) && !strings.ContainsAny(toks[i+1].text[:1], "-(#<>|&;") {
				return toks[i+1], true
			}
			return token{}, false
		}
		add := func(at int, v string) {
			from, to := unquote(v, 0, len(v))
			v = v[from:to]
			v = strings.TrimRight(v, ";")
			if v != "" && !filePath(v) && !placeholder(v) && v != Redacted {
				out = append(out, textSpan{from: at + from, to: at + from + len(v), kind: FlagValue})
			}
		}
		short := shortPasswordFlags[cmd]
		switch {
		case strings.HasPrefix(t, "--") && strings.Contains(t, "="):
			name, v, _ := strings.Cut(t[2:], "=")
			if secretName(name) {
				add(toks[i].at+3+len(name), v)
			}
		case short != "" && t == short:
			if n, ok := next(); ok {
				add(n.at, n.text)
				i++
			}
		case short == "-p" && strings.HasPrefix(t, "-p") && len(t) > 2 && (cmd == "mysql" || strings.HasPrefix(cmd, "mysql") || strings.HasPrefix(cmd, "mariadb")):
			add(toks[i].at+2, t[2:])
		case cmd == "curl" && (t == "-u" || t == "--user" || t == "--proxy-user" || t == "-U"):
			if n, ok := next(); ok {
				if _, pw, ok := strings.Cut(n.text, ":"); ok {
					add(n.at+len(n.text)-len(pw), pw)
				}
				i++
			}
		case secretFlag(t):
			if n, ok := next(); ok {
				add(n.at, n.text)
				i++
			}
		}
	}
	return out
}

// appendNetrc adds .netrc's passwords: "password p" on a line that starts with one of its
// keywords (machine h login u password p; or password p on a line of its own).
func appendNetrc(toks []token, off int, out []textSpan) []textSpan {
	if len(toks) < 2 || !slices.Contains([]string{"machine", "default", "login", "password", "passwd"}, toks[0].text) {
		return out
	}
	for i := 0; i+1 < len(toks); i++ {
		if (toks[i].text == "password" || toks[i].text == "passwd") && nameValue(toks[i+1].text) {
			out = append(out, textSpan{from: off + toks[i+1].at, to: off + toks[i+1].at + len(toks[i+1].text), kind: EnvName})
		}
	}
	return out
}

// appendPgpass adds a .pgpass line's password: hostname:port:database:username:password, the port
// a number or *, no spaces.
func appendPgpass(line string, off int, out []textSpan) []textSpan {
	t := strings.TrimSpace(line)
	if strings.ContainsAny(t, " \t\\") || strings.HasPrefix(t, "#") {
		return out
	}
	f := strings.Split(t, ":")
	if len(f) != 5 || f[0] == "" || f[3] == "" || (f[1] != "*" && strings.Trim(f[1], "0123456789") != "") || f[1] == "" {
		return out
	}
	if pw := f[4]; nameValue(pw) {
		at := strings.Index(line, t) + len(t) - len(pw)
		out = append(out, textSpan{from: off + at, to: off + at + len(pw), kind: EnvName})
	}
	return out
}

// mergeTextSpans sorts spans and makes overlapping ones one (the first one's kind and rule), so
// that each byte is redacted once.
func mergeTextSpans(spans []textSpan) []textSpan {
	if len(spans) < 2 {
		return spans
	}
	slices.SortStableFunc(spans, func(a, b textSpan) int { return a.from - b.from })
	out := spans[:1]
	for _, s := range spans[1:] {
		if last := &out[len(out)-1]; s.from < last.to {
			last.to = max(last.to, s.to)
			continue
		}
		out = append(out, s)
	}
	return out
}
