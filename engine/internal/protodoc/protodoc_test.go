package protodoc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const proto = `syntax = "proto3";

message Other {
  // Not this one.
  string a = 1;
}

message ProxyConfig {
  // Plain text over
  // two lines.
  //
  // The second paragraph is left out.
  string plain = 1;

  // Text, then a block:
  // ` + "```yaml" + `
  // matcher:
  //   inclusionRegexps:
  //
  //     - .*outlier.*
  // ` + "```" + `
  // and text after it.
  //
  // Left out.
  Matcher fenced = 2;

  // $hide_from_docs
  string hidden = 3;

  message Nested {
    // Not a field of ProxyConfig.
    string inner = 1;
  }

  oneof choice {
    // In a oneof.
    string picked = 4;
  }

  // ` + "```" + `
  // never closed
  string open = 5;
}
`

// TestFieldDocs: the first paragraph of each field's comment, joined with spaces; a fenced block
// keeps its lines, indentation and blank lines, on lines of its own; hidden fields are marked;
// nested messages' fields and other messages are not read.
func TestFieldDocs(t *testing.T) {
	got, err := FieldDocs([]byte(proto), "ProxyConfig")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"plain":  "Plain text over two lines.",
		"fenced": "Text, then a block:\n```yaml\nmatcher:\n  inclusionRegexps:\n\n    - .*outlier.*\n```\nand text after it.",
		"hidden": "$hide_from_docs",
		"picked": "In a oneof.",
		"open":   "```\nnever closed",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("FieldDocs (-want +got):\n%s", d)
	}
	if _, err := FieldDocs([]byte(proto), "Missing"); err == nil {
		t.Error("FieldDocs of a message not in the file: no error")
	}
}
