package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/wording"
)

// getIn is a GET whose Accept-Language names lang.
func getIn(t *testing.T, h http.Handler, target, lang string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Accept-Language", lang)
	return do(t, h, req)
}

// noMissing fails on a message a catalog lacks.
func noMissing(t *testing.T) {
	t.Helper()
	if missing := i18n.Missing(); len(missing) != 0 {
		t.Errorf("messages missing from the catalogs: %q", missing)
	}
}

// TestPageInEachLanguage: the playground's chrome (skip link, buttons, settings, panel, the
// script's words, <title> and og:description) is in the reader's language, and only in it;
// the reader's values and the code in it (field names, annotation keys) stay as they are.
func TestPageInEachLanguage(t *testing.T) {
	h := newServer(t)
	target := stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}})
	type want struct {
		skip, apply, settings, permalink, panel, unset, linkCopied, noLink, title, desc string
	}
	wants := map[string]want{
		"en": {"Skip to results", "Apply", "Settings", "Permalink", "Pod annotations",
			"not set (privileged)", "Link copied.", "No link: the text in the editor could not be shown ({{.Error}})",
			"Deployment/web · proxyCPU=200m — sidecarlab", "What Istio "},
		"ja": {"結果へスキップ", "適用", "設定", "パーマリンク", "Podのアノテーション",
			"未設定（privileged）", "リンクをコピーしました。", "リンクはありません：エディターのテキストを表示できませんでした（{{.Error}}）",
			"Deployment/web · proxyCPU=200m — sidecarlab", "フィールドごとに示します。"},
		"ko": {"결과로 건너뛰기", "적용", "설정", "고정 링크", "파드 어노테이션",
			"설정 안 함(privileged)", "링크를 복사했습니다.", "링크 없음: 편집기의 텍스트를 표시할 수 없습니다({{.Error}})",
			"Deployment/web · proxyCPU=200m — sidecarlab", "필드별로 보여 줍니다."},
	}
	for lang, w := range wants {
		t.Run(lang, func(t *testing.T) {
			r := getIn(t, h, target, lang)
			if r.status != http.StatusOK {
				t.Fatalf("status %d", r.status)
			}
			got := want{
				skip:      r.doc.Find("a.skip").Text(),
				apply:     testid(r, "apply").Text(),
				settings:  testid(r, "settings").Find("summary").First().Text(),
				permalink: testid(r, "permalink").Text(),
				panel:     testid(r, "annotations").Find("h2").First().Text(),
				unset:     testid(r, "ns-enforce").Find(`option[value=""]`).Text(),
				title:     r.doc.Find("title").Text(),
			}
			var words map[string]string
			if err := json.Unmarshal([]byte(r.doc.Find(`script#i18n-js[type="application/json"]`).Text()), &words); err != nil {
				t.Fatalf("the script's words: %v", err)
			}
			got.linkCopied, got.noLink = words["linkCopied"], words["noLink"]
			got.desc = w.desc
			if desc := meta(r, "property", "og:description"); !strings.Contains(desc, w.desc) || !strings.Contains(desc, "1. sidecar.istio.io/proxyCPU=200m") {
				t.Errorf("og:description %q lacks %q or the step", desc, w.desc)
			}
			if got != w {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
			// The code in a message is <code> in every language.
			if code := testid(r, "settings").Find("label code").First().Text(); code != "--set" {
				t.Errorf("the install options' code %q", code)
			}
			for other, ow := range wants {
				if other != lang && strings.Contains(r.body, ow.skip) {
					t.Errorf("the %s page has %s's %q", lang, other, ow.skip)
				}
			}
		})
	}
	noMissing(t)
}

// TestErrorAndComparePagesInJapanese: an error page (404) and a comparison word their chrome
// in the reader's language (the status title is the handlers', errors.status.*).
func TestErrorAndComparePagesInJapanese(t *testing.T) {
	h := newServer(t)
	r := getIn(t, h, "/no-such-page", "ja")
	if r.status != http.StatusNotFound {
		t.Fatalf("status %d", r.status)
	}
	if h1 := r.doc.Find("h1").Text(); h1 != "404 見つかりません" {
		t.Errorf("h1 %q", h1)
	}
	if title := r.doc.Find("title").Text(); title != "404 見つかりません — sidecarlab" {
		t.Errorf("title %q", title)
	}
	if back := r.doc.Find(`.error-box a[href="/"]`).Text(); back != "プレイグラウンドに戻る" {
		t.Errorf("the way back %q", back)
	}
	if en := getIn(t, h, "/no-such-page", "en"); en.doc.Find("h1").Text() != "404 Not Found" {
		t.Errorf("English h1 %q", en.doc.Find("h1").Text())
	}

	page := getIn(t, h, stateLink(t, api.State{Manifest: jobYAML})+"&tab=lifecycle", "en")
	var href string
	testid(page, "compare-link").Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Text(), "classic vs native") {
			href = s.AttrOr("href", "")
		}
	})
	if href == "" {
		t.Fatal("no classic-vs-native link on a Job")
	}
	c := getIn(t, h, href, "ja")
	if c.status != http.StatusOK {
		t.Fatalf("compare: %d", c.status)
	}
	if got := c.doc.Find(`[data-testid="side-a"] a`).First().Text(); got != "プレイグラウンドで開く" {
		t.Errorf("compare's link %q", got)
	}
	if got := c.doc.Find("title").Text(); !strings.HasSuffix(got, "の比較 — sidecarlab") {
		t.Errorf("compare's title %q", got)
	}
	noMissing(t)
}

// TestMarkerWordsItsPlace: the editor's marker on a document's bad line says the document the
// way every place in the input is said (wording.Words.At), in each language: in Japanese with
// the one separator, not a full-width colon of its own. In English it reads as it always has.
func TestMarkerWordsItsPlace(t *testing.T) {
	h := newServer(t)
	bad := testkit.Deployment + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   bad: indent\n"
	for _, lang := range i18n.Codes {
		l := i18n.For(lang)
		r := getIn(t, h, stateLink(t, api.State{Manifest: bad}), lang)
		want := wording.In(l).At(2, 0, 0, "", l.T("wording.input.yaml.mapping-values"))
		if got := testid(r, "manifest").AttrOr("data-error-msg", ""); r.status != http.StatusUnprocessableEntity || got != want {
			t.Errorf("%s: status %d, marker %q, want %q", lang, r.status, got, want)
		}
		// The text under the editor says the line as well, in the same words.
		line, _ := strconv.Atoi(testid(r, "manifest").AttrOr("data-error-line", ""))
		col, _ := strconv.Atoi(testid(r, "manifest").AttrOr("data-error-col", ""))
		want = wording.In(l).At(2, line, col, "", l.T("wording.input.yaml.mapping-values"))
		if got := testid(r, "manifest-error").Text(); line == 0 || col != 4 || got != want {
			t.Errorf("%s: the error under the editor %q, want %q", lang, got, want)
		}
	}
	if got, want := wording.English.At(2, 0, 0, "", "why"), "document 2: why"; got != want {
		t.Errorf("English marker %q, want %q", got, want)
	}
	if got := wording.In(i18n.For("ja")).At(2, 0, 0, "", "why"); got != "ドキュメント2: why" {
		t.Errorf("Japanese marker %q", got)
	}
	noMissing(t)
}

// TestShareSecretsPageInKorean: the secrets dialog's chrome (heading, columns, buttons) is in
// the reader's language; the choice the buttons post stays the same value.
func TestShareSecretsPageInKorean(t *testing.T) {
	h := serverConfig(t, Config{Links: newMemLinks()})
	form := url.Values{"manifest": {secretYAML}, "steps": {"[]"}, "tab": {"yaml"}}
	for lang, w := range map[string][3]string{
		"ko": {"공유하기 전에: 이 보기에 비밀 정보가 있습니다", "가리고 공유", "위치"},
		"en": {"Before you share: this view holds secrets", "Redact and share", "Where"},
	} {
		req := shareRequest(form)
		req.Header.Set("Accept-Language", lang)
		r := do(t, h, req)
		if r.status != http.StatusOK {
			t.Fatalf("%s: status %d", lang, r.status)
		}
		got := [3]string{r.doc.Find("#share-secrets-title").Text(), testid(r, "share-redact").Text(), testid(r, "share-secrets-list").Find("th").First().Text()}
		if got != w || testid(r, "share-redact").AttrOr("value", "") != "redact" {
			t.Errorf("%s: got %q, want %q", lang, got, w)
		}
	}
	noMissing(t)
}

// TestAnnotationKindsInEachLanguage: the annotation panel says each value's kind in the reader's
// words (値：リソース量…), not the catalog's ids (before: "値：quantity").
func TestAnnotationKindsInEachLanguage(t *testing.T) {
	h := newServer(t)
	ids := []string{"string", "bool", "integer", "quantity", "port-list", "cidr-list", "enum", "yaml", "json"}
	for _, lang := range []string{"en", "ja", "ko"} {
		r := get(t, h, "/?lang="+lang)
		kinds := r.doc.Find(".a-kind")
		if kinds.Length() < 20 {
			t.Fatalf("%s: %d annotation kinds", lang, kinds.Length())
		}
		kinds.Each(func(_ int, s *goquery.Selection) {
			word := s.Text()[strings.IndexAny(s.Text(), ":：")+1:]
			word = strings.TrimSpace(strings.TrimPrefix(word, "\u00a0"))
			if slices.Contains(ids, word) && word != "yaml" && word != "json" || strings.Contains(word, "page.panel") {
				t.Errorf("%s: the kind reads %q, an id", lang, s.Text())
			}
		})
	}
}
