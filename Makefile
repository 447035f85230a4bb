# dsh-capsule: reference host, launcher and probe (C11), plus test driver.
#   make deps          install build and test dependencies (Debian/Ubuntu, root)
#   make deps-build    only what building and running the host needs (the gate action)
#   make               build build/bin/{capsule-host,capsule-launcher,capsule-probe}
#   make test          build with ASan+UBSan into build/asan, run the C unit tests, then pytest
#   make unit          the C unit tests (cmocka) of the pure boundary code
#   make test-dsh      the real DSH CLI end to end (installs dsh 0.1.0-rc.8 from npm)
#   make examples      rebuild examples with the pinned esbuild; make verify-examples
#   make fuzz-smoke    every fuzz harness for FUZZ_SECONDS (30) under ASan/UBSan
#   make fuzz CAMPAIGN=manifest / make fuzz-report   AFL++ campaign and its report
#   make worlds        the suite on Node 20/22/24/26, as an ordinary user, on fresh Debian 12 and 13, with no Node
#   make install [PREFIX=/usr/local] [DESTDIR=]   capsule-host on PATH, its helpers in libexec, man page,
#                      bash completion, docs; make uninstall removes exactly what install wrote
#   make format, make format-check   the house style (.clang-format, clang-format 14)
#   make dist [DIST_KEY=release.key]   build/dist/dsh-capsule-VERSION.tar.gz (reproducible), .sha256 and
#                      its release statement (signed with DIST_KEY)

CC ?= cc
BUILD ?= build
SANITIZE ?= 0
PYTHON ?= /usr/bin/python3
PYTEST_ARGS ?=
# pytest workers side by side (pytest-xdist): a cell mostly waits on Node's
# start, so one worker leaves a core idle. Tests that share a build or a
# download carry one xdist_group and run on one worker (--dist loadgroup).
PYTEST_WORKERS ?= $(shell nproc)
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadgroup

PKGS := jansson libcrypto libseccomp libarchive zlib
CFLAGS_PKG := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LIBS_PKG := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ljansson -lcrypto -lseccomp -larchive -lz)

WARN ?= -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wno-format-truncation -Werror
HARDEN ?= -fstack-protector-strong -D_FORTIFY_SOURCE=2
CFLAGS ?= -O2 -g
ifeq ($(SANITIZE),1)
CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(CFLAGS_PKG) -Icommon -Ihost -Ilauncher -I$(BUILD)/gen $(HARDEN)

# Three libraries, each the whole of its folder but its main: everything
# else (the binaries, unit tests, fuzz harnesses, OSS-Fuzz build and
# benchmarks) links them; `make libs BUILD=... CC=... CFLAGS=...` builds
# them with another toolchain (fuzz/Makefile, fuzz/oss-fuzz/build.sh).
COMMON_SRC := $(wildcard common/*.c)
HOST_LIB_SRC := $(filter-out host/main.c,$(shell find host -name '*.c' | LC_ALL=C sort))
LAUNCHER_LIB_SRC := $(filter-out launcher/launcher_main.c,$(wildcard launcher/*.c))
PROBE_SRC := $(wildcard probe/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
COMMON_LIB := $(BUILD)/libcapsule-common.a
HOST_LIB := $(BUILD)/libcapsule-host.a
LAUNCHER_LIB := $(BUILD)/libcapsule-launcher.a
CAPSULE_LIBS := $(HOST_LIB) $(LAUNCHER_LIB) $(COMMON_LIB)
BIN := $(BUILD)/bin
GEN_PROBE := $(BUILD)/gen/cell_loader_cjs.h
GEN_SDK := $(BUILD)/gen/scaffold_guest_sdk_mjs.h

# C unit tests (cmocka) of the pure boundary code: launch document and
# bwrap argv, path and name rules, frame codec, inputSchema subset.
UNIT_SRC := $(wildcard unit/test_*.c)
UNIT_BIN := $(patsubst unit/%.c,$(BUILD)/unit/%,$(UNIT_SRC))

.PHONY: install uninstall man dist format format-check format-version
.PHONY: all libs deps deps-build test test-dsh unit worlds examples verify-examples clean asan fail-closed-matrix prove-fixes fuzz-build fuzz-smoke fuzz fuzz-report bench soak
all: $(BIN)/capsule-host $(BIN)/capsule-launcher $(BIN)/capsule-probe

libs: $(CAPSULE_LIBS)

# Each object depends on the headers it includes, as the compiler found
# them (-MMD -MP: build/obj/**/*.d), so touching a header rebuilds only its
# users. The generated headers must exist before the first compile.
# An object without its .d (built before) is built again once, to get one.
$(BUILD)/obj/%.o: %.c $(BUILD)/obj/%.d | $(GEN_PROBE) $(GEN_SDK)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/%.d: ;
.PRECIOUS: $(BUILD)/obj/%.d
-include $(patsubst %.o,%.d,$(call obj,$(COMMON_SRC) $(HOST_LIB_SRC) host/main.c $(LAUNCHER_LIB_SRC) \
  launcher/launcher_main.c $(PROBE_SRC)))

$(GEN_PROBE): host/cell/cell-loader.cjs
	@mkdir -p $(dir $@)
	cd host/cell && xxd -i -n cell_loader_cjs cell-loader.cjs > $(abspath $@)

# The guest SDK, which capsule-host new writes into a new capsule's guest.
$(GEN_SDK): guest/index.mjs
	@mkdir -p $(dir $@)
	cd guest && xxd -i -n scaffold_guest_sdk_mjs index.mjs > $(abspath $@)

$(COMMON_LIB): $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(HOST_LIB): $(call obj,$(HOST_LIB_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(LAUNCHER_LIB): $(call obj,$(LAUNCHER_LIB_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(BIN)/capsule-host: $(call obj,host/main.c) $(CAPSULE_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_PKG) -lm

$(BIN)/capsule-launcher: $(call obj,launcher/launcher_main.c) $(LAUNCHER_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_PKG)

$(BIN)/capsule-probe: $(call obj,$(PROBE_SRC)) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_PKG)

$(BUILD)/unit/%: unit/%.c $(wildcard unit/*.h) $(CAPSULE_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(CAPSULE_LIBS) $(LIBS_PKG) -lcmocka -lm

unit: $(UNIT_BIN)
	@for t in $(UNIT_BIN); do $$t || exit 1; done

asan:
	$(MAKE) SANITIZE=1 BUILD=build/asan all

deps:
	./ci/install-deps.sh
# Only what building and running the host needs (the gate action).
deps-build:
	./ci/install-deps.sh --build

test: asan
	$(MAKE) -s SANITIZE=1 BUILD=build/asan unit
	CAPSULE_BIN=$(abspath build/asan/bin) CAPSULE_MATRIX_STRICT=1 $(PYTHON) -m pytest -p no:cacheprovider $(PYTEST_PARALLEL) pytest --ignore=pytest/test_dsh_cli.py $(PYTEST_ARGS)

# The real DeepSeek Harness CLI end to end (pytest/test_dsh_cli.py): installs
# the pinned dsh 0.1.0-rc.8 (pytest/dsh-cli) on first use, then installs this
# repository into a fresh profile the way README says and runs one-shots.
test-dsh: all
	CAPSULE_BIN=$(abspath build/bin) $(PYTHON) -m pytest -p no:cacheprovider pytest/test_dsh_cli.py $(PYTEST_ARGS)

# Runs the corpus and the containment tests (ASan build) and prints
# code -> cases and claim -> cases; fails on a documented code or threat-model
# claim without a passing case, or on any failing case.
fail-closed-matrix: asan
	CAPSULE_BIN=$(abspath build/asan/bin) CAPSULE_MATRIX_STRICT=1 $(PYTHON) -m pytest -q -p no:cacheprovider $(PYTEST_PARALLEL) pytest/test_attack_corpus.py pytest/test_end_to_end.py pytest/test_containment.py $(PYTEST_ARGS)

# Reverts each defence (launcher hazards, ceilings, host-death and serve
# fixes) in a scratch copy and requires its cases to fail there.
prove-fixes:
	$(PYTHON) ci/prove_hazard_fixes.py

# Fuzzing (fuzz/Makefile): libFuzzer, AFL++ persistent and replay builds.
FUZZ_SECONDS ?= 30
fuzz-build:
	$(MAKE) -C fuzz build
fuzz-smoke:
	$(MAKE) -C fuzz smoke FUZZ_SECONDS=$(FUZZ_SECONDS)
fuzz:
	$(MAKE) -C fuzz campaign CAMPAIGN=$(CAMPAIGN)
fuzz-report:
	$(MAKE) -C fuzz report

# Benchmarks, not tests: interleaved side-by-side runs, ratios printed and
# written to build/bench.md (BENCH_RUNS=30).
bench: all
	$(MAKE) -s -C bench
	$(PYTHON) bench/bench.py

# One serve, SOAK_CALLS (10,000) mixed calls: nothing may grow per call
# (bench/soak.py; prints a table, writes build/soak.md). Not a timed test.
soak: all
	$(PYTHON) bench/soak.py

# The suite in the worlds users run (ci/worlds.py: Node 20/22/24/26 as root,
# Node 22 as an ordinary user, fresh Debian 12 and 13, and a fresh Debian 12
# with no Node, where make deps sets it up); WORLDS="node22 node24" runs
# those only. One line per world.
WORLDS ?=
worlds: asan
	$(PYTHON) ci/worlds.py $(WORLDS)

examples:
	./examples/build.sh

verify-examples:
	./examples/verify.sh

# GNU install conventions. The host finds its helpers beside itself (a
# build tree) or in ../libexec/dsh-capsule (here); the man page and the
# completion are made from the command table by the built host.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
MANDIR ?= $(PREFIX)/share/man
DATAROOTDIR ?= $(PREFIX)/share
DOCDIR ?= $(DATAROOTDIR)/doc/dsh-capsule
COMPLETIONDIR ?= $(DATAROOTDIR)/bash-completion/completions
INSTALL ?= install
MAN_PAGE := $(BUILD)/share/capsule-host.1
COMPLETION := $(BUILD)/share/capsule-host.bash
DOCS := README.md docs/ERRORS.md docs/THREAT_MODEL.md docs/RFC.md
INSTALLED := $(BINDIR)/capsule-host $(LIBEXECDIR)/dsh-capsule/capsule-launcher \
  $(LIBEXECDIR)/dsh-capsule/capsule-probe $(MANDIR)/man1/capsule-host.1 $(COMPLETIONDIR)/capsule-host \
  $(addprefix $(DOCDIR)/,$(notdir $(DOCS)))

man: $(MAN_PAGE) $(COMPLETION)
$(MAN_PAGE): $(BIN)/capsule-host
	@mkdir -p $(dir $@)
	$(BIN)/capsule-host help --man-page > $@
$(COMPLETION): $(BIN)/capsule-host
	@mkdir -p $(dir $@)
	$(BIN)/capsule-host help --bash-completion > $@

install: all man
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)/dsh-capsule $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 755 $(BIN)/capsule-host $(DESTDIR)$(BINDIR)/capsule-host
	$(INSTALL) -m 755 $(BIN)/capsule-launcher $(BIN)/capsule-probe $(DESTDIR)$(LIBEXECDIR)/dsh-capsule/
	$(INSTALL) -m 644 $(MAN_PAGE) $(DESTDIR)$(MANDIR)/man1/capsule-host.1
	$(INSTALL) -m 644 $(COMPLETION) $(DESTDIR)$(COMPLETIONDIR)/capsule-host
	$(INSTALL) -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/

# The house style (.clang-format): format rewrites every C file in place;
# format-check (CI) lists the files it would change and fails. One
# clang-format major formats alike: Debian 12's, 14, is the one pinned.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^fuzz/corpus/')
CLANG_FORMAT ?= clang-format
CLANG_FORMAT_MAJOR := 14
format-version:
	@v=$$($(CLANG_FORMAT) --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p'); \
	 [ "$$v" = "$(CLANG_FORMAT_MAJOR)" ] || { echo "format: $(CLANG_FORMAT) is version $$v; the style is" \
	   "pinned to clang-format $(CLANG_FORMAT_MAJOR) (Debian 12): CLANG_FORMAT=clang-format-$(CLANG_FORMAT_MAJOR)"; exit 1; }
format: format-version
	$(CLANG_FORMAT) -i $(FORMAT_FILES)
format-check: format-version
	@bad=$$(for f in $(FORMAT_FILES); do $(CLANG_FORMAT) $$f | cmp -s - $$f || echo $$f; done); \
	 [ -z "$$bad" ] || { echo "format-check: these files differ from .clang-format (make format):"; \
	   echo "$$bad"; exit 1; }; echo "format-check: $(words $(FORMAT_FILES)) files as .clang-format says"

# The source release (ci/dist.sh): a reproducible tarball of HEAD, its
# .sha256 and the release statement, signed with DIST_KEY when given.
DIST_DIR ?= $(BUILD)/dist
DIST_KEY ?=
dist: all
	ci/dist.sh $(BIN)/capsule-host $(DIST_DIR) $(DIST_KEY)

# Exactly what install wrote; then the folders it made, only if now empty.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(LIBEXECDIR)/dsh-capsule $(DESTDIR)$(DOCDIR) 2>/dev/null

clean:
	rm -rf build
