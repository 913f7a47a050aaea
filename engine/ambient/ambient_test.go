package ambient

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/catalog"

	"github.com/google/go-cmp/cmp"
	"istio.io/api/annotation"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// knownPlaces are the places a row may name.
var knownPlaces = []Place{PlaceZtunnel, PlaceWaypoint, PlaceWaypointResources, PlaceDataplaneMode, PlaceRerouteVirtualInterfaces}

// codeLink is a link into Istio's code: the commit, the file and the line.
var codeLink = regexp.MustCompile(`^/istio/istio/blob/([^/]+)/(.+)$`)

// check is every problem of a table against the names of a catalog: an annotation of the
// catalog without a row, a row of an annotation the catalog lacks, a second row, rows out of
// order, a row without a verdict or a reason, an Elsewhere row without a place (or a place on
// another), a row without a source, and a source that is not an https link to istio.io or to
// github.com/istio/ — a link into Istio's code at the checked commit, with the text it shows.
func check(rows []Row, catalog []string) []string {
	var problems []string
	has := map[string]bool{}
	for i, r := range rows {
		name := r.Annotation
		if has[name] {
			problems = append(problems, name+": a second row")
		}
		has[name] = true
		if i > 0 && rows[i-1].Annotation >= name {
			problems = append(problems, name+": out of order, after "+rows[i-1].Annotation)
		}
		if !slices.Contains(catalog, name) {
			problems = append(problems, name+": not in the catalog")
		}
		switch r.Verdict {
		case Honoured, Ignored:
			if len(r.Places) > 0 {
				problems = append(problems, name+": places, but the verdict is "+string(r.Verdict))
			}
		case Elsewhere:
			if len(r.Places) == 0 {
				problems = append(problems, name+": elsewhere, but no place")
			}
		default:
			problems = append(problems, name+": no verdict ("+strconv.Quote(string(r.Verdict))+")")
		}
		for _, p := range r.Places {
			if !slices.Contains(knownPlaces, p) {
				problems = append(problems, name+": unknown place "+strconv.Quote(string(p)))
			}
		}
		if r.Reason == "" {
			problems = append(problems, name+": no reason")
		}
		if len(r.Sources) == 0 {
			problems = append(problems, name+": no source")
		}
		for _, s := range r.Sources {
			if p := sourceProblem(s); p != "" {
				problems = append(problems, name+": "+s.URL+": "+p)
			}
		}
	}
	for _, name := range catalog {
		if !has[name] {
			problems = append(problems, name+": no row")
		}
	}
	return problems
}

// sourceProblem is what is wrong with a source, or "".
func sourceProblem(s Source) string {
	u, err := url.Parse(s.URL)
	switch {
	case err != nil:
		return err.Error()
	case u.Scheme != "https":
		return "not https"
	case u.Host == "istio.io":
		return ""
	case u.Host != "github.com" || !strings.HasPrefix(u.Path, "/istio/"):
		return "neither istio.io nor github.com/istio/"
	}
	m := codeLink.FindStringSubmatch(u.Path)
	if m == nil {
		if s.shows != "" {
			return "shows text, but is no link into Istio's code"
		}
		return ""
	}
	switch {
	case m[1] != checkedAt:
		return "not at the checked commit " + checkedAt
	case !strings.HasPrefix(u.Fragment, "L"):
		return "no line"
	case s.shows == "":
		return "no text it shows"
	}
	if _, err := strconv.Atoi(strings.TrimPrefix(u.Fragment, "L")); err != nil {
		return "no line"
	}
	return ""
}

// checkLines is every link into Istio's code whose line does not hold the text it is cited for,
// reading the files with read (from the pinned module).
func checkLines(rows []Row, read func(path string) ([]byte, error)) []string {
	var problems []string
	for _, r := range rows {
		for _, s := range r.Sources {
			u, err := url.Parse(s.URL)
			if err != nil || s.shows == "" {
				continue
			}
			m := codeLink.FindStringSubmatch(u.Path)
			n, err := strconv.Atoi(strings.TrimPrefix(u.Fragment, "L"))
			if m == nil || err != nil {
				continue
			}
			data, err := read(m[2])
			if err != nil {
				problems = append(problems, r.Annotation+": "+err.Error())
				continue
			}
			lines := bytes.Split(data, []byte("\n"))
			if n < 1 || n > len(lines) || !bytes.Contains(lines[n-1], []byte(s.shows)) {
				problems = append(problems, r.Annotation+": line "+strconv.Itoa(n)+" of "+m[2]+" does not show "+strconv.Quote(s.shows))
			}
		}
	}
	return problems
}

// catalogNames are the annotations the playground offers: the catalog of the pinned Istio.
func catalogNames() []string {
	var out []string
	for _, a := range catalog.DefaultCatalog().All() {
		out = append(out, a.Name)
	}
	return out
}

// istioFiles reads files of the pinned istio.io/istio module.
func istioFiles(t *testing.T) func(string) ([]byte, error) {
	t.Helper()
	dir := testkit.IstioDir(t)
	return func(path string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(path))) }
}

// TestTable: the table has one row for each annotation of the catalog and none for another,
// each with a verdict, a reason, a place where the verdict is elsewhere, and sources; every link
// into Istio's code shows, in the pinned module, the text it is cited for.
func TestTable(t *testing.T) {
	if v := engine.Version().Commit; v != checkedAt {
		t.Fatalf("the table was checked against istio.io/istio %s, the module is at %s: check every row against the new code, then set checkedAt", checkedAt, v)
	}
	for _, p := range check(table, catalogNames()) {
		t.Error(p)
	}
	for _, p := range checkLines(table, istioFiles(t)) {
		t.Error(p)
	}
}

// clone is a copy of rows that can be changed without changing them.
func clone(rows []Row) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		r.Places = slices.Clone(r.Places)
		r.Sources = slices.Clone(r.Sources)
		out[i] = r
	}
	return out
}

// index is where the row of name is in rows.
func index(t *testing.T, rows []Row, name string) int {
	t.Helper()
	i := slices.IndexFunc(rows, func(r Row) bool { return r.Annotation == name })
	if i < 0 {
		t.Fatalf("no row of %s", name)
	}
	return i
}

// TestCheckTrips: the checks report a table that is broken in each way they look for.
func TestCheckTrips(t *testing.T) {
	cpu, status := annotation.SidecarProxyCPU.Name, annotation.SidecarStatus.Name
	for name, c := range map[string]struct {
		breakIt func(t *testing.T, rows []Row) []Row
		want    string
	}{
		"a row missing": {func(t *testing.T, rows []Row) []Row {
			return slices.Delete(rows, index(t, rows, cpu), index(t, rows, cpu)+1)
		}, cpu + ": no row"},
		"a row of another annotation": {func(t *testing.T, rows []Row) []Row {
			return append(rows, Row{Annotation: "zz.example.com/mine", Verdict: Ignored, Reason: reasonInjector, Sources: rows[0].Sources})
		}, "zz.example.com/mine: not in the catalog"},
		"a second row": {func(t *testing.T, rows []Row) []Row {
			i := index(t, rows, cpu)
			return slices.Insert(rows, i, rows[i])
		}, cpu + ": a second row"},
		"out of order": {func(t *testing.T, rows []Row) []Row {
			rows[0], rows[1] = rows[1], rows[0]
			return rows
		}, "out of order"},
		"no verdict": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, status)].Verdict = ""
			return rows
		}, status + ": no verdict"},
		"elsewhere without a place": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, cpu)].Places = nil
			return rows
		}, cpu + ": elsewhere, but no place"},
		"a place on an honoured row": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, status)].Places = []Place{PlaceZtunnel}
			return rows
		}, status + ": places, but the verdict is honoured"},
		"an unknown place": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, cpu)].Places = []Place{"somewhere"}
			return rows
		}, cpu + `: unknown place "somewhere"`},
		"no reason": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, status)].Reason = ""
			return rows
		}, status + ": no reason"},
		"no source": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, status)].Sources = nil
			return rows
		}, status + ": no source"},
		"http": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, status)].Sources[0] = link("http://istio.io/latest/docs/")
			return rows
		}, "not https"},
		"another site": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, status)].Sources[0] = link("https://example.com/istio/")
			return rows
		}, "neither istio.io nor github.com/istio/"},
		"another owner on GitHub": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, status)].Sources[0] = link("https://github.com/someone/istio/blob/master/x.go#L1")
			return rows
		}, "neither istio.io nor github.com/istio/"},
		"code at another commit": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, status)].Sources[0].URL = strings.Replace(rows[index(t, rows, status)].Sources[0].URL, checkedAt, "master", 1)
			return rows
		}, "not at the checked commit"},
		"code without a line": {func(t *testing.T, rows []Row) []Row {
			s := &rows[index(t, rows, status)].Sources[0]
			s.URL, _, _ = strings.Cut(s.URL, "#")
			return rows
		}, "no line"},
		"code without its text": {func(t *testing.T, rows []Row) []Row {
			rows[index(t, rows, status)].Sources[0].shows = ""
			return rows
		}, "no text it shows"},
	} {
		t.Run(name, func(t *testing.T) {
			p := check(c.breakIt(t, clone(table)), catalogNames())
			if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, c.want) }) {
				t.Errorf("no problem containing %q in %q", c.want, p)
			}
		})
	}
}

// TestCheckLinesTrips: a link whose line does not show its text, or is past the file's end, is
// reported, read from the same files as the table's.
func TestCheckLinesTrips(t *testing.T) {
	read := istioFiles(t)
	status := annotation.SidecarStatus.Name
	rows := clone(table)
	rows[index(t, rows, status)].Sources[0].shows = "annotation.SidecarInject.Name"
	if p := checkLines(rows, read); !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, `does not show "annotation.SidecarInject.Name"`) }) {
		t.Errorf("a line that does not show its text: %q", p)
	}
	rows = clone(table)
	rows[index(t, rows, status)].Sources[0] = code("cni/pkg/util/enablement_selector.go", 100000, "podHasSidecar")
	if p := checkLines(rows, read); !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "line 100000 of") }) {
		t.Errorf("a line past the end: %q", p)
	}
	rows = clone(table)
	rows[index(t, rows, status)].Sources[0] = code("cni/pkg/no/such/file.go", 1, "x")
	if p := checkLines(rows, read); len(p) != 1 {
		t.Errorf("a file that is not there: %q", p)
	}
}

func TestRows(t *testing.T) {
	cpu, redirection := annotation.SidecarProxyCPU.Name, annotation.AmbientRedirection.Name
	got := Rows([]string{cpu, "example.com/not-istio", redirection, cpu})
	var names []string
	for _, r := range got {
		names = append(names, r.Annotation)
	}
	if diff := cmp.Diff([]string{cpu, redirection}, names); diff != "" {
		t.Errorf("Rows (-want +got):\n%s", diff)
	}
	if got[0].Verdict != Elsewhere || got[1].Verdict != Honoured {
		t.Errorf("verdicts %s, %s", got[0].Verdict, got[1].Verdict)
	}
	if len(Rows(nil)) != 0 {
		t.Error("rows of no names")
	}
	for _, r := range table {
		if got := Rows([]string{r.Annotation}); len(got) != 1 || got[0].Annotation != r.Annotation {
			t.Errorf("Rows(%s) = %v", r.Annotation, got)
		}
	}
}

// TestMessages: every verdict, place and reason of the table has words in every language.
func TestMessages(t *testing.T) {
	var ids []string
	for _, r := range table {
		ids = append(ids, r.Verdict.MessageID(), r.Reason.MessageID())
		for _, p := range r.Places {
			ids = append(ids, p.MessageID())
		}
	}
	for _, r := range Rules() {
		ids = append(ids, r.MessageID())
	}
	ids = append(append(ids, RunTime()...), "ambient.enrol.any", FactNoProxy, FactNoRace, FactJobCompletes, FactOutside)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, code := range i18n.Codes {
		l := i18n.For(code)
		for _, id := range ids {
			if got := l.T(id); got == id || got == "" {
				t.Errorf("%s %s: no words", code, id)
			}
		}
	}
	if m := i18n.Missing(); len(m) != 0 {
		t.Errorf("missing messages: %q", m)
	}
}
