package web

import (
	"strings"

	"github.com/a-h/templ"
)

// valueScrollLines and valueScrollChars estimate when a value outgrows its box in the field diff
// (.changes td.val code: at most 7.5em, about five lines, then it scrolls).
const (
	valueScrollLines = 5
	valueScrollChars = 240
)

// scrollable makes a value that will scroll reachable by keyboard (WCAG 2.1.1; axe's
// scrollable-region-focusable): in the tab order, named by the field it belongs to. Short values
// get nothing, so the tab order is not filled with stops that do not scroll.
func scrollable(value, path string) templ.Attributes {
	if strings.Count(value, "\n") < valueScrollLines-1 && len(value) <= valueScrollChars {
		return nil
	}
	return templ.Attributes{"tabindex": "0", "role": "region", "aria-label": "Value of " + path}
}
