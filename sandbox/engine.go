package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
)

// Isolator is the engine's Isolator on a Sandbox: every job runs in a new worker (a
// `sidecarlab worker`, which calls EngineWorker).
func Isolator(s *Sandbox) engine.Isolator { return isolator{s} }

type isolator struct{ s *Sandbox }

func (i isolator) IsolatesNetwork() bool { return i.s.IsolatesNetwork() }

// Run runs the job in a worker. A worker over its limits is the input's fault: a 4xx that says
// which limit, for the install options (only they bring what runs there).
func (i isolator) Run(ctx context.Context, job engine.Job) (*engine.JobResult, error) {
	var res engine.JobResult
	if err := i.s.Run(ctx, job, &res); err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return nil, &input.Error{Field: "install options", Msg: fmt.Sprintf("the templates of these install options went over the %s this server gives them "+
				"(%d CPU seconds, %d MiB) and were stopped", le.What, le.Limits.CPUSeconds, le.Limits.MemoryBytes>>20)}
		}
		var oe *OutputError
		if errors.As(err, &oe) {
			return nil, outputTooLarge(oe.Max, job.Explain != nil)
		}
		return nil, err
	}
	return &res, nil
}

// EngineWorker is the worker's main: `sidecarlab worker` (a hidden command) is this and nothing
// else. args are the flags Run passes (the limits).
func EngineWorker(ctx context.Context, args []string, stdin io.Reader) error {
	return Serve(ctx, args, stdin, func(ctx context.Context, raw json.RawMessage) (any, error) {
		var job engine.Job
		if err := json.Unmarshal(raw, &job); err != nil {
			return nil, err
		}
		return engine.RunJob(ctx, job), nil
	})
}

// outputTooLarge is the 422 of templates that wrote more than a worker may answer: what they
// wrote would be shown in pages and raw outputs, so it is bounded like a manifest (--max-body);
// or, explained, whose explanation came to more (a leaf's explanation is some times its size).
// It is lasting: the same templates write as much again.
func outputTooLarge(max int64, explained bool) *input.Error {
	limit := fmt.Sprintf("%d bytes", max)
	switch {
	case max >= 1<<20 && max%(1<<20) == 0:
		limit = fmt.Sprintf("%d MiB", max>>20)
	case max >= 1<<10 && max%(1<<10) == 0:
		limit = fmt.Sprintf("%d KiB", max>>10)
	}
	if explained {
		return &input.Error{Field: "install options", ID: "explain-too-large", Params: map[string]string{"limit": limit}, Lasting: true,
			Msg: "the explanation of what these install options' templates wrote came to more than " + limit + ", the most this server takes from the worker that runs them (as much as a manifest may be: --max-body); explain fewer documents at a time."}
	}
	return &input.Error{Field: "install options", ID: "template-output-too-large", Params: map[string]string{"limit": limit}, Lasting: true,
		Msg: "the templates of these install options wrote more than " + limit + ", the most this server takes from them (as much as a manifest may be: --max-body); nothing they wrote is shown."}
}
