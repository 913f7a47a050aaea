package diff

import (
	"encoding/json"
	"reflect"
	"testing"
)

// wholeDiff is Values of two JSON values decoded whole: what PrunedTrees must not change.
func wholeDiff(t testing.TB, a, b []byte) []Change {
	t.Helper()
	av, err := decodeJSON(a)
	if err != nil {
		t.Fatal(err)
	}
	bv, err := decodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return Values(av, bv)
}

func prunedDiff(t testing.TB, a, b []byte) []Change {
	t.Helper()
	av, bv, err := PrunedTrees(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return Values(av, bv)
}

// TestPrunedTreesPrune: what is the same on both sides is left out (an equal member, an equal
// named element reduced to its name) and what differs is kept, so the walk is of the differences.
func TestPrunedTreesPrune(t *testing.T) {
	a := `{"kind":"Pod","spec":{"volumes":[{"name":"v","emptyDir":{}}],"containers":[{"name":"app","image":"a"},{"name":"istio-proxy","args":["x"],"resources":{"cpu":"100m"}}]}}`
	b := `{"kind":"Pod","spec":{"volumes":[{"name":"v","emptyDir":{}}],"containers":[{"name":"app","image":"a"},{"name":"istio-proxy","args":["x"],"resources":{"cpu":"200m"}}]}}`
	av, bv, err := PrunedTrees([]byte(a), []byte(b))
	if err != nil {
		t.Fatal(err)
	}
	want := func(cpu string) any {
		return map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app"},
			map[string]any{"name": "istio-proxy", "resources": map[string]any{"cpu": cpu}},
		}}}
	}
	if !reflect.DeepEqual(av, want("100m")) || !reflect.DeepEqual(bv, want("200m")) {
		t.Errorf("pruned:\n%v\n%v", av, bv)
	}
	// Two equal documents leave nothing; a list that is not of named things is decoded whole.
	if av, bv, _ := PrunedTrees([]byte(a), []byte(a)); len(av.(map[string]any)) != 0 || len(bv.(map[string]any)) != 0 {
		t.Errorf("equal documents pruned to %v, %v", av, bv)
	}
	av, bv, _ = PrunedTrees([]byte(`{"args":["a","b"],"x":1}`), []byte(`{"args":["a","c"],"x":1}`))
	if !reflect.DeepEqual(av, map[string]any{"args": []any{"a", "b"}}) || !reflect.DeepEqual(bv, map[string]any{"args": []any{"a", "c"}}) {
		t.Errorf("a list of scalars: %v, %v", av, bv)
	}
}

// TestJSONSplit: the splitter finds the members and elements of JSON as written by json.Marshal
// and by hand (escapes, brackets inside strings, backslashes before a quote, spaces), and
// answers false for what is not an object or array or cannot be split.
func TestJSONSplit(t *testing.T) {
	m, ok := jsonMembers([]byte(` { "a\"}" : "x\\\\" , "b":[1,{"c":"]"}], "\u00e9":null ,"d":-1.5e3,"e":true} `))
	if !ok {
		t.Fatal("not split")
	}
	want := map[string]string{`a"}`: `"x\\\\"`, "b": `[1,{"c":"]"}]`, "é": "null", "d": "-1.5e3", "e": "true"}
	if len(m) != len(want) {
		t.Fatalf("members %q", m)
	}
	for k, v := range want {
		if string(m[k]) != v {
			t.Errorf("member %q = %q, want %q", k, m[k], v)
		}
	}
	if l, ok := jsonElements([]byte(`[ "a,b" ,{"x":[]}, [1,2] ,3]`)); !ok || len(l) != 4 || string(l[0]) != `"a,b"` || string(l[1]) != `{"x":[]}` || string(l[2]) != `[1,2]` || string(l[3]) != "3" {
		t.Errorf("elements %q, %t", l, ok)
	}
	if m, ok := jsonMembers([]byte(`{}`)); !ok || len(m) != 0 {
		t.Errorf("{}: %q %t", m, ok)
	}
	if l, ok := jsonElements([]byte(`[]`)); !ok || len(l) != 0 {
		t.Errorf("[]: %q %t", l, ok)
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"a":1`, `{"a" 1}`, `{"a":1,}x`, `{"a":"1}`, `{1:2}`, `{"a":1}}`, `{"a":}`, ``} {
		if _, ok := jsonMembers([]byte(bad)); ok {
			t.Errorf("%q split as an object", bad)
		}
	}
	for _, bad := range []string{`{}`, `[1`, `[1 2]`, `[1,]x`, `["]`, `[,]`} {
		if _, ok := jsonElements([]byte(bad)); ok {
			t.Errorf("%q split as an array", bad)
		}
	}
	// A list is matched by name only when every element has a unique, non-empty string name.
	for list, named := range map[string]bool{
		`[{"name":"a"},{"name":"b"}]`:      true,
		`[{"name":"a"},{"name":"a"}]`:      false,
		`[{"name":"a"},{"name":""}]`:       false,
		`[{"name":"a"},{"name":1}]`:        false,
		`[{"name":"a"},{"other":"b"}]`:     false,
		`[{"name":"a"},"b"]`:               false,
		`[{"name":"\u0061"},{"name":"a"}]`: false,
	} {
		l, _ := jsonElements([]byte(list))
		if _, _, ok := jsonNames(l); ok != named {
			t.Errorf("%s: named %t, want %t", list, ok, named)
		}
	}
}

// FuzzPrunedTrees: for any two JSON values, written as json.Marshal writes them, the diff of the
// pruned trees is the diff of the whole ones.
func FuzzPrunedTrees(f *testing.F) {
	f.Add(`{"a":[{"name":"x","v":1},{"name":"y","v":2}]}`, `{"a":[{"name":"y","v":2},{"name":"x","v":3}]}`)
	f.Add(`{"containers":[{"name":"p","args":["-o","1"]}],"b":{}}`, `{"initContainers":[{"name":"p","args":["-o","2"],"restartPolicy":"Always"}]}`)
	f.Add(`{"a":{"name":"n","b":[1,2]}}`, `{"a":{"name":"m","b":[2]}}`)
	f.Add(`[{"name":"a"}]`, `{"name":"a"}`)
	f.Add(`{"x":"\u003c\\\"y"}`, `{"x":"\u003c\\\"z"}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var av, bv any
		if json.Unmarshal([]byte(a), &av) != nil || json.Unmarshal([]byte(b), &bv) != nil {
			return
		}
		aj, err := json.Marshal(av)
		if err != nil {
			return
		}
		bj, err := json.Marshal(bv)
		if err != nil {
			return
		}
		want, got := wholeDiff(t, aj, bj), prunedDiff(t, aj, bj)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s\n%s\npruned: %v\nwhole:  %v", aj, bj, got, want)
		}
	})
}

// TestPrunedTreesDepth: below maxPruneDepth a value is decoded whole (equal members kept), so a
// deeply nested value costs no more than decoding it; the diff is the same either way.
func TestPrunedTreesDepth(t *testing.T) {
	nest := func(depth int, leaf string) []byte {
		s := `{"same":1,"leaf":"` + leaf + `"}`
		for range depth {
			s = `{"same":1,"in":` + s + `}`
		}
		return []byte(s)
	}
	// "same" is left out down to the bound, and kept from there on.
	kept := func(v any) (pruned, whole int) {
		for m, ok := v.(map[string]any); ok; m, ok = m["in"].(map[string]any) {
			if _, has := m["same"]; has {
				whole++
			} else {
				pruned++
			}
		}
		return
	}
	for _, depth := range []int{3, maxPruneDepth + 10} {
		a, b := nest(depth, "x"), nest(depth, "y")
		av, _, err := PrunedTrees(a, b)
		if err != nil {
			t.Fatal(err)
		}
		pruned, whole := kept(av)
		if wantPruned := min(depth+1, maxPruneDepth); pruned != wantPruned || pruned+whole != depth+1 {
			t.Errorf("depth %d: %d levels pruned, %d whole; want %d pruned", depth, pruned, whole, wantPruned)
		}
		if got, want := prunedDiff(t, a, b), wholeDiff(t, a, b); !reflect.DeepEqual(got, want) || len(want) != 1 {
			t.Errorf("depth %d: pruned diff %v, whole %v", depth, got, want)
		}
	}
}
