package engine

import "github.com/sidecarlab/sidecarlab/engine/yamldoc"

// Location is where a finding points in the input manifest, for tools that mark a line (a CI
// annotation, an editor's gutter): lines and columns in the whole input, not the document.
type Location = yamldoc.Location

// Locate finds each finding of docs in the input: one Location per finding, in order. Each
// document with a finding is parsed once. A finding whose document is not among docs points at
// the input's first line.
func Locate(docs []Document, fs []Finding) []Location {
	out := make([]Location, len(fs))
	seen := map[int]*yamldoc.Text{}
	for i, f := range fs {
		if f.Doc < 1 || f.Doc > len(docs) {
			out[i] = Location{Line: 1, Column: 1}
			continue
		}
		d := docs[f.Doc-1]
		p, ok := seen[f.Doc]
		if !ok {
			p = yamldoc.ParseText(d.Input)
			seen[f.Doc] = p
		}
		l := p.Find(f.Path)
		l.Line += d.Line - 1
		out[i] = l
	}
	return out
}
