package handlers

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"

	"github.com/a-h/templ"
)

// renderBuffers are render's buffers, used again: growing a new one to a page's size is most of
// what rendering allocates. One that grew beyond maxRenderBuffer (a large page) is let go, so
// the pool holds no more than that a buffer.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxRenderBuffer = 256 << 10

// render writes a component after it rendered completely, so a failure is still a clean error.
func render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxRenderBuffer {
			buf.Reset()
			renderBuffers.Put(buf)
		}
	}()
	if err := c.Render(r.Context(), buf); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// itoa is n in decimal.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
