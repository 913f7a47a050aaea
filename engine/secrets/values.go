package secrets

import (
	"math"
	"regexp"
	"strings"
)

// filePath says whether a value is an absolute file path: it says where a secret is
// (ISTIO_META_TLS_CLIENT_KEY: /etc/identity/client-key.pem, in Istio's own test data), not what.
func filePath(v string) bool {
	return strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \t\n")
}

// valueKind classifies any other string value: a private key, a registry credential, or a
// random-looking token.
func valueKind(v string) (Kind, bool) {
	switch {
	case isPrivateKey(v):
		return PrivateKey, true
	case isRegistryCredential(v):
		return RegistryCredential, true
	case len(urlPasswords(v)) > 0:
		return URLCredential, true
	case len(flagValues(v)) > 0:
		return FlagValue, true
	case highEntropy(v):
		return HighEntropy, true
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
	return ok && envVar(strings.NewReplacer("-", "_", ".", "_").Replace(name)) && secretName(name)
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
