package web

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed presets/*.yaml
var presetFS embed.FS

// Preset is a ready-made manifest a person can load with one click.
type Preset struct {
	// ID is the file name without its order prefix and extension: "deployment".
	ID string
	// Title is what the menu shows.
	Title    string
	Manifest string
}

var presetTitles = map[string]string{
	"deployment":     "Deployment (bookinfo productpage)",
	"pod":            "Pod (curl)",
	"job":            "Job (a database migration)",
	"cronjob":        "CronJob (cleanup every 30 min)",
	"statefulset":    "StatefulSet (redis)",
	"multi-document": "Several documents (Service, Deployment, ConfigMap)",
}

// Presets lists the presets in menu order (their files are numbered).
func Presets() []Preset {
	entries, _ := fs.ReadDir(presetFS, "presets")
	out := make([]Preset, 0, len(entries))
	for _, e := range entries {
		b, _ := presetFS.ReadFile("presets/" + e.Name())
		_, id, _ := strings.Cut(strings.TrimSuffix(e.Name(), ".yaml"), "-")
		title := presetTitles[id]
		if title == "" {
			title = id
		}
		out = append(out, Preset{ID: id, Title: title, Manifest: string(b)})
	}
	return out
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
