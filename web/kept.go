package web

import (
	"bytes"
	"context"
	"hash/fnv"
	"io"
	"strconv"

	"github.com/a-h/templ"
)

// Kept is the inside of a region a page keeps across its script's requests (a diff-tab step, the
// lab strip, the settings' inputs) as HTML, with a key naming its content (a hash of the HTML). A
// fragment sends a region whose key the page holds as an empty placeholder (data-keep) that the
// script fills with its own copy: only identical content has the same key.
type Kept struct{ Key, HTML string }

// MaxKey is the longest key a Kept has: a 64-bit hash in base 36.
const MaxKey = 13

// Size is the bytes the body holds, for a memo that keeps it.
func (k Kept) Size() int64 { return int64(len(k.Key) + len(k.HTML)) }

// renderKept renders c, the inside of a kept region, and names it.
func renderKept(ctx context.Context, c templ.Component) (Kept, error) {
	var body bytes.Buffer
	if err := c.Render(ctx, &body); err != nil {
		return Kept{}, err
	}
	h := fnv.New64a()
	h.Write(body.Bytes())
	return Kept{Key: strconv.FormatUint(h.Sum64(), 36), HTML: body.String()}, nil
}

// keptRegion renders a kept region: shell around its inside b, or, when the page holds b's key,
// around nothing (a placeholder). An empty b (the caller kept none) is rendered from inside, and
// so is every region of a page whose address chose its language: the kept ones are rendered for
// a language, not for the links that carry it (CarryLang).
func keptRegion(held map[string]bool, b Kept, inside templ.Component, shell func(key string, keep bool, body templ.Component) templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		k := b
		if k.Key == "" || urlLang(ctx) != "" {
			var err error
			if k, err = renderKept(ctx, inside); err != nil {
				return err
			}
		}
		return shell(k.Key, held[k.Key], templ.Raw(k.HTML)).Render(ctx, w)
	})
}

// RenderStepBody renders the body of s's step on the diff tab, in the language of ctx: what the
// step shows depends on its row, the language and how many documents the page shows, so a
// caller may keep it with the row under those (handlers.buildResults).
func RenderStepBody(ctx context.Context, s StepView) (Kept, error) {
	return renderKept(ctx, diffStepBody(s))
}

// diffStep renders a step of the diff tab with the key of its body, so that a page holding a
// body with that key (held) is sent an empty placeholder instead of the same HTML again: a toggle
// changes only its own step, and the page keeps the steps before it.
func diffStep(held map[string]bool, s StepView) templ.Component {
	return keptRegion(held, s.Body, diffStepBody(s), func(key string, keep bool, body templ.Component) templ.Component {
		return diffStepShell(s, key, keep, body)
	})
}

// RenderLabStrip renders the inside of the lab strip l, in the language of ctx: it depends on
// nothing but the language, the current step and whether the strip offers the lab's steps on the
// learner's manifest, so a caller may keep it under those (handlers.labPath).
func RenderLabStrip(ctx context.Context, l LabNav) (Kept, error) {
	return renderKept(ctx, labStripBody(l))
}

// LabStrip is the lab's path (labStripBody) with the key of its inside: it is the same for every
// state of a manifest that is none of the lab's steps, so a page that holds it (held) is sent a
// placeholder.
func LabStrip(held map[string]bool, l LabNav) templ.Component {
	if len(l.Steps) == 0 {
		return noLabStrip()
	}
	return keptRegion(held, l.Body, labStripBody(l), labStripShell)
}

// settingsFields are the settings' inputs (settingsFieldsBody) with the key of their inside: an
// action that leaves the settings as they were is sent a placeholder, and the page keeps its own
// inputs, which hold what the action posted.
func settingsFields(p *Page) templ.Component {
	return keptRegion(p.Held, Kept{}, settingsFieldsBody(p), settingsFieldsShell)
}
