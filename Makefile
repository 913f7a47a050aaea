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
# Every build, vet and test is -trimpath: a checkout's folder is then no part of the build cache's
# keys, so a clean clone reuses what the last run compiled (deploy/ embeds its chart for this).
# The control plane's module (controlplane-bin) builds as it always has: its own packages are few.
# And without a symbol table or DWARF (-ldflags=-s, which implies -w): every test binary holds
# Istio and Kubernetes, ~180 MB with them, and linking them was ~107 CPU-s of make unit, ~88
# without (a stack trace needs neither; a debugger does: go test -c -ldflags= for one). And
# without the commit stamped into binaries (-buildvcs=false; nothing reads it): stamped, the
# server binary and the control plane's linked again at every commit, ~13 CPU-s for the server.
export GOFLAGS += -trimpath -ldflags=-s -buildvcs=false

.PHONY: help run build test test-build test-times fmt vet unit race fuzz e2e screenshots check load bench generate check-generated clean controlplane controlplane-bin

# help lists the targets and what each does.
help:
	@echo "make run              build and serve the playground on http://localhost:8080 (ADDR=:8080)"
	@echo "make test             every test: fmt, vet, unit, race, fuzz, browser (installs the browser and PostgreSQL when missing)"
	@echo "make check            while working: fmt, vet and the -short tests of the packages your change touches (vs main)"
	@echo "make test-times       where the last make test's time went: steps, packages, slowest tests, counts"
	@echo "make fmt | vet | unit | race | fuzz | e2e   one part of make test (FUZZTIME=30s overrides the fuzz budgets)"
	@echo "make screenshots      the browser tests, saving screenshots of what they visit into e2e/screenshots/"
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

# Everything: gofmt and goimports, vet, unit tests (with the istioctl comparison), the race
# tests, short fuzzing, and the browser tests. First the build step: the server binary and
# istioctl (bin/testbin/build/, their links kept between runs as the test binaries' are:
# testtimes gobuild), for every test that runs the server as a process (SIDECARLAB_BIN) and the
# comparisons with istioctl (SIDECARLAB_ISTIOCTL). Then scripts/testenv.sh brings what the steps
# need: Debian's chromium-headless-shell (installed when missing, as root), a throwaway PostgreSQL
# on a free 127.0.0.1 port for the link store's tests (SIDECARLAB_TEST_POSTGRES, if set, names a
# server to use instead) and the test control plane, which is built and started beside the steps
# (the tests that ask it wait for it). The build step comes before it because the control plane's
# Kubernetes and istiod are built from many of the same packages at the same versions
# (controlplane/go.mod, TestControlPlaneSharesModuleVersions), which go build compiles once if
# the server's build is done first, and twice if the two run side by side: go build does not wait
# for what another go command is compiling. The steps run one after another: the suite is
# CPU-bound on two cores, and run side by side (make -j2) they took as long (834 s against ~826
# s, docs/testing.md); the browser tests beside race and fuzz alone, longer (312 s against 288).
# Each step's wall time and go test's events go to TIMES, which `make test-times` reads. The
# targets below also run on their own.
TIMES ?= bin/times
TESTTIMES := bin/testtimes
STEP = $(TESTTIMES) run $(TIMES)
test: $(TESTTIMES)
	rm -rf $(TIMES)
	$(MAKE) -s test-build
	$(TESTBIN_ENV) TEST_TIMES=$(TIMES) ./scripts/testenv.sh $(MAKE) -s unit race fuzz e2e

# make test's build step: the server and istioctl, for the tests that run them (TESTBINS, with
# the links kept; TESTBIN_ENV names them to the tests). make unit alone and make check build them
# the same way: istioctl must not come from `go tool -n istioctl`, which ignores GOFLAGS, so its
# ~2,000 packages (go list -deps) compiled again without -trimpath, ~210 s the first time on this 2-core VM.
TESTBINS = $(TESTTIMES) gobuild -bins bin/testbin/build -cache $(TESTBIN_CACHE)/build ./cmd/sidecarlab istio.io/istio/istioctl/cmd/istioctl
TESTBIN_ENV = SIDECARLAB_BIN=$${SIDECARLAB_BIN:-$(CURDIR)/bin/testbin/build/sidecarlab} SIDECARLAB_ISTIOCTL=$${SIDECARLAB_ISTIOCTL:-$(CURDIR)/bin/testbin/build/istioctl}
test-build: $(TESTTIMES)
	@$(STEP) build -- $(TESTBINS)

# test-times prints where the last make test's time went (docs/testing.md keeps the table).
test-times: $(TESTTIMES)
	$(TESTTIMES) report $(TIMES)

$(TESTTIMES): internal/testtimes/main.go
	$(GO) build -o $@ ./internal/testtimes

# The Go source folders; gofmt checks them all, goimports (pinned in go.mod) all but templ's output,
# whose import blocks templ writes and make generate would rewrite.
GODIRS := api cmd engine wording handlers web static store deploy e2e sandbox admission report internal controlplane clustermesh i18n permalink

fmt:
	@test -z "$$(gofmt -l $(GODIRS))" || (gofmt -l $(GODIRS); echo "gofmt needed" >&2; exit 1)
	@out=$$($(GO) tool goimports -local github.com/sidecarlab/sidecarlab -l $$(find $(GODIRS) -name '*.go' ! -name '*_templ.go')); \
	test -z "$$out" || (echo "$$out"; echo "goimports needed: go tool goimports -local github.com/sidecarlab/sidecarlab -w FILE" >&2; exit 1)

# One pass, with the browser and load tests' build tags (e2e/ has no file without them): go vet
# analyses every package the vetted ones import, Istio's and Kubernetes' ~1,900, for the facts its
# checks share (printf wrappers, …), and it does so once per set of tags: ~230 CPU-s each on a
# machine with no cache, which a second pass for ./e2e alone paid again. make check vets with the
# same tags, so the two share what go vet caches.
VETFLAGS := -tags e2e,load
vet:
	$(GO) vet $(VETFLAGS) ./...

# The tests run as go test -json runs them, by `testtimes gotest` (internal/testtimes/gotest.go):
# its one difference is that the test binaries' links are kept between runs. go test links every
# package's test binary on every run, ~100 CPU-s of make unit with Istio and Kubernetes in ten of
# them; gotest builds them with `go test -c -o`, which links only those whose inputs changed, in
# bin/testbin/STEP, seeded with hard links from TESTBIN_CACHE/STEP (shared by every clone, as the go
# build cache is; a run's binaries go back there renamed over the old, so runs side by side never
# write a file another runs). go test's -vet is off: make vet runs every analyzer over the same
# packages. istioctl is found once (SIDECARLAB_ISTIOCTL: make test's build step built it; make unit
# alone and make check build it as that step does), not by each package's tests (testkit.Istioctl). The binaries run
# in the order given, UNIT_P at once: the packages whose tests take longest (make test-times) come
# first, so that none starts last and runs alone, and tests that wait (on the control plane, sandbox
# workers, deadlines) leave a core to another: with the links kept, three at once kept 1.5 of the
# two cores busy (252 CPU-s in 171 s).
TESTBIN_CACHE ?= $(HOME)/.cache/sidecarlab/testbin
GOTEST = $(TESTTIMES) gotest -json -bins bin/testbin/$(1) -cache $(TESTBIN_CACHE)/$(1)
SLOW_PACKAGES := ./cmd/sidecarlab ./handlers ./engine
UNIT_P ?= 4
unit: $(TESTTIMES)
	@$(STEP) fmt -- $(MAKE) -s fmt
	@$(STEP) vet -- $(MAKE) -s vet
	@test -n "$$SIDECARLAB_ISTIOCTL" || $(TESTBINS)
	@$(TESTBIN_ENV) $(STEP) unit -- $(call GOTEST,unit) -p $(UNIT_P) -- -- $(SLOW_PACKAGES) ./... -- -test.count=1 -test.timeout=$(TEST_TIMEOUT)

# The tests of concurrent code under the race detector, in one build: the engine's memo and LRU
# and requests in different modes, the handlers' work slots, pooled writers and a room's page
# rendered once for its learners, the link store's ids and hung server, the catalogs' localizer,
# and the workshop rooms' hub: moves told to every stream, limits, idle rooms, replicas on
# PostgreSQL. (The tests of user templates in sandbox workers stay out: the workers are this test
# binary, whose race detector needs more than their limits.) Each part must select a test of these
# packages (TestRaceTestsExist, internal/testtimes): a -test.run that matches none runs nothing.
RACE_TESTS := Concurrent|LRU|^TestHeavyLane$$|^TestEncodeStateWithPooledWriters$$|^TestBusy$$|^TestClientCancelledMetrics$$|^TestID$$|^TestOpenHungPostgres$$|^TestLocalizerReadsOneCatalog$$
RACE_TESTS := $(RACE_TESTS)|^TestRoomPages$$|^TestRoomEvents$$|^TestMoveTellsEveryStream$$|^TestOnlyTheTrainerMoves$$|^TestLimits$$|^TestIdleRoomsEnd$$|^TestReloadsCountAsFollowing$$|^TestCloseEndsStreams$$|^TestSharedRooms$$|^TestPostgresSharesRooms$$
race: $(TESTTIMES)
	@$(STEP) race -- $(call GOTEST,race) -- -race -- ./engine ./handlers ./store ./i18n ./room -- -test.count=1 -test.timeout=$(TEST_TIMEOUT) '-test.run=$(RACE_TESTS)'

# Fuzzing, for the targets that have found something (their finds are seeds in testdata/fuzz):
# each for a fixed number of inputs. Every fuzz target's seeds, these and FuzzInject,
# FuzzPrunedTrees, FuzzValidateValue and FuzzDecodeState, run in every plain go test.
fuzz: $(TESTTIMES)
	@$(STEP) fuzz:Split -- $(GO) test ./engine/yamldoc -run '^$$' -fuzz '^FuzzSplit$$' -fuzztime $(or $(FUZZTIME),200000x)
	@$(STEP) fuzz:DepthBound -- $(GO) test ./engine/yamldoc -run '^$$' -fuzz '^FuzzDepthBound$$' -fuzztime $(or $(FUZZTIME),100000x)
	@$(STEP) fuzz:Locate -- $(GO) test ./engine/yamldoc -run '^$$' -fuzz '^FuzzLocate$$' -fuzztime $(or $(FUZZTIME),100000x)
	@$(STEP) fuzz:Redact -- $(GO) test ./engine/secrets -run '^$$' -fuzz '^FuzzRedact$$' -fuzztime $(or $(FUZZTIME),6000x)

# The browser tests share one Chromium, a browser context each; most run in parallel, more at
# once than there are cores, since a test mostly waits for the browser and the server.
E2E_PARALLEL ?= 4
e2e: $(TESTTIMES)
	@$(STEP) e2e -- $(call GOTEST,e2e) -- -tags e2e -- ./e2e -- -test.count=1 -test.parallel=$(E2E_PARALLEL) -test.timeout=$(TEST_TIMEOUT)

# The browser tests, each saving screenshots of what it visits into e2e/screenshots/<test>/ (light
# and dark, at the screens it checks): for looking at a UI change. make test leaves them out, as
# no check reads them. Chromium and axe-core as make test brings them (scripts/testenv.sh).
screenshots: $(TESTTIMES)
	rm -rf e2e/screenshots
	E2E_SCREENSHOTS=1 ./scripts/testenv.sh $(MAKE) e2e

# The inner loop: fmt, vet and the tests (-short: without the istioctl comparisons and the other
# slow ones) of the packages a change touches directly — files changed since the branch left main,
# committed or not (BASE=main). Not a replacement for make test, which CI runs. Its test binaries
# are make unit's (-short is a flag of the run, not of the build): each links once for both.
BASE ?= main
check: $(TESTTIMES)
	@$(MAKE) -s fmt
	@pkgs=$$(./scripts/changed-packages.sh $(BASE)); \
	if [ -z "$$pkgs" ]; then echo "make check: no Go package changed since $(BASE)"; exit 0; fi; \
	echo "make check: $$pkgs"; \
	rm -rf bin/times-check; $(GO) vet $(VETFLAGS) $$pkgs && $(TESTBINS) && $(TESTBIN_ENV) $(TESTTIMES) run bin/times-check check -- $(call GOTEST,unit) -p $(UNIT_P) -- -- $$pkgs -- -test.short -test.count=1

# Load test against the real binary on 127.0.0.1 (bounded: 10,000 requests or 120 s), then the
# memory attacks. The server runs on core SERVER_CPUS and the load generator on LOAD_CPUS.
SERVER_CPUS ?= 1
LOAD_CPUS ?= 0
load:
	$(GO) test -tags load -c -o bin/load.test ./e2e
	cd e2e && SIDECARLAB_SERVER_CPUS=$(SERVER_CPUS) SIDECARLAB_SERVE_ARGS="--rate-limit -1 --share-rate-limit -1" \
		taskset -c $(LOAD_CPUS) ../bin/load.test -test.count=1 -test.run 'TestLoad|TestMemoryUnderAttack' -test.v
	# A workshop's room keeps the server's default limits: its learners are behind one address.
	cd e2e && SIDECARLAB_SERVER_CPUS=$(SERVER_CPUS) taskset -c $(LOAD_CPUS) ../bin/load.test -test.count=1 -test.run 'TestRoomLoad' -test.v

bench:
	$(GO) test ./engine ./handlers -run '^$$' -bench . -benchmem -count 5

# A Kubernetes cluster on 127.0.0.1 to poke with kubectl, the one the conformance tests ask: etcd,
# kube-apiserver and kube-controller-manager 1.36.1 with Istio installed as the engine renders it
# (two revisions, istiod run locally: internal/testcluster). It prints the kubeconfig and runs until
# Ctrl-C, which stops them all and deletes their directories. The control plane's programs
# (controlplane/, a module of its own, with Kubernetes' version stamped in; and istiod, a tool of
# this module, so at the engine's Istio and sharing its compiled packages) are built into
# CONTROLPLANE_BIN (the first time ~8 minutes on 2 cores after the server's build, ~11 alone; then
# seconds); kubectl is there too.
CONTROLPLANE_BIN ?= $(HOME)/.cache/sidecarlab/controlplane-1.36.1
K8S_VERSION_LDFLAGS := $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,-X $(p).gitVersion=v1.36.1 -X $(p).gitMajor=1 -X $(p).gitMinor=36)
controlplane: controlplane-bin
	$(CONTROLPLANE_BIN)/meshup -bin $(CONTROLPLANE_BIN)

controlplane-bin:
	cd controlplane && $(GO) build -ldflags '-s $(K8S_VERSION_LDFLAGS)' -o $(CONTROLPLANE_BIN)/ \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl ./etcd ./cmd/controlplane
	$(GO) build -o $(CONTROLPLANE_BIN)/ istio.io/istio/pilot/cmd/pilot-discovery ./internal/testcluster/meshup

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
