package secrets

import (
	"strings"
	"testing"
)

// TestNameRules: each rule of names.go on a name (or value) that trips it and one that does not.
func TestNameRules(t *testing.T) {
	for _, c := range []struct {
		rule string
		fn   func(string) bool
		yes  []string
		no   []string
	}{
		{"secretName: strong words, fused too", secretName,
			[]string{"PGPASSWORD", "adminPasswd", "DB_CREDS", "dbCredentials", "SSH_PASSPHRASE", "Authorization", "SENDGRIDAPIKEY", "ldapTokenValue"},
			[]string{"PGHOST", "DB_HOST", "credentialName", "KEYCLOAK_REALM"}},
		{"secretName: short words alone, and fused endings", secretName,
			[]string{"DB_PASS", "LDAP_BIND_PW", "rootPwd", "MYSQLPWD", "requirepass", "TLS_KEY", "BASIC_AUTH"},
			[]string{"CACHE_BYPASS", "compass", "PWDEBUG", "monkey"}},
		{"secretName: last words about a secret", secretName,
			[]string{"DB_PASSWORD", "API_TOKEN"},
			[]string{"DB_PASSWORD_FILE", "password_policy", "passwordMinLength", "TOKEN_TTL", "SECRET_NAME", "AUTH_USER", "KEY_ID", "tokenUrl", "keyAlgorithm", "password-stdin"}},
		{"secretName: secret_id is a secret", secretName,
			[]string{"VAULT_SECRET_ID"},
			[]string{"VAULT_ROLE_ID"}},
		{"secretName: existing…, enable…, public…, password…Key name or switch a secret", secretName,
			[]string{"adminPassword", "secretKey", "AUTH_PASSWORD"},
			[]string{"existingSecret", "ENABLE_DEBUG_ENDPOINT_AUTH", "USE_TOKEN_FOR_CSR", "JWT_PUBLIC_KEY", "userPasswordKey", "ADMIN_PASSWORD_SECRET", "GF_AUTH_ANONYMOUS_ORG_ROLE", "max_tokens", "tokens_per_fill", "credential-volume"}},
		{"keyName: key, auth and secret need a qualifier in lower case", keyName,
			[]string{"api-key", "api-keys", "x-api-key", "oidc.client-secret", "jwt.secret", "secret-key", "db_password", "admin-password", "SECRET", "KEY"},
			[]string{"key", "auth-secret", "auth", "secret", "tls-key", "nginx.ingress.kubernetes.io/auth-secret", "example.com/secrets"}},
		{"nameNumber: digits are a password's value, not a token's", func(s string) bool { n, v, _ := strings.Cut(s, "="); return nameNumber(n, v) },
			[]string{"MYSQL_ROOT_PASSWORD=98127634", "DOOR_PIN=1234", "API_TOKEN=abc123"},
			[]string{"API_TOKEN=100", "bucket.token=3600"}},
		{"nameValue: values that are not secrets", nameValue,
			[]string{"hunter2", "changeme", "123456", "Str0ng!Passw0rd", "correct horse battery", "p@ss(word)", "f(x)y"},
			[]string{"", "ab", "true", "Off", "false.", "/run/secrets/db", "database/creds/app", "$(DB_PASS)", "${DB_PASSWORD}", "$DB_PASS", "{{ .Values.password }}", "<password>", "xxx", "******", "REPLACE_ME", "your-api-key-here", "Bearer ${TOKEN}", Redacted, "getenv('DB_PASSWORD')", `os.environ["TOKEN"]`, "---", "!!!"}},
	} {
		for _, s := range c.yes {
			if !c.fn(s) {
				t.Errorf("%s: %q not flagged", c.rule, s)
			}
		}
		for _, s := range c.no {
			if c.fn(s) {
				t.Errorf("%s: %q flagged", c.rule, s)
			}
		}
	}
}

// TestTextSecrets: each rule of text.go finds its secret (exactly its bytes) in a line that
// trips it, and nothing in a near miss.
func TestTextSecrets(t *testing.T) {
	for _, c := range []struct {
		rule, text, want string
		kind             Kind
	}{
		{"key=value line", "a=b\nspring.datasource.password=pw-1\n", "pw-1", EnvName},
		{"key = value line with spaces", "[db]\npassword = my pass phrase\n", "my pass phrase", EnvName},
		{"YAML key, quoted, with a comment", "db:\n  password: \"pw-2\" # prod\n", "pw-2", EnvName},
		{"an env entry's name then value", "- name: DB_PASSWORD\n  value: pw-3\n", "pw-3", EnvName},
		{"export", "export API_TOKEN='pw-4'\n", "pw-4", EnvName},
		{"an inline variable before a command", "PGPASSWORD=pw-5 psql -h db", "pw-5", EnvName},
		{"a connection string's pair", "Server=db;Password=pw-6;Encrypt=true", "pw-6", EnvName},
		{"a URL query's pair", "jdbc:mysql://db/x?user=u&password=pw-7&ssl=1", "pw-7", EnvName},
		{"a pair inside a pair", "kubectl create secret generic s --from-literal=password=pw-8", "pw-8", EnvName},
		{"a URL's password", "amqp://guest:pw-9@rabbit:5672/", "pw-9", URLCredential},
		{"--flag=value", "app --db-password=pw-10 --v=2", "pw-10", FlagValue},
		{"--flag value", "app --password pw-11 --v=2", "pw-11", FlagValue},
		{"--flag=\"quoted words\"", "sh -c app --password=\"pw 11b\" -v", "pw 11b", FlagValue},
		{"-flag value", "keytool -storepass pw-12 -list", "pw-12", FlagValue},
		{"mysql -pValue", "mysql -uroot -ppw-13 shop", "pw-13", FlagValue},
		{"mysql -p value", "mysql -u root -p pw-14", "pw-14", FlagValue},
		{"redis-cli -a", "redis-cli -h r -a pw-15 ping", "pw-15", FlagValue},
		{"curl -u user:password", "curl -u admin:pw-16 https://x", "pw-16", FlagValue},
		{"a command after a label", "# debug: mysql -uroot -ppw-17", "pw-17", FlagValue},
		{"a directive", "bind 0.0.0.0\nrequirepass pw-18\n", "pw-18", EnvName},
		{"a Python dict's quoted key", "    'PASSWORD': 'pw-18b',", "pw-18b", EnvName},
		{".netrc on one line", "machine h login u password pw-19", "pw-19", EnvName},
		{".netrc, password on its line", "machine h\n  password pw-20\n", "pw-20", EnvName},
		{".pgpass", "db:5432:app:app:pw-21\n", "pw-21", EnvName},
		{"a JSON key on one line", `{"db":{"user":"u","password":"pw-22"}}`, "pw-22", EnvName},
		{"PHP's define", `define( 'DB_PASSWORD', 'pw-23' );`, "pw-23", EnvName},
		{"an XML element", "<server><id>r</id><password>pw-24</password></server>", "pw-24", EnvName},
		{".npmrc", "//registry.npmjs.org/:_authToken=pw-25", "pw-25", EnvName},
	} {
		got := textSecrets(c.text)
		if len(got) != 1 || c.text[got[0].from:got[0].to] != c.want || got[0].kind != c.kind {
			t.Errorf("%s: %+v in %q, want %q (%s)", c.rule, got, c.text, c.want, c.kind)
		}
	}
	for _, near := range []string{
		"spring.datasource.password=${DB_PASSWORD}\n",
		"password_min_length = 12\n",
		"- name: DB_PASSWORD\n  valueFrom: {secretKeyRef: {name: db, key: password}}\n",
		"- name: LOG_LEVEL\n  value: debug\n",
		"PGPASSWORD=$(cat /run/pw) psql -h db",
		"Server=db;Integrated Security=true",
		"https://user@example.com/x",
		"app --password-file /run/pw",
		"app --password --verbose",
		"psql -h db -p 5432",
		"mysql -uroot -p",
		"mysql -uroot -p   (it asks)",
		"redis-cli -h r ping",
		"curl -u admin https://x",
		"cat /run/pw | docker login -u bot --password-stdin r.example.com",
		"protected-mode yes",
		"'PASSWORD': os.environ['DB_PASSWORD'],",
		"the password is in the vault",
		"machine h login u",
		"Optional BGP password for full peerings; only set on the default instance",
		"db:5432:app:app:${PGPASSWORD}",
		"12:30:45",
		`"channel_creds": [{"type": "insecure"}],`,
		`{"db":{"user":"u","passwordFile":"/run/pw"}}`,
		`{"volumes":["istio-token","istiod-ca-cert"]}`,
		`define( 'DB_PASSWORD', getenv('DB_PASSWORD') );`,
		"<server><id>r</id><password>${env.REPO_PASSWORD}</password></server>",
		"<password-policy>strict</password-policy>",
		"//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
	} {
		if got := textSecrets(near); len(got) != 0 {
			t.Errorf("%q: %+v", near, got)
		}
	}
}

// TestRedactSpans: a secret inside a value is cut out of the text in place where the text is
// the value (a literal block, a plain or quoted scalar without escapes), and the rest of the
// value is kept; where it is not (an escape, a folded block), the document is written again
// with the value's other bytes kept all the same.
func TestRedactSpans(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"in place", "kind: ConfigMap\ndata:\n  a: |\n    x=1\n    password=pw-1\n  b: 'mysql -ppw-2 db'  # kept\n",
			"kind: ConfigMap\ndata:\n  a: |\n    x=1\n    password=<redacted>\n  b: 'mysql -p<redacted> db'  # kept\n"},
		{"written again", "kind: ConfigMap\ndata:\n  a: \"x=\\u0031\\npassword=pw-3\"\n  b: >\n    mysql -ppw-4\n    db\n",
			"kind: ConfigMap\ndata:\n  a: \"x=1\\npassword=<redacted>\"\n  b: >\n    mysql -p<redacted> db\n"},
	} {
		got, err := Redact([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("%s: (err %v)\n%s\nwant\n%s", c.name, err, got, c.want)
		}
	}
}

// TestScanLinesByName: a document that does not parse is read by the name rules too, line by
// line, and redacted there; a near miss on such a line is not.
func TestScanLinesByName(t *testing.T) {
	in := "kind: ConfigMap\ndata:\n  db_password: pw-lines-1\n  password_policy: strict\n  cmd: mysql -uroot -ppw-lines-2\n  bad: [unclosed\n"
	fs, _ := Scan([]byte(in))
	if len(fs) != 2 || fs[0].Line != 3 || fs[0].Kind != EnvName || fs[1].Line != 5 || fs[1].Kind != FlagValue {
		t.Fatalf("findings: %+v", fs)
	}
	got, err := Redact([]byte(in))
	want := "kind: ConfigMap\ndata:\n  db_password: <redacted>\n  password_policy: strict\n  cmd: mysql -uroot -p<redacted>\n  bad: [unclosed\n"
	if err != nil || got != want {
		t.Errorf("Redact (err %v):\n%s", err, got)
	}
}
