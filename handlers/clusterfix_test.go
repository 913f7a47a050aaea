package handlers

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestFixesInEveryMode walks every fix of the Cluster tab in every mode a user can be in — the
// default installation, install options, a revision, a pasted mesh, a mesh read from the cluster
// — and holds, per mode, that each fix either moves the verdict when applied or, where it cannot,
// is replaced by what to do instead: the key to set in the installation, and a preview of the
// mesh with it through the upgrade path, whose new side the fix does move.
//
// The fixes that cannot apply are this list: Istio CNI and the seccomp profile are install
// options (--set), and a mesh that gives its own values (pasted, or read from a cluster) is not
// reinstalled by one; the labels and the manifest are the user's in every mode.
func TestFixesInEveryMode(t *testing.T) {
	t.Parallel()
	h := clusterServer(t)
	def, err := eng.Install(t.Context(), engine.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	read := decodeLocation(t, postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "clusterMesh": {"canary"}})).Settings.Install
	const hold = "values.global.proxy.holdApplicationUntilProxyStarts=true"
	modes := []struct {
		name    string
		install engine.InstallOptions
		// inject is the namespace label that has the mode's webhooks inject.
		inject [2]string
		cannot []string
		// annotated is the fix for a Pod that asks with the annotation: the label instead, but for
		// a revision's webhooks, which read istio.io/rev on the Pod, not sidecar.istio.io/inject —
		// there, labelling the namespace for the revision.
		annotated string
	}{
		{"default", engine.InstallOptions{}, [2]string{"istio-injection", "enabled"}, nil, fixLabel},
		{"install options", engine.InstallOptions{Set: []string{hold}}, [2]string{"istio-injection", "enabled"}, nil, fixLabel},
		{"a revision", engine.InstallOptions{Set: []string{"revision=canary"}}, [2]string{"istio.io/rev", "canary"}, nil, fixLabelInjection},
		{"a pasted mesh", engine.InstallOptions{Mesh: engine.OwnMesh{InjectorConfig: def.InjectorConfig, Values: def.Values, MeshConfig: def.MeshConfigYAML}},
			[2]string{"istio-injection", "enabled"}, []string{fixCNI, fixSeccomp}, fixLabel},
		{"a pasted mesh config alone", engine.InstallOptions{Mesh: engine.OwnMesh{MeshConfig: def.MeshConfigYAML}}, [2]string{"istio-injection", "enabled"}, nil, fixLabel},
		{"a mesh read from the cluster", read, [2]string{"istio.io/rev", "canary"}, []string{fixCNI, fixSeccomp}, fixLabelInjection},
	}
	annotated := strings.Replace(testkit.Deployment, "    metadata:\n      labels:\n", "    metadata:\n      annotations:\n        sidecar.istio.io/inject: \"true\"\n      labels:\n", 1)
	situations := []struct {
		name, manifest, enforce string
		labelled                bool
		fix                     string
		// fixed says the problem the fix is for is gone from a Cluster tab or an upgrade's new side.
		fixed func(text string, injected bool) bool
	}{
		{"the namespace is not labelled", testkit.Deployment, "", false, fixLabelInjection, func(_ string, injected bool) bool { return injected }},
		{"the annotation where the label belongs", annotated, "", false, fixLabel, func(_ string, injected bool) bool { return injected }},
		{"istio-init under baseline", testkit.Deployment, "baseline", true, fixCNI, func(text string, injected bool) bool {
			return injected && !strings.Contains(text, `"NET_ADMIN"`)
		}},
		{"Istio's containers under restricted", testkit.Deployment, "restricted", true, fixSeccomp, func(text string, injected bool) bool {
			return injected && !slices.ContainsFunc(strings.Split(text, "\n"), istioSeccompViolation)
		}},
	}
	for _, m := range modes {
		for _, sit := range situations {
			t.Run(m.name+"/"+sit.name, func(t *testing.T) {
				labels := map[string]string{}
				if sit.labelled {
					labels[m.inject[0]] = m.inject[1]
				}
				if sit.enforce != "" {
					labels[labelEnforce] = sit.enforce
				}
				st := api.State{Istio: engine.Version().Istio, Manifest: sit.manifest,
					Settings: engine.Settings{Install: m.install, Namespace: engine.Namespace{Name: "shop", Labels: labels}}}
				fix := sit.fix
				if fix == fixLabel {
					fix = m.annotated
				}
				before := clusterPage(t, h, st)
				if sit.fixed(clusterText(before), injected(before)) {
					t.Fatalf("the problem is not there to fix:\n%s", clusterText(before))
				}
				button := testid(before, "settings-fix-"+fix)
				instead := testid(before, "settings-fix-instead-"+fix)
				if slices.Contains(m.cannot, fix) {
					if button.Length() != 0 || instead.Length() != 1 {
						t.Fatalf("a fix that cannot apply here: %d buttons, %d insteads; fixes %q", button.Length(), instead.Length(), fixes(before))
					}
					option := settingsFixOptions[fix]
					if !strings.Contains(instead.Text(), option) {
						t.Fatalf("the instead does not name %s: %q", option, instead.Text())
					}
					href, _ := instead.Find(`a[data-testid="settings-fix-preview"]`).Attr("href")
					if !strings.HasPrefix(href, "/upgrade?") {
						t.Fatalf("the preview's link %q", href)
					}
					up := get(t, h, href)
					newSide := up.doc.Find(`[data-testid="admission-b"]`)
					if up.status != 200 || newSide.Length() != 1 {
						t.Fatalf("the preview: %d, new side's admission %d", up.status, newSide.Length())
					}
					if !strings.Contains(testid(up, "upgrade-set").Text(), option) {
						t.Fatalf("the preview does not say it sets %s: %q", option, testid(up, "upgrade-set").Text())
					}
					oldSide := up.doc.Find(`[data-testid="admission-a"]`).Text()
					proxy := func(side string) bool {
						return strings.Contains(up.doc.Find(`[data-testid="side-`+side+`"]`).Text(), "istio-proxy")
					}
					if sit.fixed(oldSide, proxy("a")) || !sit.fixed(newSide.Text(), proxy("b")) {
						t.Fatalf("the preview does not move the verdict:\nold: %s\nnew: %s", oldSide, newSide.Text())
					}
					// What the words say to set in the installation moves it: the key in the
					// mesh's own values.
					keyed := st
					keyed.Settings.Install.Mesh.Values = withValuesKey(t, keyed.Settings.Install.Mesh.Values, settingsFixKeys[fix])
					if page := clusterPage(t, h, keyed); !sit.fixed(clusterText(page), injected(page)) {
						t.Fatalf("the mesh with %s:\n%s", settingsFixKeys[fix], clusterText(page))
					}
					return
				}
				if button.Length() != 1 || instead.Length() != 0 {
					t.Fatalf("%d buttons, %d insteads; fixes %q", button.Length(), instead.Length(), fixes(before))
				}
				after := st
				after.Settings.Namespace.Labels = maps.Clone(labels)
				if err := applyClusterFix(button.AttrOr("value", ""), &after); err != nil {
					t.Fatal(err)
				}
				page := clusterPage(t, h, after)
				if !sit.fixed(clusterText(page), injected(page)) {
					t.Fatalf("applying %s does not move the verdict:\n%s", button.AttrOr("value", ""), clusterText(page))
				}
			})
		}
	}
}

// clusterText is the text of a Cluster tab's documents, a line per trace step and violation.
func clusterText(r response) string {
	var lines []string
	testid(r, "cluster-doc").Find("li, p").Each(func(_ int, s *goquery.Selection) {
		lines = append(lines, strings.Join(strings.Fields(s.Text()), " "))
	})
	testid(r, "cluster-doc").Find("code").Each(func(_ int, s *goquery.Selection) { lines = append(lines, s.Text()) })
	return strings.Join(lines, "\n")
}

func injected(r response) bool { return testid(r, "verdict-injected").Length() > 0 }

// withValuesKey is the injector values with the key ("a.b.c=value") set.
func withValuesKey(t *testing.T, values, key string) string {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(values), &m); err != nil {
		t.Fatal(err)
	}
	path, value, _ := strings.Cut(key, "=")
	parts := strings.Split(path, ".")
	at := m
	for _, p := range parts[:len(parts)-1] {
		next, ok := at[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			at[p] = next
		}
		at = next
	}
	var v any = value
	if b, err := strconv.ParseBool(value); err == nil {
		v = b
	}
	at[parts[len(parts)-1]] = v
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFixValuesRefused: what a fix's button or preview link may carry is the fixes' own: a
// namespace label other than istio-injection or istio.io/rev, a label value the API server would
// refuse, an install option that is no fix's — each a 400; the fixes' own pass.
func TestFixValuesRefused(t *testing.T) {
	t.Parallel()
	h := newServer(t)
	for _, c := range []struct {
		value string
		ok    bool
	}{
		{fixLabelInjection + ":istio.io/rev=canary", true},
		{fixLabelInjection + ":istio-injection=enabled", true},
		{fixLabelInjection, true},
		{fixLabelInjection + ":team=shop", false},
		{fixLabelInjection + ":istio.io/rev=not a value", false},
		{fixCNI + ":istio.io/rev=canary", false},
	} {
		st := withNamespace(shop)
		err := applyClusterFix(c.value, &st)
		if (err == nil) != c.ok {
			t.Errorf("%q: %v", c.value, err)
		}
	}
	mesh := decodeLocation(t, postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "meshConfigMaps": {canaryConfigMaps(t, nil)}}))
	for _, c := range []struct {
		set    string
		status int
	}{
		{seccompOption, 200},
		{"values.global.proxy.privileged=true", 400},
	} {
		if r := get(t, h, upgradeHref(mesh, c.set)); r.status != c.status {
			t.Errorf("/upgrade with set=%s: %d, want %d", c.set, r.status, c.status)
		}
	}
}
