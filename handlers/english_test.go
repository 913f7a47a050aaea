package handlers

import (
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// keptWords are the words Japanese and Korean text writes in English: names of products,
// formats and Kubernetes kinds (i18n/GLOSSARY.md), and the abbreviations every language keeps.
var keptWords = map[string]bool{
	"sidecarlab": true, "Istio": true, "istio": true, "istioctl": true, "kubectl": true, "Kubernetes": true, "Envoy": true,
	"YAML": true, "JSON": true, "CSV": true, "SARIF": true, "GitHub": true, "Markdown": true, "OK": true, "ID": true,
	"URL": true, "HTTP": true, "API": true, "CLI": true, "CNI": true, "DNS": true, "TCP": true, "CPU": true, "QR": true,
	"Pod": true, "Pods": true, "Namespace": true, "Deployment": true, "Job": true, "CronJob": true, "DaemonSet": true,
	"StatefulSet": true, "ReplicaSet": true, "ConfigMap": true, "Secret": true, "Service": true, "ztunnel": true,
	"kubelet": true, "istiod": true, "Helm": true, "Chromium": true,
}

var (
	latinWord = regexp.MustCompile(`[A-Za-z][A-Za-z'’]+`)
	// codeToken has a character prose words do not: a key, a path, a value, a version.
	codeToken = regexp.MustCompile("[./_=:{}\\[\\]()<>#@$%*+|\\\\\"`0-9]|^[a-z]+(-[a-z0-9]+)+$")
)

// englishProse are the runs of two or more English words a page shows as prose — outside code,
// keys and values (<code>, <kbd>, <pre>, <samp>) and outside what is marked English (lang="en":
// Istio's own messages, quoted) — in the selection: what a Japanese or Korean reader would meet
// untranslated. One word alone (a workload's name, a kind) is not prose.
func englishProse(sel *goquery.Selection) []string {
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.ElementNode:
			switch n.Data {
			case "code", "kbd", "pre", "samp", "script", "style", "textarea":
				return
			}
			for _, a := range n.Attr {
				if a.Key == "lang" && strings.HasPrefix(a.Val, "en") {
					return
				}
				if a.Key == "hidden" {
					return
				}
			}
		case html.TextNode:
			var run []string
			english := 0 // of run, the words not kept in every language
			flush := func() {
				if english >= 2 {
					out = append(out, strings.Join(run, " "))
				}
				run, english = nil, 0
			}
			for _, tok := range strings.Fields(n.Data) {
				words := latinWord.FindAllString(tok, -1)
				if codeToken.MatchString(tok) || len(words) != 1 || words[0] != strings.Trim(tok, ",;!?…·—") {
					flush()
					continue
				}
				run = append(run, words[0])
				if !keptWords[words[0]] {
					english++
				}
			}
			flush()
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range sel.Nodes {
		walk(n)
	}
	return out
}

// TestEnglishProseCheck: the check finds English prose, and passes code, kept words, text marked
// English and one word alone.
func TestEnglishProseCheck(t *testing.T) {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(`<div>
<p>注入済み · Istioが<code>istio-proxy sidecar here</code>を追加</p>
<p lang="en">Specifies the proxy's CPU</p>
<td>web</td><td>Deployment Job</td>
<p>Istioによる説明: Specifies the proxy's CPU request</p>
<p>ライフサイクル：NO、hold-application-until-proxy-starts</p>
<p>値: quantity</p>
</div>`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(englishProse(doc.Selection), "|")
	if want := "Specifies the proxy's CPU request"; got != want {
		t.Fatalf("found %q, want %q", got, want)
	}
}

// TestNoEnglishProseInLanguages: in Japanese and Korean, the lab's every step — its strip, its
// texts, and the results it shows (the batch table of the batch step among them) — and the batch
// tab of the lab's batch with a namespace set show no English prose but Istio's own messages,
// marked English.
func TestNoEnglishProseInLanguages(t *testing.T) {
	t.Parallel()
	h := newServer(t)
	lp := newLabPath()
	var targets []string
	for _, s := range lp.steps {
		targets = append(targets, s.href)
	}
	for _, lang := range []string{"ja", "ko"} {
		for _, target := range targets {
			for _, tab := range []string{"", "&tab=batch", "&tab=pitfalls", "&tab=lifecycle", "&tab=cluster", "&tab=timeline"} {
				if tab != "" && !strings.HasPrefix(target, "/?") {
					continue
				}
				r := labGet(t, h, target+tab, lang)
				for _, p := range englishProse(r.doc.Find("body")) {
					t.Errorf("%s %s%s: %q", lang, target[:min(len(target), 40)], tab, p)
				}
			}
		}
	}
}
