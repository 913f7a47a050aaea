package yamldoc

import "strings"

// MaxEcho bounds a value a message or a finding echoes back.
const MaxEcho = 200

// Clip is s as a message may echo it: at most MaxEcho bytes of valid UTF-8.
func Clip(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) > MaxEcho {
		s = strings.ToValidUTF8(s[:MaxEcho], "") + "…"
	}
	return s
}
