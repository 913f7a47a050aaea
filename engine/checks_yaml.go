package engine

import (
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// checkDuplicateKeys: a key written twice in one mapping of the document. Kubernetes' reader,
// and so Istio's, reads the YAML into a map: the last value wins and the others are dropped
// without a word, so the manifest does not do what its first lines say.
func checkDuplicateKeys(c *docContext) []Finding {
	var fs []Finding
	for _, d := range yamldoc.DuplicateKeys(c.d.Input) {
		lines := make([]string, len(d.Lines))
		for i, l := range d.Lines {
			lines[i] = strconv.Itoa(c.d.Line + l - 1)
		}
		params := map[string]string{"key": d.Path, "lines": strings.Join(lines, ", ")}
		if d.Scalar {
			params["value"] = d.Kept
		}
		fs = append(fs, Finding{Path: d.Path, Params: params})
	}
	return fs
}
