# Meshplane: `make run` starts the platform locally, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
MODULES := apis core platform providers operators
ROOT_DIR ?= $(CURDIR)/.meshplane
PORT_BASE ?= 6443
GOTEST_FLAGS ?= -count=1 -timeout 30m

.PHONY: all build run test vet fmt-check unit bench clean generate verify-generate

all: build

## build: compile every binary into bin/
build:
	@mkdir -p $(BIN)
	cd core && $(GO) build -o $(BIN)/ ./cmd/...
	cd platform && $(GO) build -o $(BIN)/ ./cmd/...
	cd providers && $(GO) build -o $(BIN)/ ./cmd/...
	cd operators && $(GO) build -o $(BIN)/ ./cmd/...

## run: start the whole platform on embedded defaults (state in ROOT_DIR, ports PORT_BASE..+19);
## <ROOT_DIR>/platform.env appears once everything is ready
run: build
	$(BIN)/meshplane-platform --root-directory $(ROOT_DIR) --port-base $(PORT_BASE)

## vet: gofmt and go vet across all modules
vet:
	@bad=$$(gofmt -l $(MODULES)); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	@for m in $(MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done

## test: vet, then every module's tests against binaries built once
test: build vet
	@for m in $(MODULES); do (cd $$m && MESHPLANE_BIN=$(BIN)/meshplane MESHPLANE_PLATFORM_BIN=$(BIN)/meshplane-platform KUBECTL_WS_BIN=$(BIN)/kubectl-ws APIGEN_BIN=$(BIN)/apigen ACCOUNT_OPERATOR_BIN=$(BIN)/account-operator PROVIDER_KUBECONFIG_BIN=$(BIN)/provider-kubeconfig $(GO) test $(GOTEST_FLAGS) ./...) || exit 1; done

## generate: regenerate deepcopy, CRDs, APIResourceSchemas and the APIExport of apis/ (pinned tools)
generate:
	./apis/hack/generate.sh

## verify-generate: fail if `make generate` would change a tracked file
verify-generate: generate
	@if [ -n "$$(git status --porcelain -- apis)" ]; then git status --short -- apis; echo "generated files are stale: run make generate and commit"; exit 1; fi

## bench: benchmarks against a fresh server (figures go to bench-results.md)
bench: build
	./scripts/bench.sh

clean:
	rm -rf $(BIN)
