# sidecarlab — two commands: `make run` serves the playground, `make test` runs every test.
GO ?= go
ADDR ?= :8080
# Fuzzing's budget is a number of inputs per target (about 10 s each on a quiet 2-core machine), not
# a time: a -fuzztime duration races Go's fuzzing coordinator at its deadline and fails a busy
# run with a bare "context deadline exceeded" and no failing input (go.dev/issue/75804, fixed in
# Go 1.27). FUZZTIME=30s (or 5000x) overrides every target's budget.
FUZZTIME ?=
# go test's own cap on one package's tests, far above their time on a busy machine (the browser
# tests took over 10 min, go test's default, on 2 cores shared with other builds): it only turns
# a hang into a failure. The tests' own waits are on conditions, never on the machine's speed.
TEST_TIMEOUT ?= 60m

.PHONY: help run build test unit race fuzz e2e load bench generate check-generated clean controlplane controlplane-bin

# help lists the targets and what each does.
help:
	@echo "make run              build and serve the playground on http://localhost:8080 (ADDR=:8080)"
	@echo "make test             every test: vet, unit, race, fuzz, browser (installs chromium and PostgreSQL when missing)"
	@echo "make unit | race | fuzz | e2e   one part of make test (FUZZTIME=30s overrides the fuzz budgets)"
	@echo "make build            bin/sidecarlab"
	@echo "make generate         templ's Go and the editor bundle; check-generated: that nothing changed"
	@echo "make load | bench     the load test on 127.0.0.1, and the benchmarks (see BENCHMARKS.md)"
	@echo "make controlplane     a Kubernetes control plane with Istio on 127.0.0.1 to poke with kubectl (Ctrl-C stops it)"
	@echo "make controlplane-bin the test control plane's programs (kube-apiserver, etcd, istiod, kubectl)"
	@echo "make clean            remove bin/, node_modules and screenshots"

run: build
	./bin/sidecarlab serve --addr $(ADDR)

build:
	$(GO) build -o bin/sidecarlab ./cmd/sidecarlab

# Everything: vet, unit tests (with the istioctl comparison), the race test, short fuzzing, and the
# browser tests. scripts/testenv.sh first brings what they need: Debian's chromium (installed when
# missing, as root), and a throwaway PostgreSQL on a free 127.0.0.1 port for the link store's tests
# (installed when missing, as root; SIDECARLAB_TEST_POSTGRES, if set, names a server to use instead).
# The targets below also run on their own, without it.
test:
	./scripts/testenv.sh $(MAKE) unit race fuzz e2e

# The Go source folders; gofmt checks them all, goimports (pinned in go.mod) all but templ's output,
# whose import blocks templ writes and make generate would rewrite.
GODIRS := api cmd engine wording handlers web static store deploy e2e sandbox admission report internal controlplane clustermesh i18n

unit:
	@test -z "$$(gofmt -l $(GODIRS))" || (gofmt -l $(GODIRS); echo "gofmt needed" >&2; exit 1)
	@out=$$($(GO) tool goimports -local github.com/sidecarlab/sidecarlab -l $$(find $(GODIRS) -name '*.go' ! -name '*_templ.go')); \
	test -z "$$out" || (echo "$$out"; echo "goimports needed: go tool goimports -local github.com/sidecarlab/sidecarlab -w FILE" >&2; exit 1)
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# Requests in different modes must not race: the concurrency tests under the race detector.
race:
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run 'Concurrent|LRU' ./engine

fuzz:
	$(GO) test ./engine/yamldoc -run '^$$' -fuzz '^FuzzSplit$$' -fuzztime $(or $(FUZZTIME),200000x)
	$(GO) test ./engine/yamldoc -run '^$$' -fuzz '^FuzzDepthBound$$' -fuzztime $(or $(FUZZTIME),100000x)
	$(GO) test ./engine -run '^$$' -fuzz '^FuzzInject$$' -fuzztime $(or $(FUZZTIME),2000x)
	$(GO) test ./engine -run '^$$' -fuzz '^FuzzPrunedTrees$$' -fuzztime $(or $(FUZZTIME),1000x)
	$(GO) test ./engine -run '^$$' -fuzz '^FuzzValidateValue$$' -fuzztime $(or $(FUZZTIME),600x)
	$(GO) test ./engine -run '^$$' -fuzz '^FuzzLocate$$' -fuzztime $(or $(FUZZTIME),5000x)
	$(GO) test ./engine/secrets -run '^$$' -fuzz '^FuzzRedact$$' -fuzztime $(or $(FUZZTIME),6000x)
	$(GO) test ./handlers -run '^$$' -fuzz '^FuzzDecodeState$$' -fuzztime $(or $(FUZZTIME),10000x)

e2e:
	$(GO) test -tags e2e -count=1 -timeout $(TEST_TIMEOUT) ./e2e

# Load test against the real binary on 127.0.0.1 (bounded: 10,000 requests or 120 s), then the
# memory attacks. The server runs on core SERVER_CPUS and the load generator on LOAD_CPUS.
SERVER_CPUS ?= 1
LOAD_CPUS ?= 0
load:
	$(GO) test -tags load -c -o bin/load.test ./e2e
	cd e2e && SIDECARLAB_SERVER_CPUS=$(SERVER_CPUS) SIDECARLAB_SERVE_ARGS="--rate-limit -1 --share-rate-limit -1" \
		taskset -c $(LOAD_CPUS) ../bin/load.test -test.count=1 -test.run 'TestLoad|TestMemoryUnderAttack' -test.v

bench:
	$(GO) test ./engine ./handlers -run '^$$' -bench . -benchmem -count 5

# A Kubernetes cluster on 127.0.0.1 to poke with kubectl, the one the conformance tests ask: etcd,
# kube-apiserver and kube-controller-manager 1.36.1 with Istio installed as the engine renders it
# (two revisions, istiod run locally: internal/testcluster). It prints the kubeconfig and runs until
# Ctrl-C, which stops them all and deletes their directories. The control plane's programs
# (controlplane/, a module of its own, with Kubernetes' version stamped in; and istiod, a tool of
# this module, so at the engine's Istio and sharing its compiled packages) are built into
# CONTROLPLANE_BIN (the first time ~12 minutes on 2 cores, then seconds); kubectl is there too.
CONTROLPLANE_BIN ?= $(HOME)/.cache/sidecarlab/controlplane-1.36.1
K8S_VERSION_LDFLAGS := $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,-X $(p).gitVersion=v1.36.1 -X $(p).gitMajor=1 -X $(p).gitMinor=36)
controlplane: controlplane-bin
	$(GO) build -o bin/meshup ./internal/testcluster/meshup
	./bin/meshup -bin $(CONTROLPLANE_BIN)

controlplane-bin:
	cd controlplane && $(GO) build -ldflags '$(K8S_VERSION_LDFLAGS)' -o $(CONTROLPLANE_BIN)/ \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl ./etcd ./cmd/controlplane
	$(GO) build -o $(CONTROLPLANE_BIN)/ istio.io/istio/pilot/cmd/pilot-discovery

# Generated files are committed; this rebuilds them (templ components, the editor bundle).
generate:
	$(GO) tool templ generate -path web
	cd static && npm ci --no-audit --no-fund && npm run build

check-generated: generate
	git diff --exit-code -- web static/dist || (echo "generated files are stale: run make generate and commit" >&2; exit 1)

# Removes only what the build and the tests make, nothing tracked by git: the binary, npm's install
# (make generate runs npm ci) and the browser tests' screenshots.
clean:
	rm -rf bin static/node_modules e2e/screenshots
