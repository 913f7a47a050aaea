package secrets

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	yaml "go.yaml.in/yaml/v3"
)

// leak is a credential of a known format that gitleaks' rules found in a text: Secret is the
// credential itself (the rule's secret group), Rule the rule's id (aws-access-token,
// slack-webhook-url, …) and Line its 0-based line in the text.
type leak struct {
	Rule, Secret string
	Line         int
}

// maxDecodeDepth is gitleaks' own default (its --max-decode-depth): a credential base64-, hex-
// or percent-encoded up to 5 times is found too.
const maxDecodeDepth = 5

// leakDetector is gitleaks' detector with gitleaks' default rules (github.com/zricethezav/
// gitleaks/v8, its config/gitleaks.toml: AWS, GCP, Slack, GitHub, Stripe, … keys and tokens),
// loaded the first time a scan needs it, never at process start: reading and compiling the
// rules takes ~120 ms. It is loaded as gitleaks' NewDetectorDefaultConfig loads it, with a viper
// of its own rather than viper's global. gitleaks logs through a global zerolog logger to
// stderr; its scans of a string log nothing a reader of sidecarlab needs, so it is turned off.
// A detector is safe for concurrent scans of strings (DetectString keeps its findings local).
var leakDetector = sync.OnceValue(func() *detect.Detector {
	leakLoads.Add(1)
	logging.Logger = logging.Logger.Level(zerolog.Disabled)
	v := viper.New()
	v.SetConfigType("toml")
	var vc config.ViperConfig
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		panic(fmt.Errorf("gitleaks: %w", err))
	}
	if err := v.Unmarshal(&vc); err != nil {
		panic(fmt.Errorf("gitleaks: %w", err))
	}
	cfg, err := vc.Translate()
	if err != nil {
		panic(fmt.Errorf("gitleaks: %w", err))
	}
	d := detect.NewDetector(cfg)
	d.MaxDecodeDepth = maxDecodeDepth
	return d
})

// leakLoads counts the loads of gitleaks' rules: one at most, and none until a scan needs them.
var leakLoads atomic.Int32

// leaks are the credentials of known formats in text, by gitleaks' default rules; each secret
// once per line.
func leaks(text string) []leak {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var out []leak
	seen := map[leak]bool{}
	for _, f := range leakDetector().DetectString(text) {
		l := leak{Rule: f.RuleID, Secret: f.Secret, Line: f.StartLine}
		if l.Secret == "" || strings.Contains(l.Secret, Redacted) || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
	}
	return out
}

// leaks flags what gitleaks' rules found in the document's text: every scalar, value or
// mapping key, that holds the credential (it is found in the text where it is written: an
// alias's value is its anchor's scalar), or else the comment that holds it. A credential the
// rules match across lines (a private key's PEM block, with its indentation) is in a scalar our
// own rules flag already.
func (w *secretWalker) leaks(ls []leak) {
	for _, l := range ls {
		found := false
		each(w.doc.root.Content[0], "", "", func(n *yaml.Node, path, key string, isKey bool) {
			if !strings.Contains(n.Value, l.Secret) {
				return
			}
			found = true
			if !w.flagged[n] {
				w.addKnown(n, path, key, isKey, l.Rule)
			}
		})
		if !found {
			w.commentLeak(w.doc.root, l)
		}
	}
}

// addKnown flags n for gitleaks' rule; a mapping key is shown as the key it is.
func (w *secretWalker) addKnown(n *yaml.Node, path, key string, isKey bool, rule string) {
	w.add(n, path, key, KnownFormat)
	h := &w.hits[len(w.hits)-1]
	h.Rule = rule
	if isKey {
		h.Excerpt = Redacted + ":"
	}
}
