# Meshplane: `make run` starts the platform locally, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
MODULES := sdk core bench
# The binaries `make build` puts in bin/.
BINARIES := meshplane kubectl-ws apigen meshplane-bench
# Test packages run in parallel: each e2e package starts one server, so more
# than 3 at once only fight for CPU on a small machine.
TEST_P ?= 3
ROOT_DIR ?= $(CURDIR)/.meshplane
GOTEST_FLAGS ?= -count=1 -timeout 30m -p $(TEST_P)

# MESHPLANE_BIN=bin/meshplane KUBECTL_WS_BIN=bin/kubectl-ws ... for every binary.
BIN_ENV := $(foreach b,$(BINARIES),$(shell echo $(b) | tr a-z- A-Z_)_BIN=$(BIN)/$(b))
# ./sdk/... ./core/... ./bench/...: one go command for all modules (go.work).
PKGS := $(MODULES:%=./%/...)

.PHONY: all build run test vet fmt-check unit bench clean

all: build

## build: compile every binary into bin/
build:
	@mkdir -p $(BIN)
	cd core && $(GO) build -o $(BIN)/ ./cmd/meshplane ./cmd/kubectl-ws ./cmd/apigen
	cd bench && $(GO) build -o $(BIN)/ ./cmd/meshplane-bench

## run: start the platform on embedded defaults (root directory .meshplane)
run: build
	$(BIN)/meshplane start --root-directory $(ROOT_DIR)

## vet: gofmt and go vet across all modules
vet:
	@bad=$$(gofmt -l $(MODULES)); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	$(GO) vet $(PKGS)

## test: vet, then every module's tests against the binaries built once
## (each found through its <NAME>_BIN variable, see sdk/testing/framework)
test: build vet
	$(BIN_ENV) $(GO) test $(GOTEST_FLAGS) $(PKGS)

## bench: benchmarks against a fresh server (figures go to bench-results.md);
## BENCH_ARGS are passed on, e.g. the quick pass of scripts/bench.sh's comment
bench: build
	./scripts/bench.sh $(BENCH_ARGS)

clean:
	rm -rf $(BIN)
