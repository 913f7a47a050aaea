package wording

import (
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
)

// questions are the verdicts' questions (wording.verdict.<id>.question), by verdict id.
var questions = map[string]string{
	"app-before-proxy":   "wording.verdict.app-before-proxy.question",
	"job-completes":      "wording.verdict.job-completes.question",
	"proxy-outlives-app": "wording.verdict.proxy-outlives-app.question",
}

// reasons are the verdicts' reasons (wording.reason.<verdict>.<reason>), by verdict id and
// reason: the message a verdict's parameters choose, "" for the reason's own.
var reasons = map[string]map[string]func(p map[string]string) string{
	"app-before-proxy": {
		"no-proxy": nil,
		"native-startup-probe": func(p map[string]string) string {
			if p["path"] == "" {
				return "native-startup-probe-no-path"
			}
			return ""
		},
		"native-no-startup-probe": nil,
		"first-with-wait":         nil,
		"first-without-wait":      nil,
		"not-first":               nil,
	},
	"job-completes": {
		"not-a-job":                   nil,
		"completes":                   nil,
		"classic-proxy-keeps-running": nil,
	},
	"proxy-outlives-app": {
		"no-proxy": nil,
		"native":   nil,
		"classic":  nil,
	},
}

// Answer says a verdict's answer (yes, no, or not applicable) in the reader's language; also a
// batch table's yes-or-no columns.
func (w Words) Answer(a lifecycle.Answer) string {
	return w.loc().T("results.answer." + strings.ReplaceAll(string(a), "/", ""))
}

// Question is the question a verdict answers; its id for a verdict sidecarlab has no words for.
func (w Words) Question(v lifecycle.Verdict) string {
	if q, ok := questions[v.ID]; ok {
		return w.loc().T(q)
	}
	return v.ID
}

// Why is the reason for a verdict's answer; its id and reason for one sidecarlab has no words
// for.
func (w Words) Why(v lifecycle.Verdict) string {
	choose, ok := reasons[v.ID][v.Reason]
	if !ok {
		return strings.TrimSpace(v.ID + " " + v.Reason)
	}
	r := v.Reason
	if choose != nil {
		if c := choose(v.Params); c != "" {
			r = c
		}
	}
	return w.tmap("wording.reason."+v.ID+"."+r, v.Params)
}

// Verdict is a verdict with its words, as the JSON API gives it.
type Verdict struct {
	lifecycle.Verdict
	Question string `json:"question"`
	Why      string `json:"why"`
}
