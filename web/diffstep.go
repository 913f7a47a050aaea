package web

import (
	"bytes"
	"context"
	"hash/fnv"
	"io"
	"strconv"

	"github.com/a-h/templ"
)

// StepBody is a diff-tab step's body as HTML, with a key naming its content (a hash of the HTML).
type StepBody struct{ Key, HTML string }

// MaxStepKey is the longest key a StepBody has: a 64-bit hash in base 36.
const MaxStepKey = 13

// Size is the bytes the body holds, for a memo that keeps it.
func (b StepBody) Size() int64 { return int64(len(b.Key) + len(b.HTML)) }

// RenderStepBody renders the body of s's step on the diff tab, in the language of ctx: what the
// step shows depends on its row, the language and how many documents the page shows, so a
// caller may keep it with the row under those (handlers.buildResults).
func RenderStepBody(ctx context.Context, s StepView) (StepBody, error) {
	var body bytes.Buffer
	if err := diffStepBody(s).Render(ctx, &body); err != nil {
		return StepBody{}, err
	}
	h := fnv.New64a()
	h.Write(body.Bytes())
	return StepBody{Key: strconv.FormatUint(h.Sum64(), 36), HTML: body.String()}, nil
}

// diffStep renders a step of the diff tab with the key of its body, so that a page holding a
// body with that key (held) is sent an empty placeholder instead of the same HTML again: a toggle
// changes only its own step, and the page keeps the steps before it.
func diffStep(held map[string]bool, s StepView) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		b := s.Body
		if b.Key == "" {
			var err error
			if b, err = RenderStepBody(ctx, s); err != nil {
				return err
			}
		}
		return diffStepShell(s, b.Key, held[b.Key], templ.Raw(b.HTML)).Render(ctx, w)
	})
}
