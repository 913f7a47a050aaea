// Package handlers is sidecarlab's HTTP surface: the routes (routes.go holds the whole URL
// surface, on a chi router), decoding requests, and choosing what to show.
//
// A request is read into a state and a view: a permalink's query (viewquery.go, state.go), a
// posted form and its action (form.go), a share or an API call. The engine runs the state; the
// handlers shape its answer into package web's view models (page.go, results.go for the results,
// panel.go, lifecycle.go, cluster.go, …) and render them, or answer JSON (api.go). Errors become
// a page or JSON with a status through one adapter (errors.go).
//
// The drawing is package web's: handlers passes it data, never geometry or markup.
package handlers
