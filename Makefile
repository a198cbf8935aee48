# navsync — everything a fresh Debian machine with Swift needs, in two commands:
#   make run    install system packages if missing, build, start the daemon
#   make test   same set-up, then every test
SHELL := /bin/bash
SWIFT ?= swift
BIN := .build/release
# Debian packages the build and the tests need; installed only when missing.
DEB_PACKAGES := libuv1-dev libncurses-dev libwslay-dev nettle-dev libssl-dev openssl libhiredis-dev libqrencode-dev redis-server netcat-openbsd tmux iproute2 \
	man-db bsdextrautils bash-completion
ARGS ?=

.PHONY: all deps build run check test test-sanitizers fuzz demo clean help bench bench-compare bench-fleet \
	install uninstall deb man test-packaging test-package test-deb test-interop test-http

# make install / uninstall: where things go (DESTDIR stages, e.g. for a package).
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/navsync
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
UNITDIR ?= $(PREFIX)/lib/systemd/system
# The binaries installed; navsync-bench is a development tool and stays out.
PROGRAMS := navsyncd navsync navsync-abc
MANPAGES := navsyncd.8 navsync.1 navsync-abc.1
# The one version number, read from the one place it is written.
VERSION := $(shell sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/NavSyncCore/Version.swift)
# The date of this version's CHANGELOG.md heading, printed on the man pages.
RELEASE_DATE := $(shell sed -n 's/^## $(VERSION) (\([0-9-]*\)).*/\1/p' CHANGELOG.md)

all: build

help:
	@echo "make run     build and start navsyncd on 127.0.0.1:7878 (ARGS='--state none' etc.)"
	@echo "make test    build and run every test"
	@echo "make check   the inner loop: one debug build, every unit test, the docs check (minutes)"
	@echo "make demo    daemon + three terminal clients + a netcat driver in tmux; window abc: the Swift library"
	@echo "make bench   fan-out benchmark vs Redis/NATS (docs/PERFORMANCE.md)"
	@echo "make bench-fleet  three daemons on one Redis beside one daemon (docs/BACKPLANE.md)"
	@echo "make bench-compare BASE=REV  the same, with navsyncd built at REV as 'baseline' rows beside this build"
	@echo "make test-sanitizers  unit tests under ASan and TSan, the ASan daemon under stress"
	@echo "make test-interop  signed tokens against PyJWT (from PyPI, in .build/interop-venv)"
	@echo "make fuzz    libFuzzer on framer, parser, routes, catalogs, state files, web, redis, presence, signed tokens, HTTP API, the bench's HTTP responses, the tokens and keys files, TLS 1.3 records, the bench's WebSocket frames (FUZZ_SECONDS=60 each)"
	@echo "make install    binaries, man pages, systemd units, sample catalog, bash completion"
	@echo "                under PREFIX (default /usr/local), staged under DESTDIR; needs make build"
	@echo "make uninstall  remove what make install put there (same PREFIX and DESTDIR)"
	@echo "make test-packaging  make install/uninstall into a temporary DESTDIR, man pages against --help"
	@echo "make test-deb  after make deb: install the package, run it as its user, purge it (root)"
	@echo "make test-package  make deb, then test-deb (make test runs it)"
	@echo "make deb     Debian package with the Swift runtime linked in (.build/deb/navsync_$(VERSION)_*.deb)"
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

# The inner loop after a change: one debug build (incremental), every unit
# test target (the end-to-end tests need the release binaries and run in
# `make test`), and the docs' module tables.
check: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip EndToEndTests
	NAVSYNC_DOCS_TABLES_ONLY=1 Tests/docs/run.sh

# Every test, on one set of builds: Tests/ci/build-all.sh makes them first,
# two at a time (the release build with its tests, which `swift test -c
# release` makes testable, and whose binaries every step starts; the .deb's;
# the fuzz targets; the ASan and TSan unit tests), then each step runs its
# script directly, so nothing is built twice. Tests/ci/step.sh prints each
# step's seconds and a table of them at the end.
STEP := Tests/ci/step.sh
# XCTest two tests at a time (most of their time is waiting on daemons and
# clients): 211 s instead of 347 s on 2 cores. Runs four at a time, before
# the tests' races with a loaded machine were taken out, each missed a
# different bounded wait; the tests that race the daemon's own 10 s
# windows, or poll tmux, run alone after (Tests/ci/xctest.sh).
# XCTEST_WORKERS=1 runs everything in one process, one at a time.
XCTEST_WORKERS ?= 2
test: deps
	@$(STEP) --start
	@$(STEP) "builds: release+tests, deb, fuzz, asan, tsan" env SWIFT=$(SWIFT) Tests/ci/build-all.sh
	@$(STEP) "XCTest: unit and end-to-end" env NAVSYNC_BIN_DIR=$(CURDIR)/$(BIN) SWIFT=$(SWIFT) \
		XCTEST_WORKERS=$(XCTEST_WORKERS) Tests/ci/xctest.sh
	@$(STEP) "bench/smoke.sh" bench/smoke.sh $(BIN)
	@$(STEP) "Tests/docs" Tests/docs/run.sh
	@$(STEP) "Tests/netcat" Tests/netcat/run.sh $(BIN)
	@$(STEP) "Tests/http" Tests/http/run.sh $(BIN)
	@$(STEP) "Tests/packaging" Tests/packaging/run.sh $(BIN)
	@$(STEP) "Tests/packaging/deb.sh" $(MAKE) --no-print-directory test-deb
	@$(STEP) "Tests/browser" Tests/browser/run.sh $(BIN)
	@$(STEP) "Tests/interop" Tests/interop/run.sh $(BIN)
	@$(STEP) "Fuzz: 5 s per target, 2 at a time" env FUZZ_JOBS=2 Fuzz/run.sh 5
	@$(STEP) "Tests/sanitizers" env SWIFT=$(SWIFT) Tests/sanitizers/run.sh
	@$(STEP) --summary

# Signed tokens against PyJWT (from PyPI, in .build/interop-venv).
test-interop: build
	Tests/interop/run.sh $(BIN)

# The HTTP API end to end, every answer checked against docs/openapi.yaml
# (which openapi-spec-validator checks first); needs the release build.
test-http: build
	Tests/http/run.sh $(BIN)

# Unit tests under ASan and TSan, then the ASan-built daemon under the stress
# tests, run by the release test bundle (`swift test -c release` builds it
# when `make test` has not).
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

# Man pages made from the binaries' --help and packaging/man/*.in (render.sh).
man:
	@mkdir -p $(BIN)/man
	@set -o pipefail; for page in $(MANPAGES); do \
	  packaging/man/render.sh packaging/man/$$page.in $(BIN)/$${page%.*} "$(VERSION)" "$(RELEASE_DATE)" \
	    | sed 's|@DATADIR@|$(DATADIR)|g' > $(BIN)/man/$$page.tmp && mv $(BIN)/man/$$page.tmp $(BIN)/man/$$page || exit 1; \
	done

# Installs what `make build` made; it does not build, so `sudo make install`
# leaves no root-owned files in .build beyond the rendered man pages.
install:
	@for p in $(PROGRAMS); do test -x $(BIN)/$$p || { echo "$(BIN)/$$p is missing: run make build first" >&2; exit 1; }; done
	@$(MAKE) --no-print-directory man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DATADIR) \
		$(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(UNITDIR)
	install -m 755 $(addprefix $(BIN)/,$(PROGRAMS)) $(DESTDIR)$(BINDIR)/
	install -m 644 $(BIN)/man/navsyncd.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 644 $(BIN)/man/navsync.1 $(BIN)/man/navsync-abc.1 $(DESTDIR)$(MANDIR)/man1/
	for unit in navsyncd.service navsyncd@.service; do \
	  sed 's|@BINDIR@|$(BINDIR)|g' packaging/systemd/$$unit.in > $(DESTDIR)$(UNITDIR)/$$unit && \
	  chmod 644 $(DESTDIR)$(UNITDIR)/$$unit || exit 1; \
	done
	install -m 644 Clients/netcat/abc-screens.json $(DESTDIR)$(DATADIR)/
	install -m 644 packaging/bash-completion/navsync $(DESTDIR)$(COMPLETIONDIR)/navsync
	ln -sf navsync $(DESTDIR)$(COMPLETIONDIR)/navsyncd
	ln -sf navsync $(DESTDIR)$(COMPLETIONDIR)/navsync-abc
	@if [ -z "$(DESTDIR)" ]; then \
	  echo "installed navsync $(VERSION). The units run as the user navsync; create it once with"; \
	  echo "  useradd --system --home-dir /var/lib/navsync --shell /usr/sbin/nologin navsync"; \
	  echo "then: systemctl daemon-reload && systemctl enable --now navsyncd"; \
	fi

# Removes exactly what install put in place; state in /var/lib/navsync stays.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(PROGRAMS))
	rm -f $(DESTDIR)$(MANDIR)/man8/navsyncd.8 $(DESTDIR)$(MANDIR)/man1/navsync.1 $(DESTDIR)$(MANDIR)/man1/navsync-abc.1
	rm -f $(DESTDIR)$(UNITDIR)/navsyncd.service $(DESTDIR)$(UNITDIR)/navsyncd@.service
	rm -f $(DESTDIR)$(DATADIR)/abc-screens.json
	-rmdir $(DESTDIR)$(DATADIR) 2>/dev/null
	rm -f $(addprefix $(DESTDIR)$(COMPLETIONDIR)/,navsync navsyncd navsync-abc)

# A .deb whose binaries carry the Swift runtime, built in .build/deb so the
# normal release build is left alone (packaging/deb/build.sh).
deb: deps
	SWIFT=$(SWIFT) packaging/deb/build.sh

# make install and uninstall into a temporary DESTDIR from the release build
# (no new build); the lead's make test runs this.
test-packaging: build
	Tests/packaging/run.sh $(BIN)

# The package built from this tree (make deb, its own static build in
# .build/deb), then installed, run and purged as test-deb does; make test
# runs it.
test-package: deb
	$(MAKE) --no-print-directory test-deb

# The package made by make deb, installed on this machine, run as its user
# with the unit's command line and no Swift on PATH, then purged.
test-deb:
	Tests/packaging/deb.sh .build/deb/navsync_$(VERSION)_$$(dpkg --print-architecture).deb
