package handlers

import (
	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// decodeState reads a permalink's state (permalink.Decode) and checks its namespace as the API
// server would: a link made by hand with a namespace it refuses is a 422 naming the field.
func decodeState(text string) (api.State, error) {
	s, err := permalink.Decode(text)
	if err != nil {
		return s, err
	}
	if err := checkNamespace(s.Settings.Namespace); err != nil {
		return s, err
	}
	return s, nil
}

// decodeStateJSON is decodeState of a short link's JSON (permalink.DecodeJSON).
func decodeStateJSON(js []byte) (api.State, error) {
	s, err := permalink.DecodeJSON(js)
	if err != nil {
		return s, err
	}
	if err := checkNamespace(s.Settings.Namespace); err != nil {
		return s, err
	}
	return s, nil
}

// stateErrorIn words a link that cannot be read in l's language.
func stateErrorIn(l *i18n.Localizer, e permalink.Error) string {
	return l.T("errors.state.unreadable", "Reason", words(l, e.ID, e.Args))
}

// stateSize is what a state carries that a person typed: the manifest, the steps and the install
// options — what a POST of it would carry.
func stateSize(s api.State) int64 {
	in := s.Settings.Install
	n := len(s.Manifest) + len(in.Overlay) + len(s.Settings.KubernetesVersion) + len(s.Settings.Mode) +
		len(in.Mesh.InjectorConfig) + len(in.Mesh.Values) + len(in.Mesh.MeshConfig) + len(in.Mesh.Webhooks) + len(in.Revision)
	for _, v := range s.Settings.Install.Set {
		n += len(v)
	}
	for _, st := range s.Steps {
		n += len(st.Key) + len(st.Value)
	}
	n += len(s.Settings.Namespace.Name)
	for k, v := range s.Settings.Namespace.Labels {
		n += len(k) + len(v)
	}
	return int64(n)
}
