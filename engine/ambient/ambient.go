// Package ambient holds what Istio's ambient mode does with a workload that sidecarlab shows. In
// ambient mode a pod gets no sidecar: the CNI node agent redirects its traffic to the node's
// ztunnel (L4), and a waypoint proxy, when the workload uses one, adds L7. The package holds
// which pod annotations ambient honours (this file and annotations.go: a table with one row per
// annotation of the catalog, catalog.DefaultCatalog, each with a verdict, the reason, where
// ambient meets the need instead, and links to the Istio code or docs that show it — Istio's
// catalog has no mode field, so the table is sidecarlab's knowledge, checked against the code of
// the pinned Istio); which pods join ambient, with Istio's own enablement selectors
// (enrolment.go); and the comparison of a workload with a sidecar and in ambient (compare.go,
// on the engine's two sides).
//
// Like the engine it knows no language: verdicts, places and reasons are ids that the ambient
// message catalogs (i18n/locales/ambient.LANG.toml) word.
package ambient

import (
	"slices"
	"strings"
)

// Verdict is what ambient does with an annotation on a pod.
type Verdict string

const (
	// Honoured: a part of ambient (the CNI node agent, istiod) or a tool that reads every
	// resource reads it on an ambient pod.
	Honoured Verdict = "honoured"
	// Ignored: nothing reads it on an ambient pod, and ambient has no other place for it —
	// mostly it configures the injected proxy or its init container, and there is none.
	Ignored Verdict = "ignored"
	// Elsewhere: nothing reads it on an ambient pod, but the need it serves is met in another
	// place, named by the row's Places.
	Elsewhere Verdict = "elsewhere"
)

// MessageID is the id of the verdict's words in the ambient catalogs.
func (v Verdict) MessageID() string { return "ambient.verdict." + string(v) }

// Place is where ambient meets a need that an annotation serves on a sidecar pod.
type Place string

const (
	// PlaceZtunnel: ztunnel's install settings (the ztunnel chart's values), for every pod of
	// the node.
	PlaceZtunnel Place = "ztunnel"
	// PlaceWaypoint: the waypoint's Gateway, where the same annotation configures the waypoint.
	PlaceWaypoint Place = "waypoint"
	// PlaceWaypointResources: global.waypoint.resources, or the Gateway's parametersRef.
	PlaceWaypointResources Place = "waypoint-resources"
	// PlaceDataplaneMode: the istio.io/dataplane-mode label on the pod or its namespace.
	PlaceDataplaneMode Place = "dataplane-mode-label"
	// PlaceRerouteVirtualInterfaces: the istio.io/reroute-virtual-interfaces annotation.
	PlaceRerouteVirtualInterfaces Place = "reroute-virtual-interfaces"
)

// MessageID is the id of the place's words in the ambient catalogs.
func (p Place) MessageID() string { return "ambient.place." + string(p) }

// Reason says why a row has its verdict, as an id the ambient catalogs word.
type Reason string

// MessageID is the id of the reason's words in the ambient catalogs.
func (r Reason) MessageID() string { return "ambient.reason." + string(r) }

// Source is a link to what shows a row's verdict: Istio's code at the commit the table was
// checked against, Istio's docs, or a maintainer's word in Istio's issues.
type Source struct {
	URL string `json:"url"`
	// shows is text on the linked line of a link into Istio's code: a test finds it there in
	// the pinned module, so that a link cannot drift from what it is cited for.
	shows string
}

// Row is what ambient does with one pod annotation of Istio's catalog.
type Row struct {
	Annotation string  `json:"annotation"`
	Verdict    Verdict `json:"verdict"`
	Reason     Reason  `json:"reason"`
	// Places are where ambient meets the need instead; set only when the verdict is Elsewhere.
	Places  []Place  `json:"places,omitempty"`
	Sources []Source `json:"sources"`
}

// Rows are the rows of the annotations named, in the order given, each once: a state's steps
// give the names, and the page lists what ambient does with each. A name the table does not
// hold (an annotation that is not Istio's) has no row and is left out. The rows share their
// slices with the table: callers must not modify them.
func Rows(names []string) []Row {
	out := make([]Row, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		if r, ok := lookup(table, name); ok {
			out = append(out, r)
		}
	}
	return out
}

// lookup finds the row of an annotation in rows, which are sorted by name.
func lookup(rows []Row, name string) (Row, bool) {
	i, ok := slices.BinarySearchFunc(rows, name, func(r Row, name string) int { return strings.Compare(r.Annotation, name) })
	if !ok {
		return Row{}, false
	}
	return rows[i], true
}
