package i18n

import (
	"testing"
	"testing/fstest"
)

// TestParticles: each pair takes the form of the word before it — Hangul by its final consonant,
// numbers as Korean reads them, Latin words by English sound, capitals by the letters' names — and
// stays as both forms where the word cannot be read.
func TestParticles(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// Hangul: with and without a final consonant; ㄹ takes 로.
		{"파드이(가)", "파드가"},
		{"네임스페이스을(를)", "네임스페이스를"},
		{"컨테이너은(는)", "컨테이너는"},
		{"사이드카와(과)", "사이드카와"},
		{"웹훅이(가)", "웹훅이"},
		{"레이블을(를)", "레이블을"},
		{"설정은(는)", "설정은"},
		{"단계와(과)", "단계와"}, // 계: no final consonant
		{"목록와(과)", "목록과"},
		{"파일(으)로", "파일로"}, // ㄹ
		{"웹훅(으)로", "웹훅으로"},
		{"파드(으)로", "파드로"},
		// Numbers: the last digit's reading, or the unit of the trailing zeros.
		{"1(으)로", "1로"},   // 일: ㄹ
		{"3(으)로", "3으로"},  // 삼
		{"2이(가)", "2가"},   // 이
		{"4을(를)", "4를"},   // 사
		{"6은(는)", "6은"},   // 육
		{"0이(가)", "0이"},   // 영
		{"10이(가)", "10이"}, // 십
		{"200(으)로", "200으로"},
		{"1,000은(는)", "1,000은"},                 // 천
		{"1.34이(가)", "1.34가"},                   // …사
		{"1.31이(가)", "1.31이"},                   // …일
		{"1.31(으)로", "1.31로"},                   // …일: ㄹ
		{"8080(으)로", "8080으로"},                  // 팔천팔십
		{"1000000000000와(과)", "1000000000000와"}, // 조
		// A number glued to letters is read in English.
		{"v1(으)로", "v1으로"},      // 원
		{"IPv6을(를)", "IPv6를"},   // 식스
		{"http2와(과)", "http2와"}, // 투
		{"v10이(가)", "v10이"},     // 텐
		{"v12이(가)", "v12가"},     // 트웰브
		{"v20이(가)", "v20가"},     // 트웬티
		// Latin words by sound.
		{"istio-proxy이(가)", "istio-proxy가"},
		{"sidecarlab이(가)", "sidecarlab이"}, // 랩
		{"spec을(를)", "spec을"},             // 스펙
		{"istio-init은(는)", "istio-init은"}, // 이닛
		{"list은(는)", "list는"},             // 리스트
		{"boot은(는)", "boot는"},             // 부트
		{"json(으)로", "json으로"},            // 제이슨
		{"yaml(으)로", "yaml로"},             // 야믈: ㄹ
		{"kubectl(으)로", "kubectl로"},
		{"file(으)로", "file로"}, // 파일: silent e
		{"name이(가)", "name이"}, // 네임
		{"true이(가)", "true가"}, // 트루
		{"string이(가)", "string이"},
		{"webhook이(가)", "webhook이"},
		{"stack이(가)", "stack이"},
		{"pod을(를)", "pod를"},       // 파드
		{"config을(를)", "config를"}, // 컨피그
		{"server와(과)", "server와"},
		{"job와(과)", "job과"},
		{"--request-timeout은(는)", "--request-timeout은"}, // 타임아웃
		// Capitals letter by letter.
		{"proxyCPU이(가)", "proxyCPU가"}, // 씨피유
		{"YAML(으)로", "YAML로"},         // 엘
		{"JSON와(과)", "JSON과"},         // 엔
		{"HTTP을(를)", "HTTP를"},         // 피
		{"b은(는)", "b는"},               // 비
		{"r은(는)", "r은"},               // 알
		// Closing quotes, backticks and brackets are not read.
		{`"true"이(가)`, `"true"가`},
		{"`istio-proxy`을(를)", "`istio-proxy`를"},
		{"`restartPolicy: Always`(으)로", "`restartPolicy: Always`로"},
		{"(spec)와(과)", "(spec)과"},
		// A parenthesis after a word: the particle follows the word.
		{"문서 3(Job x)을(를)", "문서 3(Job x)을"},
		{"웹훅 istio.io(경로 /inject)을(를)", "웹훅 istio.io(경로 /inject)를"},
		{"값 (a(b))은(는)", "값 (a(b))는"},
		{"그림a)은(는)", "그림a)는"},
		{"“주입”을(를)", "“주입”을"},
		// Several in one message; text without a pair is left alone.
		{"A와(과) B(으)로의 변경", "A와 B로의 변경"},
		{"값(0: 없음)", "값(0: 없음)"},
		// What cannot be read keeps both forms.
		{"*이(가)", "*이(가)"},
		{"…을(를)", "…을(를)"},
		{"(으)로", "(으)로"},
		{"漢字은(는)", "漢字은(는)"},
	} {
		if got := particles(c.in); got != c.want {
			t.Errorf("particles(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestParticlesInMessages: the Korean Localizer chooses the particle after a placeholder's value;
// Japanese and English text is left as written.
func TestParticlesInMessages(t *testing.T) {
	fsys := fstest.MapFS{
		"locales/t.en.toml": {Data: []byte("[t]\nset = \"{{.Key}} is set\"\n")},
		"locales/t.ja.toml": {Data: []byte("[t]\nset = \"{{.Key}}は(が)設定済み\"\n")},
		"locales/t.ko.toml": {Data: []byte("[t]\nset = \"{{.Key}}이(가) 설정되었습니다\"\nplain = \"값은(는) 없음\"\n")},
	}
	en := newLocalizer(fsys, "en", nil)
	ko, ja := newLocalizer(fsys, "ko", en), newLocalizer(fsys, "ja", en)
	for _, c := range []struct{ got, want string }{
		{ko.T("t.set", "Key", "proxyCPU"), "proxyCPU가 설정되었습니다"},
		{ko.T("t.set", "Key", "sidecar.istio.io/inject"), "sidecar.istio.io/inject가 설정되었습니다"},
		{ko.T("t.set", "Key", "레이블"), "레이블이 설정되었습니다"},
		{ko.TMap("t.set", map[string]string{"Key": "1"}), "1이 설정되었습니다"},
		{ko.T("t.set", "Key", "*"), "*이(가) 설정되었습니다"},
		{ko.T("t.plain"), "값은 없음"},
		{ja.T("t.set", "Key", "a"), "aは(が)設定済み"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
