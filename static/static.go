// Package static embeds the playground's assets: the stylesheet, the icon and the built editor
// bundle (dist/app.js, committed; `make generate` rebuilds it from src/ with esbuild).
package static

import (
	"embed"
	"net/http"
)

//go:embed app.css favicon.svg theme.js dist/app.js
var files embed.FS

// Handler serves the assets. They change only with the binary, so clients may cache them briefly
// and revalidate.
func Handler() http.Handler {
	fs := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		fs.ServeHTTP(w, r)
	})
}
