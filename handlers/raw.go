package handlers

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/wording"
)

// handleRaw serves one raw output of the state in the query: /NAME?s=… (routes.go lists them).
func (s *server) handleRaw(name string) http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		v, err := readView(r)
		if err != nil {
			return err
		}
		if r.URL.Query().Get("s") == "" {
			return httpError{status: http.StatusBadRequest, id: "errors.raw.no-state"}
		}
		return s.writeRaw(w, r, name, v)
	})
}

// handleShortRaw serves a raw output of a shared link: /s/<id>/NAME.
func (s *server) handleShortRaw(name string) http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		_, st, err := s.sharedLink(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			return err
		}
		return s.writeRaw(w, r, name, view{state: st, step: -1})
	})
}

func (s *server) writeRaw(w http.ResponseWriter, r *http.Request, name string, v view) error {
	if name == "state.json" {
		// The one raw output that does not run the engine refuses what the engine would: a state
		// over --max-body is never echoed (a small link inflates to 4 MiB).
		if err := s.stateTooLarge(v.state); err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.MarshalIndent(v.state, "", "  ")
		_, err := w.Write(append(b, '\n'))
		return err
	}
	tl, err := s.timeline(r.Context(), v.state)
	if err != nil {
		return err
	}
	if err := rejected(tl, v.step); err != nil {
		return err
	}
	switch name {
	case "injected.yaml":
		w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
		_, err = w.Write([]byte(tl.Steps[selectedStep(v.step, len(tl.Steps))].Output()))
	case "diff.txt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		var text string
		if text, err = wording.For(r.Context()).TimelineText(r.Context(), tl, r.URL.Query().Get("unified") != ""); err == nil {
			_, err = w.Write([]byte(text))
		}
	case "repro.tar.gz":
		var b []byte
		b, err = s.reproBundle(r, v.state, tl)
		if err == nil {
			w.Header().Set("Content-Type", "application/gzip")
			w.Header().Set("Content-Disposition", `attachment; filename="sidecarlab-repro.tar.gz"`)
			_, err = w.Write(b)
		}
	default:
		err = fmt.Errorf("no raw output %q", name)
	}
	return err
}

// stateTooLarge refuses a state that holds more than a POST may carry (--max-body): what the
// engine's work starts with (work), and what the answers that show a state without running the
// engine check.
func (s *server) stateTooLarge(st api.State) error {
	if n := stateSize(st); n > s.cfg.MaxBodyBytes {
		return httpError{status: http.StatusRequestEntityTooLarge, id: "errors.state-too-large",
			args: []any{"Size", byteCount(n), "Limit", byteCount(s.cfg.MaxBodyBytes), "Flag", "--max-body"}}
	}
	return nil
}

// rejected is the error of a state whose documents Istio rejects, at the selected step (the last
// when none is): the 422 the page and the API answer, so that a raw output is never an empty 200.
func rejected(tl *engine.Timeline, step int) error {
	if errs := tl.Steps[selectedStep(step, len(tl.Steps))].Errors(); len(errs) > 0 {
		return documentErrors(errs)
	}
	return nil
}

// reproBundle is everything needed to reproduce a state's output with istioctl alone: the input
// (annotation steps written in), the injector config, values and mesh config the engine used, the
// expected output, the state, and the command.
func (s *server) reproBundle(r *http.Request, st api.State, tl *engine.Timeline) ([]byte, error) {
	install, err := s.eng().Install(r.Context(), st.Settings.Install)
	if err != nil {
		return nil, err
	}
	input, err := engine.AnnotatedInput([]byte(st.Manifest), st.Steps)
	if err != nil {
		return nil, err
	}
	stateJSON, _ := json.MarshalIndent(st, "", "  ")
	env := st.Settings.IstioctlEnv()
	cmd := "istioctl kube-inject -f input.yaml --injectConfigFile inject-config.yaml --valuesFile values.json --meshConfigFile mesh.yaml --revision default > output.yaml"
	if env != "" {
		cmd = "ENABLE_NATIVE_SIDECARS=" + env + " " + cmd
	}
	v := engine.Version()
	readme := fmt.Sprintf(`# sidecarlab reproduction

Made with Istio %s (istio.io/istio %s). To reproduce with istioctl of the same Istio:

    %s
    diff output.yaml expected.yaml

Files:

- input.yaml: the manifest, with the annotation steps written where Istio reads them
- inject-config.yaml, values.json, mesh.yaml: the istio-sidecar-injector and istio ConfigMaps the engine rendered
- expected.yaml: the output sidecarlab showed
- state.json: the sidecarlab state (open it in the playground)
`, v.Istio, v.Module, cmd)
	if st.Settings.Mode == engine.ModeWebhook {
		readme += fmt.Sprintf("\nThe state is in webhook mode on Kubernetes %s; offline istioctl has no nodes, so ENABLE_NATIVE_SIDECARS=%s stands for the webhook's decision on them.\n", st.Settings.KubernetesVersion, env)
	}
	files := []struct{ name, body string }{
		{"README.md", readme},
		{"reproduce.sh", "#!/bin/sh\nset -e\n" + cmd + "\ndiff output.yaml expected.yaml && echo reproduced\n"},
		{"input.yaml", input},
		{"inject-config.yaml", install.InjectorConfig},
		{"values.json", install.Values},
		{"mesh.yaml", install.MeshConfigYAML},
		{"expected.yaml", tl.Steps[len(tl.Steps)-1].Output()},
		{"state.json", string(stateJSON) + "\n"},
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		mode := int64(0o644)
		if strings.HasSuffix(f.name, ".sh") {
			mode = 0o755
		}
		hdr := &tar.Header{Name: "sidecarlab-repro/" + f.name, Mode: mode, Size: int64(len(f.body)), ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
