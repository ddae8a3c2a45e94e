# tenant-apiserver: the two commands a fresh machine needs are `make run`
# and `make test`. Everything is built from the Go module proxy.

GO ?= go
# Integration tests start whole stacks: give them time, run packages one at a time.
INTEGRATION_FLAGS ?= -count=1 -p 1 -timeout 30m
BENCH_FLAGS ?= -run '^$$' -benchtime 1x -count 1 -timeout 150m

.PHONY: all run test tools build verify verify-codegen verify-host-crds verify-gofmt vet lint \
	unit integration bench codegen host-crds plugin image test-deps clean

all: build

## run: the local stack (etcd, kube-apiserver, MetalLB, tenant-apiserver); Ctrl-C stops it.
run:
	bash hack/local-up.sh

## test: everything CI checks: generated code, host CRDs, vet, lint, unit and integration tests.
test: verify vet lint unit integration

## tools: build the pinned test-stack binaries into _output/bin (cached).
tools:
	bash hack/build-tools.sh

build:
	$(GO) build -o _output/bin/tenant-apiserver ./cmd/tenant-apiserver

## plugin: kubectl-tenant and kubectl_complete-tenant into _output/bin; krew archives and manifest into _output/plugin.
plugin:
	bash hack/build-plugin.sh

CMD ?= tenant-apiserver
IMAGE ?= $(CMD):dev
## image: the container image of $(CMD) (tenant-apiserver, or tenant-dns) as $(IMAGE),
## from its Containerfile; with neither podman nor docker, hack/image writes the same
## image to _output/image/$(CMD).tar.
CONTAINERFILE = $(if $(filter tenant-dns,$(CMD)),Containerfile.tenant-dns,Containerfile)
image:
	@if command -v podman >/dev/null; then podman build -f $(CONTAINERFILE) -t $(IMAGE) .; \
	elif command -v docker >/dev/null; then docker build -f $(CONTAINERFILE) -t $(IMAGE) .; \
	else $(GO) run ./hack/image -cmd $(CMD) -tag $(IMAGE); fi

verify: verify-gofmt verify-codegen verify-host-crds

verify-codegen:
	bash hack/verify-codegen.sh

verify-host-crds: tools
	bash hack/verify-host-crds.sh

verify-gofmt:
	@bad=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^pkg/generated/' | grep -v '/zz_generated')); \
	if [ -n "$$bad" ]; then echo "gofmt needed on:"; echo "$$bad"; exit 1; fi

vet:
	$(GO) vet ./...

## lint: the linters of .golangci.yml.
lint: tools
	_output/bin/golangci-lint run --allow-parallel-runners ./...

unit:
	$(GO) test -count=1 ./pkg/... ./cmd/... ./hack/image/

integration: tools test-deps
	$(GO) test $(INTEGRATION_FLAGS) ./test/integration/...

## test-deps: what tests need from Debian (the Kubernetes Python client, headless Chromium).
test-deps:
	bash hack/install-test-deps.sh

## bench: the load harness and Benchmark* functions; figures go in docs/performance.md and the notes under docs/perf.
# BenchmarkSync, BenchmarkNetworkSync, BenchmarkLoadBalancerSync, BenchmarkVRFPeeringSync,
# BenchmarkProviderServiceOffer, BenchmarkSyncBusyHost, BenchmarkHostFairness,
# BenchmarkHostClassification, BenchmarkNamespaceDelete and BenchmarkStackStart each run
# in a process of their own: the stacks the other benchmarks leave running
# until their process ends would load the machine under them.
# BenchmarkPrivateList, BenchmarkScaleMemory and BenchmarkTenantAPI share the
# scale stacks (10,000 tenants with the syncer; BENCH_TENANTS=500 for a quick run).
bench: tools
	$(GO) test -run '^$$' -bench . -benchtime 2000x -count 1 ./pkg/ipam/
	$(GO) test -run '^$$' -bench . -count 1 ./pkg/apiserver/ ./pkg/syncer/onboarding/ ./pkg/host/ ./pkg/ipam/upkeep/ ./pkg/syncer/controller/ ./pkg/registry/tenant/network/ ./pkg/tenantdns/ ./pkg/hostbinding/
	$(GO) test $(BENCH_FLAGS) -bench . -skip '^Benchmark((Network|LoadBalancer|VRFPeering)?Sync|ProviderServiceOffer|SyncBusyHost|HostFairness|HostClassification|NamespaceDelete|StackStart|DataPath)$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkSync$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkNetworkSync$$' ./test/integration/bench/...
	BENCH_NET_ORDER=paired $(GO) test $(BENCH_FLAGS) -bench '^BenchmarkNetworkSync$$' ./test/integration/bench/...
	BENCH_DP_ORDER=paced $(GO) test $(BENCH_FLAGS) -bench '^BenchmarkDataPath$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkLoadBalancerSync$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkVRFPeeringSync$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkProviderServiceOffer$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkSyncBusyHost$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkHostFairness$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkHostClassification$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkNamespaceDelete$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -benchtime 3x -bench '^BenchmarkStackStart$$' ./test/integration/bench/...
	$(GO) test $(BENCH_FLAGS) -benchtime 5x -bench '^BenchmarkConsoleFirstRender$$' ./test/integration/console/
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkQueries$$' ./test/integration/dns/

codegen:
	bash hack/update-codegen.sh

host-crds: tools
	bash hack/update-host-crds.sh

clean:
	rm -rf _output
