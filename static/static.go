// Package static embeds the playground's assets: the stylesheet, the icon, the theme script
// that runs before the page paints (theme.js) and the built editor bundle (dist/app.js,
// committed; `make generate` rebuilds it from src/ with esbuild).
package static

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed app.css favicon.svg theme.js dist/app.js
var files embed.FS

// Handler serves the assets, and only files: a directory is not listed (404). They change only
// with the binary, so clients may cache them briefly and revalidate.
func Handler() http.Handler {
	srv := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if st, err := fs.Stat(files, name); err != nil || st.IsDir() || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		srv.ServeHTTP(w, r)
	})
}
