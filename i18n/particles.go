package i18n

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Korean particle has two forms, chosen by the sound of the word before it: 이/가, 을/를, 은/는,
// 과/와 by whether the word ends in a consonant (batchim), 으로/로 by the same except that a word
// ending in ㄹ takes 로. A catalog cannot know the word a placeholder brings, so the Korean
// catalogs write both forms after a placeholder — {{.Key}}이(가), {{.To}}(으)로 — and the
// Localizer chooses one once the word is known (particles). Where it cannot tell how the word is
// read, it leaves both forms: a reader understands those, as Korean software has always written
// them.

// particle is one pair as the catalogs write it: the text, whether the pair comes before the
// parenthesis (이(가): the text is found at the "(" and the pair starts before it), and the forms
// after a consonant and after a vowel.
type particle struct {
	text               string
	afterCons, afterVo string
	rieulTakesVowel    bool // 로 after ㄹ, as after a vowel
}

// pairs as written in the catalogs. (으)로's text starts at its parenthesis; the others end with it.
var particlePairs = []particle{
	{text: "이(가)", afterCons: "이", afterVo: "가"},
	{text: "을(를)", afterCons: "을", afterVo: "를"},
	{text: "은(는)", afterCons: "은", afterVo: "는"},
	{text: "와(과)", afterCons: "과", afterVo: "와"},
	{text: "(으)로", afterCons: "으로", afterVo: "로", rieulTakesVowel: true},
}

// particles chooses the form of every particle pair in s from the word just before it (see
// coda). It is applied to every Korean message once its placeholders are filled.
func particles(s string) string {
	if !strings.Contains(s, "(") {
		return s
	}
	var b strings.Builder
	done := 0 // s[:done] is written to b
	for i := 0; i < len(s); {
		p, ok := pairAt(s, i)
		if !ok {
			i++
			continue
		}
		if ending, known := coda(s[:i]); known {
			b.WriteString(s[done:i])
			switch {
			case ending.consonant && !(ending.rieul && p.rieulTakesVowel):
				b.WriteString(p.afterCons)
			default:
				b.WriteString(p.afterVo)
			}
			done = i + len(p.text)
		}
		i += len(p.text)
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// pairAt is the particle pair that starts at s[i:], if one does.
func pairAt(s string, i int) (particle, bool) {
	for _, p := range particlePairs {
		if strings.HasPrefix(s[i:], p.text) {
			return p, true
		}
	}
	return particle{}, false
}

// ending is how a word ends when read aloud in Korean.
type ending struct {
	consonant bool // ends in a final consonant (받침)
	rieul     bool // that consonant is ㄹ
}

// quotes are what may stand between a word and its particle without being read: quotes, angle
// brackets and the backticks of code ("true"를, `istio-proxy`가, <hash>는).
const quotes = "\"'`>”’」』"

// word is the text whose last word a particle follows: quotes dropped, and a parenthesis after a
// word too — Korean attaches the particle to the word before the parenthesis, 문서 3(Job x)을 —
// unless nothing stands before it, when its content is the word: (spec)과.
func word(before string) string {
	for {
		before = strings.TrimRight(before, quotes)
		closer, size := utf8.DecodeLastRuneInString(before)
		open, ok := brackets[closer]
		if !ok {
			return before
		}
		inner := before[:len(before)-size]
		at := matching(inner, open, closer)
		if at < 0 { // unmatched: read past it
			before = inner
			continue
		}
		if prev, _ := utf8.DecodeLastRuneInString(inner[:at]); at > 0 && !unicode.IsSpace(prev) {
			before = inner[:at]
		} else {
			before = inner[at+utf8.RuneLen(open):]
		}
	}
}

// brackets are the closing brackets a particle may follow, with their opening ones.
var brackets = map[rune]rune{')': '(', '）': '（', ']': '['}

// matching is the index of the bracket open that s's unclosed closer closes, or -1.
func matching(s string, open, closer rune) int {
	depth := 0
	for i := len(s); i > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		i -= n
		switch {
		case r == closer:
			depth++
		case r == open && depth == 0:
			return i
		case r == open:
			depth--
		}
	}
	return -1
}

// coda is how the text before a particle ends when read aloud, and whether that could be told:
//
//   - a Hangul syllable by its final consonant: (code−0xAC00) % 28, 0 for none, 8 for ㄹ;
//   - a number as Korean reads it (Sino-Korean): by its last non-zero digit (1 일, 3 삼, 6 육,
//     7 칠, 8 팔 end in a consonant; 2 이, 4 사, 5 오, 9 구 do not), or by the unit its trailing
//     zeros make (10 십, 100 백, 1000 천, 10000 만, 10⁸ 억: all consonants; 10¹² 조: none); 0 is 영.
//     Only the part after the last dot counts (1.34 ends like 34: 사). A number glued to Latin
//     letters is part of a name read in English instead (englishNumberEnding);
//   - a Latin word by English pronunciation (latinEnding); letters alone (CPU, a trailing capital
//     run of proxyCPU) by the letters' names, of which only L 엘, M 엠, N 엔, R 알 end in a consonant.
//
// Anything else (a symbol, nothing at all) cannot be told: the caller keeps both forms.
func coda(before string) (ending, bool) {
	before = word(before)
	r, _ := utf8.DecodeLastRuneInString(before)
	switch {
	case r >= 0xAC00 && r <= 0xD7A3:
		final := (r - 0xAC00) % 28
		return ending{consonant: final != 0, rieul: final == 8}, true
	case r >= '0' && r <= '9':
		digits := strings.TrimRight(before, "0123456789")
		if c, _ := utf8.DecodeLastRuneInString(digits); c < utf8.RuneSelf && isLatin(byte(c)) {
			return englishNumberEnding(before[len(digits):]), true
		}
		return numberEnding(before), true
	case r < utf8.RuneSelf && isLatin(byte(r)):
		start := len(before)
		for start > 0 && isLatin(before[start-1]) {
			start--
		}
		return latinEnding(before[start:]), true
	}
	return ending{}, false
}

func isLatin(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// digitEndings are 0–9 read in Sino-Korean: 영 일 이 삼 사 오 육 칠 팔 구.
var digitEndings = [10]ending{
	{consonant: true}, {consonant: true, rieul: true}, {}, {consonant: true}, {}, {},
	{consonant: true}, {consonant: true, rieul: true}, {consonant: true, rieul: true}, {},
}

// numberEnding is how the number that ends s ends when read in Korean.
func numberEnding(s string) ending {
	start := len(s)
	for start > 0 && (s[start-1] >= '0' && s[start-1] <= '9' || s[start-1] == ',') {
		start--
	}
	digits := strings.ReplaceAll(s[start:], ",", "")
	zeros := len(digits) - len(strings.TrimRight(digits, "0"))
	switch {
	case zeros == len(digits): // 0, 00: 영
		return ending{consonant: true}
	case zeros == 0:
		return digitEndings[digits[len(digits)-1]-'0']
	case zeros >= 12 && zeros < 16: // 조
		return ending{}
	default: // 십, 백, 천, 만, 억, 경
		return ending{consonant: true}
	}
}

// englishNumberEnding is how a number glued to Latin letters (v1, IPv6, http2) ends: such a
// name is read in English, 브이원, 아이피브이식스. One 원, seven 세븐, nine 나인, ten 텐, eleven
// 일레븐 and the teens (-틴) end in ㄴ; the other digits' names, twelve 트웰브 and the round tens
// and hundreds (twenty 트웬티, hundred 헌드레드), in a vowel.
func englishNumberEnding(digits string) ending {
	last := digits[len(digits)-1]
	if len(digits) >= 2 && digits[len(digits)-2] == '1' {
		return ending{consonant: last != '2'}
	}
	return ending{consonant: last == '1' || last == '7' || last == '9'}
}

// latinEnding is how a Latin word ends when read in Korean, by English pronunciation as Korean
// loanwords write it. A word that ends in capitals (CPU, proxyCPU, a single letter) is read letter
// by letter. Otherwise, by its last letters:
//
//   - m ㅁ, n ㄴ, ng ㅇ, l ㄹ (name 네임, json 제이슨, string 스트링, yaml 야믈), and the same
//     before a silent e: -me, -ne, -le (time 타임, line 라인, file 파일);
//   - b, c, p, t after a single short vowel (job 잡, spec 스펙, map 맵, init 이닛, secret 시크릿),
//     and -ck, -ook, -out (stack 스택, webhook 웹훅, timeout 타임아웃), end in a consonant;
//   - anything else ends in a vowel: d, g, k, s, x, f, v and the like take an 으 (pod 파드,
//     config 컨피그, ports 포츠), r and w are silent (server 서버), -st, -rt, -nt and other
//     consonant pairs take 으 too (list 리스트, port 포트, inject 인젝트), and so does a long
//     vowel (boot 부트, loop 루프).
//
// A heuristic: English spelling does not settle sound, and some words are read both ways.
func latinEnding(w string) ending {
	if c := w[len(w)-1]; c >= 'A' && c <= 'Z' || len(w) == 1 {
		switch c &^ 0x20 { // upper case
		case 'L', 'R':
			return ending{consonant: true, rieul: true}
		case 'M', 'N':
			return ending{consonant: true}
		}
		return ending{}
	}
	w = strings.ToLower(w)
	if len(w) > 2 && (strings.HasSuffix(w, "me") || strings.HasSuffix(w, "ne") || strings.HasSuffix(w, "le")) {
		w = w[:len(w)-1] // a silent e
	}
	n := len(w)
	last := w[n-1]
	switch {
	case last == 'l':
		return ending{consonant: true, rieul: true}
	case last == 'm' || last == 'n' || strings.HasSuffix(w, "ng"):
		return ending{consonant: true}
	case strings.HasSuffix(w, "ck") || strings.HasSuffix(w, "ook") || strings.HasSuffix(w, "out"):
		return ending{consonant: true}
	case strings.ContainsRune("bcpt", rune(last)):
		// After a single vowel: "init", "spec", "at"; not "boot", "wait", "list".
		short := n >= 2 && isVowel(w[n-2]) && (n == 2 || !isVowel(w[n-3]))
		return ending{consonant: short}
	}
	return ending{}
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
