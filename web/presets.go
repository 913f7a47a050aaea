package web

import (
	"embed"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/i18n"
)

//go:embed presets/*.yaml
var presetFS embed.FS

// Preset is a ready-made manifest a person can load with one click.
type Preset struct {
	// ID is the file name without its order prefix and extension: "deployment".
	ID string
	// Title is what the menu shows, in English (TitleIn words it in the reader's language).
	Title    string
	Manifest string
}

// presetTitles are the presets' titles' ids in the catalogs (lab.preset.ID); a preset without
// one is titled by its id.
var presetTitles = map[string]string{
	"deployment":                "lab.preset.deployment",
	"pod":                       "lab.preset.pod",
	"job":                       "lab.preset.job",
	"cronjob":                   "lab.preset.cronjob",
	"statefulset":               "lab.preset.statefulset",
	"multi-document":            "lab.preset.multi-document",
	"istio-hello":               "lab.preset.istio-hello",
	"istio-hello-probes":        "lab.preset.istio-hello-probes",
	"istio-traffic-annotations": "lab.preset.istio-traffic-annotations",
	"istio-native-sidecar":      "lab.preset.istio-native-sidecar",
	"lab-batch":                 "lab.preset.lab-batch",
}

// TitleIn is the preset's title in l's language.
func (p Preset) TitleIn(l *i18n.Localizer) string {
	if id := presetTitles[p.ID]; id != "" {
		return l.T(id)
	}
	return p.ID
}

// Presets lists the presets in menu order (their files are numbered).
func Presets() []Preset {
	entries, _ := fs.ReadDir(presetFS, "presets")
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return presetOrder(a.Name()) - presetOrder(b.Name()) })
	out := make([]Preset, 0, len(entries))
	for _, e := range entries {
		b, _ := presetFS.ReadFile("presets/" + e.Name())
		_, id, _ := strings.Cut(strings.TrimSuffix(e.Name(), ".yaml"), "-")
		p := Preset{ID: id, Manifest: string(b)}
		p.Title = p.TitleIn(i18n.For(i18n.Default))
		out = append(out, p)
	}
	return out
}

func presetOrder(name string) int {
	n, _ := strconv.Atoi(strings.SplitN(name, "-", 2)[0])
	return n
}

// FindPreset returns the preset with the id.
func FindPreset(id string) (Preset, bool) {
	for _, p := range Presets() {
		if p.ID == id {
			return p, true
		}
	}
	return Preset{}, false
}
