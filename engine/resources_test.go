package engine

import "testing"

// TestResources: the text every edge shows of a CPU and a memory quantity, an unset one left
// out, and read back the same.
func TestResources(t *testing.T) {
	for _, c := range []struct {
		r    Resources
		text string
	}{
		{Resources{"100m", "128Mi"}, "cpu=100m memory=128Mi"},
		{Resources{CPU: "2"}, "cpu=2"},
		{Resources{Memory: "1Gi"}, "memory=1Gi"},
		{Resources{}, ""},
	} {
		if got := c.r.String(); got != c.text {
			t.Errorf("%+v: %q, want %q", c.r, got, c.text)
		}
		if back := ParseResources(c.text); back != c.r {
			t.Errorf("%q read back as %+v", c.text, back)
		}
	}
	if r := ParseResources("memory=1Gi cpu=2 gpu=1"); r != (Resources{"2", "1Gi"}) {
		t.Errorf("in another order, with another resource: %+v", r)
	}
}
