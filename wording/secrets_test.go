package wording

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/secrets"
)

// allSecretKinds is a manifest with a finding of every kind the scanner has.
const allSecretKinds = `apiVersion: v1
kind: Secret
metadata:
  name: s
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: e30=
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    example.com/token: Zq8vR2mXk4TbW9yLp3NcA7hJ
    example.com/aws: AKIAZ52HGXYRN4WBTEST
spec:
  containers:
  - name: app
    image: app
    args: ["--password=letmein"] # api_key: Zq8vR2mXk4TbW9yLp3NcA7hJ
    env:
    - name: DB_PASSWORD
      value: hunter2
    - name: DB_URL
      value: postgres://admin:s3cret@db/x
    - name: COPY
      value: hunter2
    - name: TLS
      value: "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----"
---
apiVersion: v1
kind: Secret
metadata:
  name: t
stringData:
  user: admin
`

// TestSecretWords: every kind the scanner reports is worded, and there are words for no other.
func TestSecretWords(t *testing.T) {
	fs, _ := secrets.Scan([]byte(allSecretKinds))
	emitted := map[secrets.Kind]bool{}
	for _, f := range fs {
		emitted[f.Kind] = true
		if line := English.SecretLine(f); !strings.Contains(line, English.SecretKind(f)) || English.SecretKind(f) == "" || strings.Contains(line, "hunter2") {
			t.Errorf("%+v: line %q", f, line)
		}
	}
	if got, want := slices.Sorted(maps.Keys(emitted)), slices.Sorted(slices.Values(secrets.Kinds)); !slices.Equal(got, want) {
		t.Errorf("the sample emits %v, the engine lists %v", got, want)
	}
	if got, want := slices.Sorted(maps.Keys(secretKinds)), slices.Sorted(slices.Values(secrets.Kinds)); !slices.Equal(got, want) {
		t.Errorf("words for %v, the engine emits %v", got, want)
	}
	if js := English.SecretFindings(fs); len(js) != len(fs) || js[0].Message != English.SecretKind(fs[0]) {
		t.Errorf("SecretFindings: %+v", js)
	}
}

func TestSecretsCounts(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{English.SecretsFound(1), "holds secrets (1 finding)"},
		{English.SecretsFound(1200), "holds secrets (1,200 findings)"},
		{English.SecretsInLink(3), "hold secrets (3 findings)"},
		{English.SecretWhere(secrets.Finding{Doc: 2, Line: 9}), "document 2, line 9"},
		{English.SecretWhere(secrets.Finding{Step: 3}), "annotation step 3"},
		{English.SecretWhere(secrets.Finding{Setting: secrets.SettingInstallSet, Line: 2}), "install option 2"},
		{English.SecretWhere(secrets.Finding{Setting: secrets.SettingInstallOverlay, Line: 4}), "install overlay, line 4"},
		{English.SecretWhere(secrets.Finding{Setting: secrets.SettingNamespaceLabel, Path: "team"}), "a label of the namespace"},
		{English.SecretKind(secrets.Finding{Kind: secrets.KnownFormat, Rule: "aws-access-token"}), "(its rule aws-access-token)"},
		{English.SecretsMore(100, 100), ""},
		{English.SecretsMore(100, 103), "and 3 more"},
	} {
		if !strings.Contains(c.got, c.want) || (c.want == "" && c.got != "") {
			t.Errorf("%q lacks %q", c.got, c.want)
		}
	}
}
