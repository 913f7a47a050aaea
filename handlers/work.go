package handlers

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
)

// admit runs the cluster's admission path for a state (see package admission), inside the
// request's hold on the work slots (see work).
func (s *server) admit(ctx context.Context, st api.State) ([]admission.Result, error) {
	if err := s.work(ctx, st); err != nil {
		return nil, err
	}
	s.admitOnce.Do(func() { s.admitter = admission.New(s.eng()) })
	return s.admitter.Admit(ctx, []byte(st.Manifest), st.Steps, st.Settings)
}

var errBusy = httpError{status: http.StatusServiceUnavailable, id: "errors.busy"}

// timeline runs the engine on a state, inside the request's hold on the work slots (see work).
func (s *server) timeline(ctx context.Context, st api.State) (*engine.Timeline, error) {
	if err := s.work(ctx, st); err != nil {
		return nil, err
	}
	return s.eng().Timeline(ctx, []byte(st.Manifest), st.Steps, st.Settings)
}

// work checks what a state will cost before any of it is done, and holds a work slot for the
// rest of the request in the lane that cost chooses. A state holds no more than a POST may carry
// (--max-body), however it came: a link's state inflates up to 4 MiB otherwise (413). Then the
// estimate: deeper or costlier than Config.Work allows is a 422 that says which limit; over
// HeavyUnits, the request is heavy (see hold).
func (s *server) work(ctx context.Context, st api.State) error {
	if err := s.stateTooLarge(st); err != nil {
		return err
	}
	cost, err := s.eng().Estimate(ctx, []byte(st.Manifest), st.Steps, st.Settings)
	if err != nil {
		return err
	}
	if err := s.cfg.Work.Check(cost); err != nil {
		return err
	}
	return s.hold(ctx, cost.Units > s.cfg.HeavyUnits || cost.Render || cost.Worker)
}

// holdKey is the context key of a request's hold on the work slots.
type holdKey struct{}

// slotHold is what a request holds of the work slots: a light slot, a heavy one, or none yet.
// It is taken by the request's first piece of engine work (hold) and given back when its answer
// has been written (holdSlots), so rendering and encoding a large answer count as work too.
type slotHold struct {
	mu           sync.Mutex
	light, heavy bool
}

// holdSlots gives each request a hold on the work slots, released once the answer is written.
func (s *server) holdSlots(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := &slotHold{}
		defer func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.light {
				<-s.slots
			}
			if h.heavy {
				<-s.heavy
			}
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), holdKey{}, h)))
	})
}

// hold takes a work slot for the request, in the heavy lane when heavy is set, waiting up to
// QueueWait, then answers 503 (appHandler adds Retry-After). A request holds at most one slot of
// each lane: a heavy slot covers light work, and a light one is upgraded when later work of the
// same request is heavy (a compare of a light and a heavy state). A heavy holder never waits for
// a light slot, so two requests never wait for each other.
func (s *server) hold(ctx context.Context, heavy bool) error {
	h, _ := ctx.Value(holdKey{}).(*slotHold)
	if h == nil {
		return errors.New("handlers: engine work outside holdSlots")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.heavy || (h.light && !heavy) {
		return nil
	}
	lane := s.slots
	if heavy {
		lane = s.heavy
	}
	wait := time.NewTimer(s.cfg.QueueWait)
	defer wait.Stop()
	select {
	case lane <- struct{}{}:
	case <-wait.C:
		return errBusy
	case <-ctx.Done():
		return ctx.Err()
	}
	if heavy {
		h.heavy = true
	} else {
		h.light = true
	}
	return nil
}
