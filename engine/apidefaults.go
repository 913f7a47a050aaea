package engine

import (
	"encoding/json"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	k8sappsv1 "k8s.io/kubernetes/pkg/apis/apps/v1"
	k8sbatchv1 "k8s.io/kubernetes/pkg/apis/batch/v1"
	k8scorev1 "k8s.io/kubernetes/pkg/apis/core/v1"
)

// In a cluster, Istio's webhook never sees a workload as it was written: the API server applies
// its defaults when it decodes an object (a Deployment's pod template when the Deployment is
// created, a Pod when its controller creates it), before any mutating webhook. Some of them reach
// what Istio writes: a container port's protocol (TCP) is in ISTIO_META_POD_PORTS, a probe's
// defaults in ISTIO_KUBE_APP_PROBERS. Webhook mode therefore injects the defaulted object and
// shows Istio's result without the defaults Istio did not touch (so the output and its diff show
// what Istio changed, not what the API server fills in); the Cluster view keeps them all.
// cmd/sidecarlab's conformance tests hold both to a real API server.

// apiDefaults are the API server's defaulting functions for the kinds that make Pods
// (k8s.io/kubernetes's own, of the Kubernetes version in go.mod). Made when first used.
var apiDefaults = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, register := range []func(*runtime.Scheme) error{k8scorev1.RegisterDefaults, k8sappsv1.RegisterDefaults, k8sbatchv1.RegisterDefaults} {
		if err := register(s); err != nil {
			panic(err)
		}
	}
	return s
})

// APIDefault applies the API server's defaults to obj, in place, as it does when it decodes a
// created object. Kinds it has no defaults for are left alone.
func APIDefault(obj runtime.Object) { apiDefaults().Default(obj) }

// withoutUntouchedDefaults is out, what Istio made of the defaulted object, without the defaults
// it did not touch: a field that orig lacks, that defaulting added, and that out still holds with
// the defaulted value. It returns out itself when the JSON round trip fails.
func withoutUntouchedDefaults(out any, orig, defaulted runtime.Object) any {
	var o, d, v any
	if !jsonValue(orig, &o) || !jsonValue(defaulted, &d) || !jsonValue(out, &v) {
		return out
	}
	v = stripDefaults(v, o, d)
	b, err := json.Marshal(v)
	if err != nil {
		return out
	}
	t := reflect.TypeOf(out)
	if t == nil || t.Kind() != reflect.Pointer {
		return out
	}
	res := reflect.New(t.Elem()).Interface()
	if err := json.Unmarshal(b, res); err != nil {
		return out
	}
	return res
}

func jsonValue(obj any, v *any) bool {
	b, err := json.Marshal(obj)
	return err == nil && json.Unmarshal(b, v) == nil
}

// stripDefaults removes from out (a JSON value) what defaulting added to orig to make def.
// Lists are walked element by element, matched by name where elements have one (containers,
// volumes, env), else by position when out and def have as many elements.
func stripDefaults(out, orig, def any) any {
	switch o := out.(type) {
	case map[string]any:
		dm, ok := def.(map[string]any)
		if !ok {
			return out
		}
		om, _ := orig.(map[string]any)
		for k, v := range o {
			dv, inDef := dm[k]
			if !inDef {
				continue
			}
			ov, inOrig := om[k]
			if !inOrig && reflect.DeepEqual(v, dv) {
				delete(o, k)
				continue
			}
			o[k] = stripDefaults(v, ov, dv)
		}
	case []any:
		dl, ok := def.([]any)
		if !ok {
			return out
		}
		ol, _ := orig.([]any)
		for i, e := range o {
			if de, oe, ok := counterpart(e, i, len(o), dl, ol); ok {
				o[i] = stripDefaults(e, oe, de)
			}
		}
	}
	return out
}

// counterpart is the element of def (and of orig) that out's element e, at i of n, came from.
func counterpart(e any, i, n int, def, orig []any) (d, o any, ok bool) {
	name := func(v any) (string, bool) {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		s, ok := m["name"].(string)
		return s, ok
	}
	if en, named := name(e); named {
		for _, x := range def {
			if xn, _ := name(x); xn == en {
				d, ok = x, true
			}
		}
		for _, x := range orig {
			if xn, _ := name(x); xn == en {
				o = x
			}
		}
		return d, o, ok
	}
	if n != len(def) {
		return nil, nil, false
	}
	if len(orig) == len(def) {
		o = orig[i]
	}
	return def[i], o, true
}
