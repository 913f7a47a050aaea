# sidecarlab — two commands: `make run` serves the playground, `make test` runs every test.
GO ?= go
ADDR ?= :8080
FUZZTIME ?= 15s

.PHONY: run build test unit race fuzz e2e bench generate check-generated clean

run: build
	./bin/sidecarlab serve --addr $(ADDR)

build:
	$(GO) build -o bin/sidecarlab ./cmd/sidecarlab

# Everything CI runs: vet, unit tests (with the istioctl comparison), the race test, short fuzzing.
test: unit race fuzz

unit:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# Requests in different modes must not race: the concurrency tests under the race detector.
race:
	$(GO) test -race -count=1 -run 'Concurrent|LRU' ./engine

fuzz:
	$(GO) test ./engine -run '^$$' -fuzz '^FuzzSplitDocuments$$' -fuzztime $(FUZZTIME)
	$(GO) test ./engine -run '^$$' -fuzz '^FuzzInject$$' -fuzztime $(FUZZTIME)

bench:
	$(GO) test ./engine -run '^$$' -bench . -benchmem -count 5

clean:
	rm -rf bin
