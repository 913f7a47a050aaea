package engine

import "strings"

// Resources are a CPU and a memory quantity as Kubernetes writes them ("100m", "128Mi"), either
// empty (not set). Their text (String) is the one every edge shows and the batch table's
// downloads carry; ParseResources reads it back.
type Resources struct{ CPU, Memory string }

// String is "cpu=100m memory=128Mi", a quantity not set left out: "" for neither.
func (r Resources) String() string {
	var parts []string
	if r.CPU != "" {
		parts = append(parts, "cpu="+r.CPU)
	}
	if r.Memory != "" {
		parts = append(parts, "memory="+r.Memory)
	}
	return strings.Join(parts, " ")
}

// ParseResources reads String's text back ("cpu=… memory=…", either may be missing).
func ParseResources(s string) Resources {
	var r Resources
	for _, kv := range strings.Fields(s) {
		switch k, q, _ := strings.Cut(kv, "="); k {
		case "cpu":
			r.CPU = q
		case "memory":
			r.Memory = q
		}
	}
	return r
}
