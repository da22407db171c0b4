# Meshplane: `make run` starts the platform locally, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
MODULES := apis sdk charts core gateway platform bench providers operators examples examples/mounts webhook proxy images
# The binaries `make build` puts in bin/.
BINARIES := meshplane kubectl-ws apigen graphql-gateway meshplane-platform meshplane-bench resident-pages account-operator provider-kubeconfig kubecluster-mounts mongodb-provider postgres-provider openfga security-operator rebac-authz-webhook front-proxy etcd-member
# Test packages run in parallel: each e2e package starts one server, so more
# than 3 at once only fight for CPU on a small machine.
TEST_P ?= 3
ROOT_DIR ?= $(CURDIR)/.meshplane
PORT_BASE ?= 6443
GOTEST_FLAGS ?= -count=1 -timeout 30m -p $(TEST_P)

# MESHPLANE_BIN=bin/meshplane KUBECTL_WS_BIN=bin/kubectl-ws ... for every binary.
BIN_ENV := $(foreach b,$(BINARIES),$(shell echo $(b) | tr a-z- A-Z_)_BIN=$(BIN)/$(b))
# ./sdk/... ./core/... ./bench/...: one go command for all modules (go.work).
PKGS := $(MODULES:%=./%/...)

.PHONY: all build images run test test-deps vet fmt-check unit bench clean generate verify-generate

all: build

## build: compile every binary into bin/ (first fetching GraphiQL's pinned
## browser files from the npm registry for the gateway to embed; once;
## etcd-member: a test helper, one etcd member in a process)
build:
	@mkdir -p $(BIN)
	./scripts/fetch-graphiql.sh
	cd core && $(GO) build -o $(BIN)/ ./cmd/meshplane ./cmd/kubectl-ws ./cmd/apigen
	cd gateway && $(GO) build -o $(BIN)/ ./cmd/graphql-gateway
	cd platform && $(GO) build -o $(BIN)/ ./cmd/meshplane-platform
	cd bench && $(GO) build -o $(BIN)/ ./cmd/meshplane-bench ./cmd/resident-pages
	cd providers && $(GO) build -o $(BIN)/ ./cmd/provider-kubeconfig
	cd operators && $(GO) build -o $(BIN)/ ./cmd/account-operator ./cmd/openfga ./cmd/security-operator
	cd examples/mounts && $(GO) build -o $(BIN)/ ./cmd/kubecluster-mounts
	cd examples && $(GO) build -o $(BIN)/ ./mongodb/cmd/mongodb-provider ./postgres/cmd/postgres-provider
	cd webhook && $(GO) build -o $(BIN)/ ./cmd/rebac-authz-webhook
	cd proxy && $(GO) build -o $(BIN)/ ./cmd/front-proxy
	cd core && $(GO) build -o $(BIN)/etcd-member ./test/e2e/etcdcluster/member

# Images (docs/images.md): one per binary a chart runs, plus the pause image
# (the test cluster's sandbox image); every tag is the VERSION file's.
VERSION := $(shell cat $(CURDIR)/VERSION)
IMAGE_REGISTRY ?= ghcr.io/meshplane
IMAGE_SOURCE ?= https://github.com/meshplane/meshplane
IMAGE_REVISION ?= $(shell git -C $(CURDIR) rev-parse HEAD 2>/dev/null || echo unknown)
# SOURCE_DATE_EPOCH: every timestamp in the images (default 0: same inputs, same digests).
SOURCE_DATE_EPOCH ?= 0
CONTAINERD_ADDRESS ?=
STATIC_BIN := $(BIN)/static
IMAGES_DIR := $(BIN)/images
# package path => binary name (the image's name)
IMAGE_PACKAGES := ./core/cmd/meshplane ./proxy/cmd/front-proxy ./operators/cmd/openfga \
	./operators/cmd/security-operator ./operators/cmd/account-operator ./webhook/cmd/rebac-authz-webhook \
	./gateway/cmd/graphql-gateway ./platform/cmd/meshplane-platform ./examples/mongodb/cmd/mongodb-provider \
	./examples/postgres/cmd/postgres-provider ./examples/mounts/cmd/kubecluster-mounts ./images/cmd/pause
# IMAGES="pause meshplane" builds only those.
IMAGES ?= $(notdir $(IMAGE_PACKAGES))
SELECTED_IMAGE_PACKAGES := $(strip $(foreach p,$(IMAGE_PACKAGES),$(if $(filter $(notdir $(p)),$(IMAGES)),$(p))))

## images: build static binaries (CGO_ENABLED=0) into bin/static/ and write an OCI image archive
## per binary to bin/images/<name>.tar as $(IMAGE_REGISTRY)/<name>:$(VERSION) (IMAGE_REGISTRY
## overrides the registry; IMAGES="pause meshplane" builds only those); CONTAINERD_ADDRESS=<socket>
## also imports them into that containerd's k8s.io namespace (ctr images import)
images:
	@if [ -z "$(SELECTED_IMAGE_PACKAGES)" ]; then echo "IMAGES names no image of: $(notdir $(IMAGE_PACKAGES))"; exit 1; fi
	@mkdir -p $(STATIC_BIN) $(IMAGES_DIR)
	$(if $(filter graphql-gateway,$(IMAGES)),./scripts/fetch-graphiql.sh)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(STATIC_BIN)/ $(SELECTED_IMAGE_PACKAGES)
	cd images && $(GO) build -o $(BIN)/ ./cmd/image-builder
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(BIN)/image-builder --registry $(IMAGE_REGISTRY) \
		--version $(VERSION) --source $(IMAGE_SOURCE) --revision $(IMAGE_REVISION) --out $(IMAGES_DIR) \
		$(addprefix $(STATIC_BIN)/,$(notdir $(SELECTED_IMAGE_PACKAGES)))
	$(if $(CONTAINERD_ADDRESS),for f in $(addprefix $(IMAGES_DIR)/,$(addsuffix .tar,$(notdir $(SELECTED_IMAGE_PACKAGES)))); do \
		ctr --address $(CONTAINERD_ADDRESS) -n k8s.io images import $$f || exit 1; done)

## run: start the whole platform on embedded defaults (state in ROOT_DIR, ports PORT_BASE..+19);
## <ROOT_DIR>/platform.env appears once everything is ready; SHARDS=2 adds shard b and the front
## proxy (platform.env: FRONT_PROXY_URL, KUBECONFIG on the proxy, SHARD_NAMES, SHARD_<NAME>_URL;
## docs/sharding.md); SHARDS=3 or 4 add shards c and d on PORT_BASE+20..+25 (range ..+29); EXAMPLES=mongodb,postgres
## also starts the example providers (docs/examples.md); AUTHENTICATION_CONFIG=<file> hands the core an
## AuthenticationConfiguration (OIDC/JWT issuers, docs/core.md)
run: build
	$(BIN)/meshplane-platform --root-directory $(ROOT_DIR) --port-base $(PORT_BASE) $(if $(EXAMPLES),--examples $(EXAMPLES)) $(if $(SHARDS),--shards $(SHARDS)) $(if $(AUTHENTICATION_CONFIG),--authentication-config $(AUTHENTICATION_CONFIG))

## vet: gofmt and go vet across all modules
vet:
	@bad=$$(gofmt -l $(MODULES)); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	$(GO) vet $(PKGS)

## test: vet, then every module's tests against the binaries built once
## (each found through its <NAME>_BIN variable, see sdk/testing/framework);
## the images once too (platform/test/cluster imports bin/images/ into its
## Kubernetes test cluster and installs the charts there with bin/helm)
test: build vet test-deps images
	$(BIN_ENV) MESHPLANE_IMAGES_DIR=$(IMAGES_DIR) HELM_BIN=$(BIN)/helm $(GO) test $(GOTEST_FLAGS) $(PKGS)

## test-deps: what tests need beyond Go: the pinned helm CLI in bin/ (the charts' tests); the test
## cluster's Kubernetes binaries, built once into $${MESHPLANE_CACHE:-~/.cache/meshplane} (kept by CI); Debian's chromium for the GraphiQL
## browser test and Debian's postgresql for the tests that start a PostgreSQL
## server (sdk/testing/postgres); containerd, runc, the CNI plugins, iptables and
## conntrack for the test cluster (docs/test-cluster.md); idempotent, skipped when installed
test-deps:
	./scripts/install-test-deps.sh
	./scripts/install-helm.sh
	./scripts/build-kubernetes.sh

## generate: regenerate deepcopy, CRDs, APIResourceSchemas and the APIExport of apis/ (pinned tools)
generate:
	./apis/hack/generate.sh

## verify-generate: fail if `make generate` would change a tracked file
verify-generate: generate
	@if [ -n "$$(git status --porcelain -- apis)" ]; then git status --short -- apis; echo "generated files are stale: run make generate and commit"; exit 1; fi

## bench: benchmarks against a fresh server (figures go to bench-results.md);
## BENCH_ARGS are passed on, e.g. the quick pass of scripts/bench.sh's comment
## then `helm install` on the test cluster to every pod Ready and each pod's memory at
## rest (platform/test/cluster TestInstallFootprint), appended to bench-results.md
bench: build images
	./scripts/bench.sh $(BENCH_ARGS)
	./scripts/install-helm.sh
	$(BIN_ENV) MESHPLANE_IMAGES_DIR=$(IMAGES_DIR) HELM_BIN=$(BIN)/helm MESHPLANE_CLUSTER_BENCH=$(CURDIR)/bench-results.md \
		$(GO) test -count=1 -timeout 30m -run '^TestInstallFootprint$$' ./platform/test/cluster

clean:
	rm -rf $(BIN)
