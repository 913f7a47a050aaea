package web

import (
	"context"
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
func scrollable(ctx context.Context, value, path string) templ.Attributes {
	if strings.Count(value, "\n") < valueScrollLines-1 && len(value) <= valueScrollChars {
		return nil
	}
	return templ.Attributes{"tabindex": "0", "role": "region", "aria-label": T(ctx, "results.a11y.value-of", "Path", path)}
}

// pathSegments splits a field path where a line may break: after each "." and before each "["
// (spec.template.spec.containers[istio-proxy].lifecycle → "spec.", "template.", "spec.",
// "containers", "[istio-proxy].", "lifecycle"). The page keeps each segment whole, so a long path
// wraps at its joints, never inside a name like istio-proxy.
func pathSegments(path string) []string {
	var segs []string
	start := 0
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '.' && i+1 < len(path):
			segs = append(segs, path[start:i+1])
			start = i + 1
		case path[i] == '[' && i > start:
			segs = append(segs, path[start:i])
			start = i
		}
	}
	return append(segs, path[start:])
}

// titleSegments splits a step's title where a line may break: after "/", ".", "=", ",", ":"
// ("traffic.sidecar.istio.io/excludeOutboundPorts=3306,6379" → "traffic.", "sidecar.", "istio.",
// "io/", "excludeOutboundPorts=", "3306,", "6379"), as a person reads it. The browser breaks
// between words at spaces already, so a joint before a space is left to the space, and a "." between
// digits ("0.5") is no joint. The page puts a <wbr> between the segments; the title's own CSS breaks
// inside a segment only when the segment alone is wider than its box.
func titleSegments(title string) []string {
	var segs []string
	start := 0
	for i := 0; i+1 < len(title); i++ {
		next := title[i+1]
		switch title[i] {
		case '.':
			if i > 0 && isDigit(title[i-1]) && isDigit(next) {
				continue
			}
		case '/', '=', ',', ':':
		default:
			continue
		}
		if next == ' ' || next == '\n' || next == '\t' {
			continue
		}
		segs = append(segs, title[start:i+1])
		start = i + 1
	}
	return append(segs, title[start:])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
