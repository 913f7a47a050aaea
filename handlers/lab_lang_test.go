package handlers

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/catalog"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// labGet is a GET of target by a reader whose browser asks for the language accept (getIn),
// which must answer 200.
func labGet(t *testing.T, h http.Handler, target, accept string) response {
	t.Helper()
	r := getIn(t, h, target, accept)
	if r.status != http.StatusOK {
		t.Fatalf("GET %s (%s): %d", target, accept, r.status)
	}
	return r
}

// TestLabPathInLanguages: the lab's hold step in Japanese and Korean words its chips, what to
// look for and the presets' titles in the reader's language; in English (no Accept-Language) they
// are the English words, and no Japanese or Korean ones.
func TestLabPathInLanguages(t *testing.T) {
	h := newServer(t)
	lp := newLabPath()
	for _, c := range []struct {
		accept, chip, next, look, preset string
		not                              []string
	}{
		{"ja", "+ 起動待ち", "+ ポート除外", "kubeletはこのフックが戻ってから次のコンテナを起動するため", "Job（データベースのマイグレーション）", []string{"+ hold", "+ exclude ports"}},
		{"ko-KR,ko;q=0.9", "+ 시작 대기", "+ 포트 제외", "kubelet은 이 훅이 반환된 뒤에야 다음 컨테이너를 시작하므로", "잡(데이터베이스 마이그레이션)", []string{"+ hold", "+ exclude ports"}},
		{"", "+ hold", "+ exclude ports", "The kubelet starts the next container only when that hook returns", "Job (a database migration)", []string{"起動待ち", "시작 대기"}},
	} {
		t.Run(c.accept, func(t *testing.T) {
			r := labGet(t, h, lp.steps[3].href, c.accept)
			if chip := testid(r, "lab-4").Text(); !strings.Contains(chip, c.chip) {
				t.Errorf("chip 4 %q, want %q", chip, c.chip)
			}
			if next := testid(r, "lab-next").Text(); !strings.Contains(next, c.next) {
				t.Errorf("next %q, want %q", next, c.next)
			}
			look := testid(r, "lab-look").Text()
			if !strings.Contains(look, c.look) || !strings.Contains(look, "pilot-agent wait") {
				t.Errorf("what to look for %q, want %q (and the code kept)", look, c.look)
			}
			if p := r.doc.Find(`option[value="job"]`).Text(); p != c.preset {
				t.Errorf("preset %q, want %q", p, c.preset)
			}
			for _, n := range c.not {
				if strings.Contains(testid(r, "lab").Text(), n) {
					t.Errorf("the lab strip says %q", n)
				}
			}
		})
	}
	// Every step's words are in every catalog (Missing records any asked for and not found).
	for _, code := range i18n.Codes {
		for i := range lp.steps {
			lp.nav(i18n.For(code), lp.steps[i].key, 0, false)
		}
	}
	noMissing(t)
}

// TestPanelInJapanese: the panel in Japanese shows our summary of a lab annotation in Japanese
// (its code as code) and Istio's description unchanged, in English, marked as Istio's and
// lang="en"; an annotation outside the lab's has no summary of ours. In English the summary is
// English.
func TestPanelInJapanese(t *testing.T) {
	h := newServer(t)
	cfg, _ := catalog.DefaultCatalog().Lookup("proxy.istio.io/config")
	ja := labGet(t, h, "/", "ja")
	sum := testid(ja, "summary-proxy.istio.io/config")
	if !strings.Contains(sum.Text(), "にマージされます") || sum.Find("code").First().Text() != "PROXY_CONFIG" {
		t.Errorf("summary %q, want the Japanese with PROXY_CONFIG as code", sum.Text())
	}
	desc := testid(ja, "istio-description-proxy.istio.io/config")
	if desc.AttrOr("lang", "") != "en" || desc.Text() != cfg.Description || cfg.Description == "" {
		t.Errorf("Istio's description lang=%q %q, want lang=en %q", desc.AttrOr("lang", ""), desc.Text(), cfg.Description)
	}
	if src := desc.Parent().Find(".a-src").Text(); src != "Istioによる説明：" {
		t.Errorf("Istio's description is marked %q", src)
	}
	if testid(ja, "annotation-sidecar.istio.io/logLevel").Length() != 1 || testid(ja, "summary-sidecar.istio.io/logLevel").Length() != 0 {
		t.Error("an annotation outside the lab's: want it without a summary of ours")
	}
	if first := testid(ja, "annotations").Find("details.group summary").First().Text(); !strings.HasPrefix(first, "ラボ") {
		t.Errorf("the first group is %q, want the lab's, in Japanese", first)
	}
	en := labGet(t, h, "/", "")
	if s := testid(en, "summary-proxy.istio.io/config").Text(); !strings.Contains(s, "merged into PROXY_CONFIG") {
		t.Errorf("English summary %q", s)
	}
	for _, g := range catalog.Groups() {
		if id, _ := web.GroupMessage(string(g)); id == "" {
			t.Errorf("the panel's group %q has no name in the catalogs", g)
		}
	}
	noMissing(t)
}

// TestPanelMemoPerLanguage: the panel is rendered once per language and reused: readers of the
// same language share one render, another language gets its own, and the memo never holds more
// than the languages sidecarlab speaks.
func TestPanelMemoPerLanguage(t *testing.T) {
	m := renderPanel(web.PanelGroups(catalog.DefaultCatalog())).(*panelMemo)
	render := func(code string) string {
		var b bytes.Buffer
		if err := m.Render(i18n.NewContext(context.Background(), i18n.For(code)), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	ja := render("ja")
	if len(m.html) != 1 || render("ja") != ja {
		t.Fatalf("after two Japanese renders the memo holds %d", len(m.html))
	}
	if en := render("en"); en == ja || !strings.Contains(en, "Istio&#39;s description:") {
		t.Error("the English panel is the Japanese one")
	}
	render("ko")
	render("de") // not a language sidecarlab speaks: English
	if len(m.html) != len(i18n.Codes) {
		t.Fatalf("the memo holds %d renders, want %d", len(m.html), len(i18n.Codes))
	}
	noMissing(t)
}

// TestSettingsFixInKorean: the Cluster view's fixes and its namespace line in Korean, and in
// English as before.
func TestSettingsFixInKorean(t *testing.T) {
	h := newServer(t)
	lp := newLabPath()
	ko := labGet(t, h, lp.steps[8].href, "ko")
	if f := strings.TrimSpace(testid(ko, "settings-fix-"+fixLabelInjection).Text()); f != "네임스페이스에 istio-injection=enabled 레이블 붙이기" {
		t.Errorf("fix %q", f)
	}
	if ns := testid(ko, "cluster-namespace").Text(); ns != "bookinfo(레이블 없음)" {
		t.Errorf("namespace %q", ns)
	}
	cni := labGet(t, h, lp.steps[9].href, "ko")
	if f := strings.TrimSpace(testid(cni, "settings-fix-"+fixCNI).Text()); f != "Istio CNI 활성화(components.cni.enabled=true)" {
		t.Errorf("fix %q", f)
	}
	en := labGet(t, h, lp.steps[8].href, "")
	if f := strings.TrimSpace(testid(en, "settings-fix-"+fixLabelInjection).Text()); f != "Label the namespace istio-injection=enabled" {
		t.Errorf("English fix %q", f)
	}
	if ns := testid(en, "cluster-namespace").Text(); ns != "bookinfo (no labels)" {
		t.Errorf("English namespace %q", ns)
	}
	noMissing(t)
}

// TestReplacesNoticeInLanguages: a second proxy.istio.io/config step that drops fields says so in
// the reader's language, one field or several by the language's plural rules; a step that drops
// none says nothing.
func TestReplacesNoticeInLanguages(t *testing.T) {
	h := newServer(t)
	key := "proxy.istio.io/config"
	href := func(first string) string {
		steps := []input.Step{{Key: key, Value: first}, {Key: key, Value: "holdApplicationUntilProxyStarts: true"}}
		return view{state: api.State{Manifest: testkit.Deployment, Steps: steps}, step: -1}.permalink()
	}
	two, one := href("concurrency: 2\nterminationDrainDuration: 20s"), href("concurrency: 2")
	for _, c := range []struct{ target, accept, want string }{
		{two, "ja", "このステップはproxy.istio.io/configの値全体を置き換えます。concurrency, terminationDrainDurationは設定されなくなります。"},
		{two, "ko", "이 단계는 proxy.istio.io/config의 값 전체를 대체합니다. concurrency, terminationDrainDuration 필드는 더 이상 설정되지 않습니다."},
		{one, "", "This step replaces the whole proxy.istio.io/config: concurrency is no longer set."},
	} {
		r := labGet(t, h, c.target, c.accept)
		if got := strings.TrimSpace(testid(r, "diff-step-2").Find(`[data-testid="replaces"]`).Text()); got != c.want {
			t.Errorf("%s: notice %q, want %q", c.accept, got, c.want)
		}
		if testid(r, "diff-step-1").Find(`[data-testid="replaces"]`).Length() != 0 {
			t.Errorf("%s: the first step replaces nothing, but says so", c.accept)
		}
	}
	noMissing(t)
}

// TestNamespaceErrorInLanguages: a namespace label the API server would refuse is said beside the
// field in the reader's language, with the person's text kept as it was (and escaped); a label it
// accepts is no error. The API's and a link's words stay English (the same error unwrapped).
func TestNamespaceErrorInLanguages(t *testing.T) {
	h := newServer(t)
	post := func(labels, accept string) response {
		f := url.Values{"manifest": {testkit.Deployment}, "nsLabels": {labels}}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept-Language", accept)
		return do(t, h, req)
	}
	// A line of the labels is a place in the input, worded as every such place is
	// (wording.Words.At): in Japanese with the one separator, not a full-width colon of its own.
	ja := i18n.For("ja")
	jaLine := wording.In(ja).At(0, 2, 0, ja.T("lab.ns.field.labels"), ja.T("lab.ns.key-value"))
	if jaLine != "2行目、Namespaceのラベル: ラベルは1行に1つずつKEY=VALUEの形で書いてください" {
		t.Errorf("ja: the labels' line worded %q", jaLine)
	}
	for _, c := range []struct{ labels, accept, want string }{
		{"team=a\nteam", "ja", jaLine},
		{"<b>=a", "ko", `네임스페이스 레이블: "<b>"는 레이블 키로 쓸 수 없습니다: `},
		{"team=a\nteam", "", "line 2, namespace labels: write each label as KEY=VALUE, one per line"},
	} {
		r := post(c.labels, c.accept)
		if r.status != http.StatusUnprocessableEntity {
			t.Fatalf("%q: status %d, want 422", c.labels, r.status)
		}
		if got := testid(r, "namespace-error").Text(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: error %q, want %q", c.accept, got, c.want)
		}
		if strings.Contains(r.body, "<b>") {
			t.Errorf("%s: the label comes back unescaped", c.accept)
		}
	}
	if r := post("team=a", "ja"); r.status != http.StatusSeeOther {
		t.Errorf("a good label: status %d, want 303", r.status)
	}
	_, err := readNamespace(url.Values{"nsLabels": {"team"}})
	var ie *input.Error
	if !errors.As(err, &ie) || ie.Error() != "line 1, namespace labels: write each label as KEY=VALUE, one per line" {
		t.Errorf("the error as the API says it: %v", err)
	}
	noMissing(t)
}

// TestLabStripMemo: the strip's inside is rendered once for each language, current step and offer
// of the lab's steps, and what is kept is what rendering that strip afresh gives; the memo holds
// no more than those.
func TestLabStripMemo(t *testing.T) {
	lp := newLabPath()
	for _, code := range append(append([]string{}, i18n.Codes...), "de") {
		l := i18n.For(code)
		for _, mine := range []bool{false, true} {
			for i := 0; i <= len(lp.steps); i++ {
				key := ""
				if i > 0 {
					key = lp.steps[i-1].key
				}
				n := lp.nav(l, key, 0, mine)
				if n.Current != i || n.Body.Key == "" {
					t.Fatalf("%s, step %d, mine %t: current %d, key %q", code, i, mine, n.Current, n.Body.Key)
				}
				fresh := n
				fresh.Body = web.Kept{}
				want, err := web.RenderLabStrip(i18n.NewContext(context.Background(), l), fresh)
				if err != nil {
					t.Fatal(err)
				}
				if n.Body != want {
					t.Fatalf("%s, step %d, mine %t: the kept strip is not the strip rendered afresh", code, i, mine)
				}
				if again := lp.nav(l, key, 0, mine); again.Body != n.Body {
					t.Fatalf("%s, step %d: a second strip differs", code, i)
				}
			}
		}
	}
	if want := len(i18n.Codes) * (len(lp.steps) + 1) * 2; len(lp.bodies) != want {
		t.Fatalf("the memo holds %d strips, want %d", len(lp.bodies), want)
	}
	en, ja := lp.nav(i18n.For("en"), "", 0, true), lp.nav(i18n.For("ja"), "", 0, true)
	if en.Body.Key == ja.Body.Key || en.Body.Key == lp.nav(i18n.For("en"), "", 0, false).Body.Key {
		t.Error("strips in two languages, or with and without the offer, share a key")
	}
}

// TestCapacityInLanguages: the capacity line is one sentence in each language — the count, where
// it came from and the totals in the language's order and punctuation (Japanese: full-width
// parentheses and colon, no spaces around them) — for a count from the spec and a typed one.
func TestCapacityInLanguages(t *testing.T) {
	h := newServer(t)
	fleet := view{state: api.State{Manifest: strings.Replace(testkit.Deployment, "spec:\n  selector", "spec:\n  replicas: 2000\n  selector", 1)}, step: -1}.permalink()
	p := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "action": {"capacity"}, "replicas": {"3"}})
	typed := p.header.Get("Location")
	for _, c := range []struct{ target, accept, want string }{
		{fleet, "ja", "2000個のPod（specのレプリカ数）の合計：requests cpu=200 memory=250Gi、limits cpu=4000 memory=2000Gi"},
		{fleet, "ko", "파드 2000개(spec의 레플리카 수)의 합계: requests cpu=200 memory=250Gi, limits cpu=4000 memory=2000Gi"},
		{fleet, "", "× 2000 pods (replicas from the spec) = requests cpu=200 memory=250Gi, limits cpu=4000 memory=2000Gi"},
		{typed, "ja", "3個のPodの合計：requests cpu=300m memory=384Mi、limits cpu=6 memory=3Gi"},
		{typed, "", "× 3 pods = requests cpu=300m memory=384Mi, limits cpu=6 memory=3Gi"},
	} {
		r := labGet(t, h, c.target+"&tab=lifecycle", c.accept)
		if got := testid(r, "capacity-total").Text(); got != c.want {
			t.Errorf("%s: %q, want %q", c.accept, got, c.want)
		}
	}
	noMissing(t)
}
