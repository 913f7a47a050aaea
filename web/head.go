package web

// Head is what a page says about itself in <head>: its <title> and the Open Graph tags a chat
// shows for a pasted link. Both are plain text (templ escapes them), bounded by the handlers.
type Head struct {
	// Title is the <title> and og:title.
	Title string
	// Description is og:description and the meta description; empty leaves them out.
	Description string
}
