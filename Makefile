# navsync — everything a fresh Debian machine with Swift needs, in two commands:
#   make run    install system packages if missing, build, start the daemon
#   make test   same set-up, then every test
SHELL := /bin/bash
SWIFT ?= swift
BIN := .build/release
# Debian packages the build and the tests need; installed only when missing.
DEB_PACKAGES := libuv1-dev libncurses-dev libwslay-dev nettle-dev libhiredis-dev redis-server netcat-openbsd tmux iproute2
ARGS ?=

.PHONY: all deps build run test test-sanitizers fuzz test-unit test-e2e test-netcat demo clean help bench bench-compare bench-fleet

all: build

help:
	@echo "make run     build and start navsyncd on 127.0.0.1:7878 (ARGS='--state none' etc.)"
	@echo "make test    build and run every test"
	@echo "make demo    daemon + three terminal clients + a netcat driver in tmux; window abc: the Swift library"
	@echo "make bench   fan-out benchmark vs Redis/NATS (docs/PERFORMANCE.md)"
	@echo "make bench-fleet  three daemons on one Redis beside one daemon (docs/BACKPLANE.md)"
	@echo "make bench-compare BASE=REV  the same, with navsyncd built at REV as 'baseline' rows beside this build"
	@echo "make test-sanitizers  unit tests under ASan and TSan, the ASan daemon under stress"
	@echo "make fuzz    libFuzzer on framer, parser, routes, catalogs, state files (FUZZ_SECONDS=60 each)"
	@echo "make clean   remove build output"

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build -c release

run: build
	exec $(BIN)/navsyncd $(ARGS)

# Unit and end-to-end tests share one release build; the end-to-end tests
# start the binaries in $(BIN) as real processes.
test: build
	NAVSYNC_BIN_DIR=$(CURDIR)/$(BIN) $(SWIFT) test -c release
	bench/smoke.sh $(BIN)
	Tests/netcat/run.sh $(BIN)
	Tests/browser/run.sh $(BIN)
	Fuzz/run.sh 8
	SWIFT=$(SWIFT) Tests/sanitizers/run.sh

# Unit tests under ASan and TSan, then the ASan-built daemon under the stress
# tests; needs the release test build that `make test` makes first.
test-sanitizers: build
	SWIFT=$(SWIFT) Tests/sanitizers/run.sh

# libFuzzer targets for the pure core, built with swiftc (see Fuzz/run.sh).
FUZZ_SECONDS ?= 60
fuzz:
	Fuzz/run.sh $(FUZZ_SECONDS)

# A daemon, three navsync clients side by side and a netcat driver, in tmux.
# Attaches on a terminal (Ctrl-b d ends it); elsewhere prints the panes.
demo: build
	Clients/demo/demo.sh $(BIN)

clean:
	rm -rf .build

# Installs redis-server, nats-server and gnuplot when missing; see bench/run.sh for knobs.
bench: build
	bench/run.sh
	bench/kit.sh $(BIN)
	bench/restart.sh $(BIN)

# Three daemons on one Redis beside one daemon: fan-out to 1,000-30,000
# watchers and changes/s from pipelining writers (bench/fleet.sh, docs/BACKPLANE.md).
bench-fleet: build
	bench/fleet.sh

# The benchmark with an older navsyncd (git revision BASE) measured in the same
# run as this build, as `baseline` rows and ratios (bench/compare.sh).
bench-compare: build
	bench/compare.sh $(BASE)
