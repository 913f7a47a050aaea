package diff

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ChangeKind says what happened to a field between two outputs.
type ChangeKind string

const (
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
	Changed ChangeKind = "changed"
	// Moved is a named list element (a container, a volume, an env var) that kept its content but
	// changed place; order matters for containers, since the kubelet starts them in order.
	Moved ChangeKind = "moved"
)

// Change is one field-level difference between two injected outputs.
type Change struct {
	// Doc is the 1-based document the change is in.
	Doc int `json:"doc"`
	// Path names the field the way a person reads it:
	// spec.template.spec.containers[istio-proxy].env[PROXY_CONFIG].value.
	Path string     `json:"path"`
	Kind ChangeKind `json:"kind"`
	Old  any        `json:"old,omitempty"`
	New  any        `json:"new,omitempty"`
	// From and To are the 0-based positions of a moved element.
	From int `json:"from,omitempty"`
	To   int `json:"to,omitempty"`
	// OldPath is set when an element moved to another list, e.g. istio-proxy from
	// containers to initContainers when it becomes a native sidecar; Path is where it is now.
	OldPath string `json:"oldPath,omitempty"`
	// Cause is the annotation step that made this change ("key=value" or "-key"), with a value
	// over 120 bytes cut and ended by "…" (the whole value is the row's step).
	Cause string `json:"cause,omitempty"`
	// OldBytes and NewBytes are set, and Old and New left out, when a value is too large or too
	// deeply nested to carry (see maxChangeValueBytes): its size in bytes of compact JSON.
	OldBytes int `json:"oldBytes,omitempty"`
	NewBytes int `json:"newBytes,omitempty"`
	// Flag is set for a change of one flag of an istio-iptables command line (the path ends in
	// args[FLAG]): the flag as written ("-o"), and FlagName its long name as Istio binds it
	// ("istio-local-outbound-ports-exclude"). Old and New are the flag's values.
	Flag     string `json:"flag,omitempty"`
	FlagName string `json:"flagName,omitempty"`
	// Serializer marks a change of row 0 that injection did not make: kube-inject's decode and
	// encode of the input alone makes it too (spec.strategy: {}, status: {}, resources: {}, …).
	Serializer bool `json:"serializer,omitempty"`
}

// Bounds on what a change carries. A value whose compact JSON is longer than
// maxChangeValueBytes, or that nests deeper than maxChangeValueDepth, is left out of the change
// and its size given instead: the whole of it is in the injected YAML. Without them one hostile
// field would be copied into every answer and the memo: an 18 KB request can nest 9,000 lists,
// which indented is a 162 MB JSON body.
const (
	maxChangeValueBytes = 16 << 10
	maxChangeValueDepth = 32
)

// Bound leaves out values beyond the bounds, recording their sizes.
func (c *Change) Bound() {
	if n, ok := valueFits(c.Old); !ok {
		c.Old, c.OldBytes = nil, n
	}
	if n, ok := valueFits(c.New); !ok {
		c.New, c.NewBytes = nil, n
	}
}

// valueFits measures a decoded JSON value: its compact JSON size (strings counted by their bytes
// plus quotes; escapes ignored), and whether it is within the bounds on size and depth.
func valueFits(v any) (int, bool) {
	n, deep := 0, false
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > maxChangeValueDepth {
			deep = true
		}
		switch x := v.(type) {
		case map[string]any:
			n += 2
			for k, e := range x {
				n += len(k) + 4
				walk(e, depth+1)
			}
		case []any:
			n += 2
			for _, e := range x {
				n++
				walk(e, depth+1)
			}
		case string:
			n += len(x) + 2
		case nil:
			n += 4
		default:
			n += len(fmt.Sprint(x))
		}
	}
	walk(v, 0)
	return n, n <= maxChangeValueBytes && !deep
}

// FormatValue renders a changed value on one line: scalars as YAML would show them, maps and
// lists as compact JSON.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" || strings.ContainsAny(x, "\n\"") || strings.TrimSpace(x) != x {
			b, _ := json.Marshal(x)
			return string(b)
		}
		return x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

// Field is the field the change is in: its path, or for a change of one istio-iptables flag
// (args[-o]) the args list the flag is in.
func (c Change) Field() string {
	if c.Flag == "" {
		return c.Path
	}
	return strings.TrimSuffix(c.Path, "["+c.Flag+"]")
}

// Line is the change on one line, as the CLI prints it: a sign (+ added, - removed, ~ changed,
// ↕ moved), the path and the values (FormatValue). A move, and a value left out for its size,
// are the catalogs' sentences (wording.diff.moved, moved-from, omitted), worded by t: the
// reader's localizer's T (package wording).
func (c Change) Line(t func(id string, kv ...any) string) string {
	oldV, newV := FormatValue(c.Old), FormatValue(c.New)
	if c.OldBytes > 0 {
		oldV = t("wording.diff.omitted", "Bytes", c.OldBytes)
	}
	if c.NewBytes > 0 {
		newV = t("wording.diff.omitted", "Bytes", c.NewBytes)
	}
	switch c.Kind {
	case Added:
		return "+ " + c.Path + ": " + newV
	case Removed:
		return "- " + c.Path + ": " + oldV
	case Moved:
		if c.OldPath != "" {
			return "↕ " + c.Path + ": " + t("wording.diff.moved-from", "OldPath", c.OldPath)
		}
		return "↕ " + c.Path + ": " + t("wording.diff.moved", "From", c.From+1, "To", c.To+1)
	}
	return "~ " + c.Path + ": " + oldV + " → " + newV
}
