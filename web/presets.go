package web

import (
	"embed"
	"io/fs"
	"slices"
	"strconv"
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

	"istio-hello":               "Istio's golden input: hello (Deployment)",
	"istio-hello-probes":        "Istio's golden input: hello-probes (probe rewriting)",
	"istio-traffic-annotations": "Istio's golden input: traffic-annotations",
	"istio-native-sidecar":      "Istio's golden input: native-sidecar (a Pod with its own sidecar)",
	"lab-batch":                 "The lab's batch: eight workloads",
}

// Presets lists the presets in menu order (their files are numbered).
func Presets() []Preset {
	entries, _ := fs.ReadDir(presetFS, "presets")
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return presetOrder(a.Name()) - presetOrder(b.Name()) })
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
