package secrets

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// Settings are what a state holds beside its manifest and steps, as ScanSettings reads them
// (engine.Settings's texts): the install options' --set options and overlay, the texts of a
// mesh's own configuration, and the labels of the Cluster view's namespace.
type Settings struct {
	Set     []string
	Overlay string
	// Mesh are the texts of a mesh's own configuration, each with the name its JSON gives it
	// (injectorConfig, values, meshConfig, webhooks).
	Mesh   []MeshPart
	Labels map[string]string
}

// MeshPart is one text of a mesh's own configuration and the name its JSON gives it.
type MeshPart struct {
	Name, Text string
}

// ScanSettings looks at what a state holds beside its manifest and steps: each install option
// (--set path=value: its value as a manifest's value, and by its path's last name, as a
// mapping's key), the install overlay (an IstioOperator document, as a manifest), a mesh's own
// configuration (each part as a manifest: its keys, proxyMetadata, the files and templates its
// values hold), and the labels of the Cluster view's namespace (values and keys, for
// credentials of known formats, random-looking values and keys that say secret). It returns at most MaxFindings findings.
func ScanSettings(s Settings) []Finding {
	var out []Finding
	for i, set := range s.Set {
		if f, ok := setFinding(set); ok {
			f.Line = i + 1
			out = append(out, f)
		}
	}
	if strings.TrimSpace(s.Overlay) != "" {
		fs, _ := Scan([]byte(s.Overlay))
		for _, f := range fs {
			f.Doc, f.Setting = 0, SettingInstallOverlay
			out = append(out, f)
		}
	}
	for _, part := range s.Mesh {
		if strings.TrimSpace(part.Text) == "" {
			continue
		}
		// Values are JSON, the rest YAML: both read as a manifest's text.
		fs, _ := Scan([]byte(part.Text))
		for _, f := range fs {
			f.Doc, f.Setting = 0, SettingMesh
			if f.Path == "" {
				f.Path = part.Name
			} else {
				f.Path = part.Name + ": " + f.Path
			}
			out = append(out, f)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		if f, ok := labelFinding(k, s.Labels[k]); ok {
			out = append(out, f)
		}
	}
	return out[:min(len(out), MaxFindings)]
}

// setFinding is the finding of one --set option, if it holds a secret.
func setFinding(set string) (Finding, bool) {
	path, v, ok := strings.Cut(strings.TrimSpace(set), "=")
	if !ok || v == "" || v == Redacted {
		return Finding{}, false
	}
	f := Finding{Setting: SettingInstallSet, Path: yamldoc.Clip(path), Excerpt: yamldoc.Clip(path) + "=" + Redacted}
	last := path[strings.LastIndexByte(path, '.')+1:]
	if kind, ok := valueKind(v); ok {
		f.Kind = kind
	} else if keyName(last) && nameValue(v) {
		f.Kind = EnvName
	} else if sp := textSecrets(v); len(sp) > 0 {
		f.Kind = sp[0].kind
	} else if ls := leaks(v); len(ls) > 0 {
		f.Kind, f.Rule = KnownFormat, ls[0].Rule
	} else {
		return Finding{}, false
	}
	return f, true
}

// labelFinding is the finding of one namespace label, if its value or key holds a secret. A
// label's value is at most 63 letters, digits, "-", "_" and ".": no URL or flag fits.
func labelFinding(k, v string) (Finding, bool) {
	f := Finding{Setting: SettingNamespaceLabel, Path: yamldoc.Clip(k), Excerpt: yamldoc.Clip(k) + ": " + Redacted}
	if ls := leaks(k + ": " + v); len(ls) > 0 {
		f.Kind, f.Rule = KnownFormat, ls[0].Rule
		if strings.Contains(k, ls[0].Secret) {
			f.Path, f.Excerpt = "", Redacted+": …"
		}
		return f, true
	}
	if highEntropy(v) {
		f.Kind = HighEntropy
		return f, true
	}
	if keyName(k) && nameValue(v) {
		f.Kind = EnvName
		return f, true
	}
	return Finding{}, false
}

// RedactSettings is s with every value ScanSettings flags replaced: a --set option's value by
// Redacted, the overlay as Redact redacts a manifest, a label's value by "redacted" (a label's
// value cannot hold Redacted's "<" and ">") and a label whose key holds a credential renamed
// "redacted-N".
func RedactSettings(s Settings) (Settings, error) {
	set := slices.Clone(s.Set)
	for i, o := range set {
		if _, ok := setFinding(o); ok {
			path, _, _ := strings.Cut(strings.TrimSpace(o), "=")
			set[i] = path + "=" + Redacted
		}
	}
	s.Set = set
	if strings.TrimSpace(s.Overlay) != "" {
		red, err := Redact([]byte(s.Overlay))
		if err != nil {
			return s, err
		}
		s.Overlay = red
	}
	mesh := slices.Clone(s.Mesh)
	for i, part := range mesh {
		if fs, _ := Scan([]byte(part.Text)); len(fs) == 0 {
			continue
		}
		red, err := Redact([]byte(part.Text))
		if err != nil {
			return s, err
		}
		mesh[i].Text = red
	}
	s.Mesh = mesh
	if len(s.Labels) > 0 {
		labels := make(map[string]string, len(s.Labels))
		n := 0
		for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
			v := s.Labels[k]
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
		s.Labels = labels
	}
	return s, nil
}
