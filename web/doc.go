// Package web is sidecarlab's pages: the templ components that draw them (layout.templ, a file
// per page, partials), the view models they render, and what only the drawing needs to know.
//
// The view models are shaped like the page: view.go holds the page, its form and the annotation
// panel; resultsview.go the results' tabs; compareview.go the compare page; share.go and head.go
// the share page and each page's head. Package handlers fills them; the components only display
// them, in the reader's language (T in i18n.go, M in i18n.templ; the page script's words in
// jswords.go).
//
// What belongs to the drawing is here too: the lifecycle diagram's geometry (diagram.go: handlers
// passes a Sequence, layOut places it), Istio's doc comments as text (fielddoc.go), regions a
// fragment may send as placeholders (kept.go), and the presets' manifests (presets/).
//
// web imports no engine: everything it shows arrives as a view model.
package web
