package secrets

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The words of a name that say its value is secret. A name is cut into words at _, -, ., spaces
// and camelCase (nameSplit); fused words are read too: PGPASSWORD, MYSQLPWD, SENDGRIDAPIKEY.
//
// detect-secrets' KeywordDetector and gitleaks' generic-api-key rule decide the same way, by a
// list of keywords in the name (password, passwd, pwd, secret, token, api key, credential(s),
// creds, auth, key); both then look at the value, as nameValue does here.
var (
	// strongWords say secret wherever they are in a word: PGPASSWORD, adminPasswd, DB_CREDS.
	strongWords = []string{"password", "passwd", "passphrase", "passcode", "secret", "token", "apikey", "credential", "creds", "authorization"}
	// shortWords say secret as a word of their own (DB_PASS, LDAP_BIND_PW, rootPwd), not inside
	// another (bypass, compass).
	shortWords = []string{"pass", "pw", "pwd", "key", "auth", "cred"}
	// keySuffixes are the fused words ending in "key" that name a key that is secret.
	keySuffixes = []string{"apikey", "accesskey", "secretkey", "privatekey", "privkey", "authkey", "masterkey",
		"clientkey", "signingkey", "encryptionkey", "licensekey", "servicekey", "accountkey", "sharedkey", "hmackey"}
	// weakWords say secret alone in an environment variable's name only (see keyName).
	weakWords = []string{"key", "keys", "auth", "secret", "secrets"}
	// qualifiers make key, auth and secret a credential in a name that is not an environment
	// variable's: api-key, client-secret, jwt.secret, secret-key (see keyName).
	qualifiers = []string{"api", "access", "client", "private", "priv", "secret", "master", "signing", "encryption",
		"license", "service", "account", "shared", "app", "webhook", "session", "jwt", "hmac", "cookie", "consumer", "bot", "bearer", "basic", "x"}
	// nameWords are last words that say the value only names or describes a secret: where it
	// is (TLS_KEY_FILE, SECRET_NAME, tokenUrl), what it must be (password_policy,
	// passwordMinLength, TOKEN_TTL, keyAlgorithm), whether there is one (AUTH_ENABLED) or who
	// it is for (AUTH_USER, KEY_ID).
	nameWords = []string{"name", "file", "files", "path", "dir", "ref", "namespace", "url", "uri", "endpoint", "host", "port",
		"policy", "length", "len", "min", "max", "size", "count", "bits", "rounds", "ttl", "timeout", "expiry", "expires",
		"expiration", "lifetime", "age", "days", "hours", "seconds", "ratio", "period", "interval", "attempts", "retries",
		"format", "type", "mode", "enabled", "disabled", "required", "strategy", "algorithm", "alg", "encoding", "alias",
		"audience", "audiences", "issuer", "provider", "header", "prefix", "regex", "pattern", "hint", "field", "label",
		"version", "id", "user", "username", "login", "store", "usage", "usages", "rotation", "validation", "complexity",
		"strength", "reset", "changed", "set", "stdin", "role", "roles", "scope", "scopes", "fill", "tokens", "volume", "volumes", "mount", "mounts", "template", "templates"}
)

// switchWords are first words of a name whose value turns a secret on or off, or names one
// (ENABLE_DEBUG_ENDPOINT_AUTH, USE_TOKEN_FOR_CSR, a Helm chart's existingSecret).
var switchWords = []string{"existing", "enable", "enabled", "disable", "disabled", "use", "require", "required", "allow", "skip", "is", "has", "with", "without", "no"}

// secretName says whether a name says its value is secret, as an environment variable's name
// says it (DB_PASSWORD, apiToken, TLS_KEY, BASIC_AUTH): one of its words is a secret word, and
// no word says the value is only about one (nameWords, at the end; switchWords at the start;
// "public" anywhere: PUBLIC_KEY is not secret), and a password
// word is not followed by "key" or "secret" (passwordKey, ADMIN_PASSWORD_SECRET name a Secret's
// key and a Secret).
func secretName(name string) bool {
	return nameSays(nameSplit(name), false)
}

// keyName is secretName for a key that is not an environment variable's name: a mapping's key,
// an annotation's or a label's, a properties or ini file's. There "key", "auth" and "secret" are
// too common alone (a selector's key, nginx's auth-secret, which names a Secret): they say
// secret only beside a qualifier (api-key, client-secret, jwt.secret, secret-key). A key written
// as an environment variable (upper case: a ConfigMap read with envFrom, a .env file) is read as
// one.
func keyName(name string) bool {
	if strings.IndexFunc(name, unicode.IsLower) < 0 {
		return secretName(name)
	}
	return nameSays(nameSplit(name), true)
}

func nameSays(words []string, strict bool) bool {
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	// An id identifies (KEY_ID, tokenId), but Vault's secret_id is AppRole's password.
	secretID := last == "id" && len(words) > 1 && words[len(words)-2] == "secret"
	if slices.Contains(nameWords, last) && !secretID || slices.Contains(switchWords, words[0]) || slices.Contains(words, "public") {
		return false
	}
	for i, w := range words {
		switch {
		case passwordWord(w) && i+1 < len(words) && (words[i+1] == "key" || words[i+1] == "secret") && i+2 == len(words):
			// passwordKey: the key of a Secret that holds the password.
			return false
		case strict && slices.Contains(weakWords, w):
			// Plural too: example.com/secrets names a collection, api-keys holds some.
			if (i > 0 && slices.Contains(qualifiers, words[i-1])) || (w == "secret" && i+1 < len(words) && words[i+1] == "key") {
				return true
			}
		case slices.Contains(shortWords, w) || slices.Contains(strongWords, w):
			return true
		case slices.ContainsFunc(strongWords, func(s string) bool { return strings.Contains(w, s) }):
			return true
		case strings.HasSuffix(w, "pwd") || strings.HasSuffix(w, "passwd") || strings.HasSuffix(w, "pass") && !slices.Contains(notPass, w):
			return true
		case strings.HasSuffix(w, "key") && slices.ContainsFunc(keySuffixes, func(s string) bool { return strings.HasSuffix(w, s) }):
			return true
		}
	}
	return false
}

// notPass are words that end in "pass" and say nothing of a password.
var notPass = []string{"bypass", "compass", "encompass", "overpass", "underpass", "surpass", "trespass", "pass"}

func passwordWord(w string) bool {
	return strings.Contains(w, "passw") || w == "pass" || w == "pwd" || w == "pw" || strings.Contains(w, "passphrase")
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

// indirectRE is a value that is code getting the secret from elsewhere, as detect-secrets'
// indirect-reference filter has it: getenv('DB_PASSWORD'), os.environ["TOKEN"],
// config.get_password().
var indirectRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*(\(.*\)|\[.*\])[;,]?$`)

// nameValue says whether the value of a name that says secret is one: not empty or too short to
// be one, not a file path, a placeholder, a boolean, code that gets it (indirectRE), punctuation
// alone, or a reference to where the secret is (a Vault path such as database/creds/app, a
// Secret's namespace/name).
func nameValue(v string) bool {
	v = strings.TrimSpace(v)
	if len(v) < 3 || v == Redacted || filePath(v) || placeholder(v) || refLike(v) || indirectRE.MatchString(v) ||
		strings.IndexFunc(v, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return false
	}
	switch strings.ToLower(strings.TrimRight(v, ".,;")) {
	case "true", "false", "yes", "no", "on", "off", "null", "nil", "none", "enabled", "disabled", "required", "optional":
		return false
	}
	return true
}

// nameNumber says whether a number is a secret by its name: a password may be digits alone
// (MYSQL_ROOT_PASSWORD: 98127634, a PIN), a token or a key is not (Envoy's max_tokens: 100).
func nameNumber(name, v string) bool {
	if strings.Trim(v, "0123456789") != "" {
		return true
	}
	return slices.ContainsFunc(nameSplit(name), func(w string) bool { return passwordWord(w) || w == "pin" || w == "passcode" })
}

// refLike says whether v reads as a path of lower-case words: where a secret is kept (Vault's
// secret/data/app, database/creds/app), not the secret.
func refLike(v string) bool {
	if !strings.Contains(v, "/") || strings.HasPrefix(v, "/") || strings.HasSuffix(v, "/") {
		return false
	}
	return strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("/-_.", r))
	}) < 0
}

// placeholderWords are words that mark a value as one to be filled in (REPLACE_ME,
// your-api-key-here, <TODO>). "changeme" is not one of them: it is the default password of
// more than one product, and a manifest that has it runs with it.
var placeholderWords = []string{"replace", "replaceme", "your", "yours", "placeholder", "todo", "fixme", "tbd", "insert", "redacted"}

// placeholder says whether v stands for a value instead of being one: a variable or a
// template (${DB_PASSWORD}, $(DB_PASS), $DB_PASS, {{ .password }}, %(password)s), an
// angle-bracketed name (<password>), a mask (****, xxx, ...) or a marker (REPLACE_ME,
// YOUR_TOKEN_HERE). A scheme such as "Bearer " before it is read past.
func placeholder(s string) bool {
	s = strings.Trim(strings.TrimSpace(s), `"'`)
	for _, scheme := range []string{"Bearer ", "bearer ", "Basic ", "basic ", "Token ", "token "} {
		s = strings.TrimPrefix(s, scheme)
	}
	switch {
	case s == "":
		return true
	case strings.HasPrefix(s, "${") || strings.HasPrefix(s, "$(") || strings.HasPrefix(s, "{") || strings.Contains(s, "{{") || strings.HasPrefix(s, "%("):
		return true
	case strings.HasPrefix(s, "$") && envVar(s[1:]):
		return true
	case strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">"):
		return true
	case strings.Trim(s, "*xX.#-_•") == "":
		return true
	}
	return slices.ContainsFunc(nameSplit(s), func(w string) bool { return slices.Contains(placeholderWords, w) })
}

// envVar says whether s is a variable's name.
func envVar(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) < 0
}
