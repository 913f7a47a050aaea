package handlers

import (
	"errors"
	"slices"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
)

// Package secrets reads plain values, not the engine's types: these give it a state's manifest,
// steps and settings, put its redactions back in their places, and report a document it cannot
// redact as every other problem with the input is reported.

// redactManifest is secrets.Redact of a state's manifest.
func redactManifest(manifest string) (string, error) {
	red, err := secrets.Redact([]byte(manifest))
	return red, redactError(err)
}

// redactError is a document secrets.Redact could not redact as an input.Error of the
// manifest, which handlers classify and word like any other (input.<ID> in the catalogs).
func redactError(err error) error {
	var re *secrets.Error
	if !errors.As(err, &re) {
		return err
	}
	return &input.Error{Doc: re.Doc, Line: re.Line, Field: "manifest", ID: re.ID, Params: re.Params, Msg: re.Msg}
}

// secretSteps are steps as package secrets reads them.
func secretSteps(steps []input.Step) []secrets.Step {
	out := make([]secrets.Step, len(steps))
	for i, st := range steps {
		out[i] = secrets.Step(st)
	}
	return out
}

// scanSteps is secrets.ScanSteps of a state's steps.
func scanSteps(steps []input.Step) []secrets.Finding {
	return secrets.ScanSteps(secretSteps(steps))
}

// redactSteps is steps with the values secrets.RedactSteps replaces replaced.
func redactSteps(steps []input.Step) []input.Step {
	out := slices.Clone(steps)
	for i, st := range secrets.RedactSteps(secretSteps(steps)) {
		out[i].Value = st.Value
	}
	return out
}

// meshParts are the texts of a mesh's own configuration, by the names its JSON gives them.
func meshParts(m *engine.OwnMesh) []struct {
	name string
	text *string
} {
	return []struct {
		name string
		text *string
	}{{"injectorConfig", &m.InjectorConfig}, {"values", &m.Values}, {"meshConfig", &m.MeshConfig}, {"webhooks", &m.Webhooks}}
}

// secretSettings are the texts of s package secrets reads.
func secretSettings(s engine.Settings) secrets.Settings {
	out := secrets.Settings{Set: s.Install.Set, Overlay: s.Install.Overlay, Labels: s.Namespace.Labels}
	for _, p := range meshParts(&s.Install.Mesh) {
		out.Mesh = append(out.Mesh, secrets.MeshPart{Name: p.name, Text: *p.text})
	}
	return out
}

// scanSettings is secrets.ScanSettings of a state's settings.
func scanSettings(s engine.Settings) []secrets.Finding {
	return secrets.ScanSettings(secretSettings(s))
}

// redactSettings is s with its texts as secrets.RedactSettings redacts them.
func redactSettings(s engine.Settings) (engine.Settings, error) {
	red, err := secrets.RedactSettings(secretSettings(s))
	if err != nil {
		return s, redactError(err)
	}
	s.Install.Set, s.Install.Overlay, s.Namespace.Labels = red.Set, red.Overlay, red.Labels
	for i, p := range meshParts(&s.Install.Mesh) {
		*p.text = red.Mesh[i].Text
	}
	return s, nil
}
