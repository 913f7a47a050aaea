//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// brokenRuns is a function of a list of elements that answers, for each line break that falls
// inside a run of ASCII letters and digits ("holdApplicationUn|tilProxyStarts", "637|9"), where it
// fell — unless that run alone is wider than the box it is laid out in, when breaking it is the
// only way to keep it in the box. Each character's box comes from a Range over it; a break is a
// character that starts a line below the one before it. Elements not shown are skipped.
const brokenRuns = `((els) => {
	const word = /[A-Za-z0-9]/;
	const out = [];
	for (const el of els) {
		if (!(el.offsetWidth || el.offsetHeight || el.getClientRects().length)) continue;
		const chars = [];
		const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
		for (let n; (n = walk.nextNode()); ) {
			for (let i = 0; i < n.length; i++) {
				const r = document.createRange();
				r.setStart(n, i);
				r.setEnd(n, i + 1);
				const rs = r.getClientRects();
				// A collapsed space has no box; it is no character of a run either.
				chars.push(rs.length ? {c: n.data[i], top: rs[0].top, h: rs[0].height, w: rs[0].width} : {c: " ", top: null, h: 0, w: 0});
			}
		}
		let box = el;
		while (getComputedStyle(box).display === "inline") box = box.parentElement;
		const st = getComputedStyle(box);
		const width = box.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
		for (let i = 1; i < chars.length; i++) {
			const a = chars[i - 1], b = chars[i];
			if (a.top === null || b.top === null || !word.test(a.c) || !word.test(b.c) || b.top - a.top < a.h / 2) continue;
			let s = i - 1, e = i;
			while (s > 0 && chars[s - 1].top !== null && word.test(chars[s - 1].c)) s--;
			while (e + 1 < chars.length && chars[e + 1].top !== null && word.test(chars[e + 1].c)) e++;
			const run = chars.slice(s, e + 1);
			const runWidth = run.reduce((sum, c) => sum + c.w, 0);
			if (runWidth <= width + 0.5) {
				out.push(run.slice(0, i - s).map((c) => c.c).join("") + "|" + run.slice(i - s).map((c) => c.c).join("") +
					" (" + Math.round(runWidth) + " px in a box of " + Math.round(width) + " px, in «" + el.textContent.replace(/\s+/g, " ").trim().slice(0, 80) + "»)");
			}
		}
	}
	return out;
})`

// titleBreaks is brokenRuns over every step title on the page.
func titleBreaks(ctx context.Context, t *testing.T, where string) []string {
	t.Helper()
	return pageValue[[]string](ctx, t, "the step titles' line breaks on "+where,
		`const t = document.querySelectorAll(".step-t"); if (!t.length) return {ok: false}; return {ok: true, v: `+brokenRuns+`([...t])};`)
}

// TestStepTitlesBreakAtJoints: a step title ("proxy.istio.io/config=…holdApplicationUntilProxyStarts:
// true", "traffic.sidecar.istio.io/excludeOutboundPorts=3306,6379") wraps where a person would
// break it — after "/", ".", "=", ",", ":" and at spaces — never inside a name or a number that
// fits its box on a line of its own: on the lab's steps 4 (hold) and 5 (exclude ports) at
// 1440×900 and on a 390×844 phone (the field diff and the timeline), and in presenter mode at
// 1920×1080. The measure is first shown to catch such a break (a title laid out with
// overflow-wrap: anywhere in a narrow box) and to let through what cannot be helped (a name wider
// than its box) and what is no break inside a word (short words broken at their spaces).
func TestStepTitlesBreakAtJoints(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, checkedScreens[0].emulate(), chromedp.Navigate(baseURL+"/"), shown(chip(5)))
	hrefs := map[int]string{4: labHref(ctx, t, 4), 5: labHref(ctx, t, 5)}

	// The measure itself, on titles of its own in a box 150 px wide.
	probe := func(style, title string) []string {
		return pageValue[[]string](ctx, t, "the probe's line breaks", `const d = document.createElement("div");
			d.style.cssText = "width: 150px; font: 14px monospace";
			const s = document.createElement("span");
			s.style.cssText = `+jsString(style)+`;
			s.textContent = `+jsString(title)+`;
			d.append(s);
			document.body.append(d);
			const v = `+brokenRuns+`([s]);
			d.remove();
			return {ok: true, v};`)
	}
	if got := probe("overflow-wrap: anywhere", "traffic.sidecar.istio.io/excludeOutboundPorts=3306,6379"); len(got) == 0 {
		t.Fatalf("a title broken anywhere in a 150 px box: no break inside a word found")
	}
	if got := probe("overflow-wrap: anywhere", "a b c d e f g h i j k l m n o p q r s t u v w x y z 3306 6379"); len(got) != 0 {
		t.Fatalf("a title of short words broken at its spaces: breaks inside words reported: %v", got)
	}
	if got := probe("overflow-wrap: anywhere", strings.Repeat("x", 60)); len(got) != 0 {
		t.Fatalf("a name wider than its box, which must break: reported as %v", got)
	}

	cases := []struct {
		screen  screen
		present bool
	}{
		{checkedScreens[0], false},
		{checkedScreens[2], false},
		{checkedScreens[1], true},
	}
	for _, c := range cases {
		for _, n := range []int{4, 5} {
			href, name := hrefs[n], fmt.Sprintf("step-%d-%s", n, c.screen.name)
			if c.present {
				href, name = href+"&present=1", name+"-present"
			}
			do(ctx, t, c.screen.emulate(), chromedp.Navigate(baseURL+href), shown(fmt.Sprintf(`[data-testid="step-%d"]`, n-1)))
			if broken := titleBreaks(ctx, t, name); len(broken) > 0 {
				t.Errorf("lab step %d at %s: step titles break inside a word that fits its box:\n  %s", n, name, strings.Join(broken, "\n  "))
			}
			if over := sidewaysBy(ctx, t); over > 0 {
				t.Errorf("lab step %d at %s: the page scrolls sideways by %d px", n, name, over)
			}
			sh.take(ctx, name)
			if c.present {
				continue
			}
			// The timeline lists every step's title, each beside its count of changes.
			do(ctx, t, chromedp.Navigate(baseURL+href+"&tab=timeline"), shown(fmt.Sprintf(`[data-testid="timeline-%d"]`, n-1)))
			if broken := titleBreaks(ctx, t, name+" (timeline)"); len(broken) > 0 {
				t.Errorf("lab step %d at %s, the timeline: step titles break inside a word that fits its box:\n  %s", n, name, strings.Join(broken, "\n  "))
			}
			sh.take(ctx, name+"-timeline")
		}
	}
}
