# dbsock: build, install server dependencies, test, benchmark.

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/dbsock/dbsock/internal/sysinfo.Version=$(VERSION) -X github.com/dbsock/dbsock/internal/sysinfo.Commit=$(COMMIT)

.PHONY: all build deps test-deps images test integration unit vet cross bench clean

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

## cross: vet and build for the platforms Go users run (macOS and Linux, amd64 and arm64)
cross:
	@for p in darwin/arm64 darwin/amd64 linux/arm64 linux/amd64; do \
		echo "cross: $$p"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) vet ./... || exit 1; \
		GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/dbsock || exit 1; \
	done

## test: install what the tests need (servers, images), vet, cross-build, then run unit and real-server integration tests
test:
	@rm -f .test-times
	@scripts/timed.sh "install the servers and tools" $(MAKE) --no-print-directory test-deps
	@scripts/timed.sh "build the images" $(MAKE) --no-print-directory images
	@scripts/timed.sh "vet" $(MAKE) --no-print-directory vet
	@scripts/timed.sh "cross-build four platforms" $(MAKE) --no-print-directory cross
	@scripts/timed.sh "unit and real-server integration tests" $(MAKE) --no-print-directory integration
	@scripts/timed.sh --summary

## integration: unit and real-server integration tests (what make test runs after its set-up)
integration:
	# One package at a time: several start real servers and containers, and
	# a test that compares two runs must not share the 2 CPUs with them.
	DBSOCK_REQUIRE_SERVERS=1 DBSOCK_REQUIRE_STACKS=1 $(GO) test -p 1 -count=1 -timeout 30m ./...
	# The example module a Go developer copies (its own go.mod, no replace),
	# outside this repository with dbsock served from a module proxy of
	# HEAD: its tests, its benchmarks and their benchstat table.
	DBSOCK_REQUIRE_SERVERS=1 scripts/example-module.sh

## unit: tests that need no server (integration tests skip)
unit:
	$(GO) test -count=1 -short ./...
	scripts/example-module.sh -short

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

## bench: the harness's own cost per op, echo against a minimal loop, peak RSS at N=10,000,000 (a few minutes)
bench:
	scripts/bench.sh

clean:
	rm -rf bin
