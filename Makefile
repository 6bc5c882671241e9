# dbsock: build, install server dependencies, test, benchmark.

GO      ?= go
# Every build here is static (no cgo: dbsock has none): the binary make
# build ships and the client container runs, and one build cache for
# vet, the tests and the client binary they build.
CGO_ENABLED ?= 0
export CGO_ENABLED
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/dbsock/dbsock/internal/sysinfo.Version=$(VERSION) -X github.com/dbsock/dbsock/internal/sysinfo.Commit=$(COMMIT)

.PHONY: all build deps test-deps images test test-setup test-compile integration unit vet cross bench clean

all: build

## build: compile bin/dbsock (static: it also runs as --client container's client, FROM scratch)
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o bin/dbsock ./cmd/dbsock

## deps: install MariaDB, Redis, memcached, PostgreSQL and PgBouncer (apt) and build FerretDB (Go module proxy)
deps:
	scripts/install-deps.sh

## test-deps: deps, Chromium (the HTML report's browser test), benchstat (the example module's) and the client stacks of the agents (C, Python, Node.js, PHP)
test-deps:
	scripts/install-deps.sh --with-browser --with-stacks

## images: local images of every server dbsock starts in containers, from Debian's packages (no registry needed)
images: deps
	scripts/build-images.sh

## cross: vet and build for the platforms Go users run (macOS and Linux, amd64 and arm64): one platform per OS, and the other architecture for the packages whose files differ by it (scripts/cross.sh)
cross:
	@GO=$(GO) scripts/cross.sh

## test: install what the tests need (servers, images) while vet and the cross-build compile beside it, then run unit and real-server integration tests
test:
	@scripts/timed.sh --start
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-setup test-compile
	@scripts/timed.sh "unit and real-server integration tests" $(MAKE) --no-print-directory integration
	@scripts/timed.sh --summary

# The two halves of make test's set-up, which make test runs at once: the
# installs and image builds wait mostly on the network and the disk, the
# compilers on the CPUs.
test-setup:
	@scripts/timed.sh "install the servers and tools" $(MAKE) --no-print-directory test-deps
	@scripts/timed.sh "build the images" $(MAKE) --no-print-directory images

test-compile:
	@scripts/timed.sh "vet" $(MAKE) --no-print-directory vet
	@scripts/timed.sh "cross-build (macOS, Linux)" $(MAKE) --no-print-directory cross

## integration: unit and real-server integration tests (what make test runs after its set-up)
integration:
	# Two packages at a time: most of a test's time is a server or a
	# container starting. No test here compares timings (those run alone,
	# from scripts/stability.sh), and a test that looks for what dbsock
	# left behind looks only for what its own process started. So the
	# machine's measuring lock is off (DBSOCK_MEASURE_LOCK: the lock's own
	# tests take lock files of their own); the example module keeps it.
	# scripts/gotest.sh runs go test and then lists the 15 slowest tests.
	DBSOCK_MEASURE_LOCK=off DBSOCK_REQUIRE_SERVERS=1 DBSOCK_REQUIRE_STACKS=1 GO=$(GO) scripts/gotest.sh -p 2 -count=1 -timeout 30m ./...
	# The example module a Go developer copies (its own go.mod, no replace),
	# outside this repository with dbsock served from a module proxy of
	# HEAD: its tests, its benchmarks and their benchstat table.
	DBSOCK_REQUIRE_SERVERS=1 scripts/example-module.sh
	# The Kubernetes manifest's module (deploy/kubernetes, its own
	# go.mod): the committed manifest, its strict decoding, and its pod
	# under Docker.
	DBSOCK_REQUIRE_SERVERS=1 GO=$(GO) scripts/deploy-kubernetes.sh

## unit: tests that need no server (integration tests skip), without the machine's measuring lock (as make integration); the example module is built and vetted against HEAD (its tests start servers: make integration runs them), and the Kubernetes manifest's module tested but for its pod under Docker
unit:
	DBSOCK_MEASURE_LOCK=off $(GO) test -count=1 -short ./...
	scripts/example-module.sh -short -run '^$$'
	GO=$(GO) scripts/deploy-kubernetes.sh -short

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

## bench: the harness's own cost per op, echo against a minimal loop, peak RSS at N=10,000,000 (a few minutes)
bench:
	scripts/bench.sh

clean:
	rm -rf bin
