# SPDX-License-Identifier: MIT
#
# uflush build.  Targets:
#   make                build build/libuflush.{a,so}, uflush-bench, tests
#   make test           install missing packages, build, run the test suite
#   make stress         build and run uflush-stress (threaded scenarios, no
#                       criterion: what runs under SANITIZE=thread)
#   make sqlite-crash   build and run the SQLite crash test (SIGKILL at random
#                       points, then integrity_check; SQLITE_CRASH_ARGS)
#   make sqlite-crash-sim  the same over a sim device, power cuts at seeded
#                       requests (SQLITE_CRASH_SIM_ARGS)
#   make break-check    the two power-cut tests against two broken fsyncs
#                       (patched scratch copies): both must fail
#   make run            install missing packages, build uflush-bench (only
#                       what the demo runs), and run the demo:
#                       `uflush-bench ab --matrix demo` (linux-3.1 vs 3.2 on
#                       a shaped JBOD of temporary loop devices, and an fsync
#                       load), then a busyloop variant pair; results and
#                       traces in build/run/ (RUN_ARGS go to the A/B)
#   make run-io         the I/O-engine benchmark vs fio (uflush-bench io)
#   make run-hits       cache hits vs memcpy, 1 and 2 threads (uflush-bench hits)
#   make run-idle       wakeups of an idle cache per thread (uflush-bench idle)
#   make fuzz           build the libFuzzer harness of the public API with
#                       clang, ASan and UBSan (build-fuzz/uflush-api-fuzz)
#   make fuzz-run       run it on tests/fuzz/corpus for FUZZ_SECONDS (60)
#   make crashloop      build and run uflush-crashloop (kill -9 at random
#                       moments, check fsynced data; CRASHLOOP_ARGS)
#   make crashloop-sim  the same workload over a sim device, power cuts at
#                       seeded requests (CRASHLOOP_SIM_ARGS)
#   make install PREFIX=/usr/local DESTDIR=
#                       the library, uflush.h, the SQLite VFS (library,
#                       extension, header), uflush-bench, the plugin kit
#                       (include/uflush/, share/uflush/examples/) and
#                       uflush.pc + uflush-plugin.pc written for PREFIX
#   make install-check  install into a scratch DESTDIR and build a plugin
#                       and an embedder against it (scripts/test-install)
# Knobs: CC=clang, SANITIZE=address (ASan+UBSan) | thread (TSan), V=1.
#
# Every target first runs scripts/install-deps, which installs the Debian
# packages uflush needs when they are missing (and says so): the targets
# depend on deps, and every compile waits for it (order-only).

CC       ?= cc
PREFIX   ?= /usr/local
SANITIZE ?=
O        ?= build
# The one version number is the header's (UFLUSH_VERSION_STRING).
VERSION  := $(shell sed -n 's/^\#define UFLUSH_VERSION_STRING[^"]*"\(.*\)"/\1/p' include/uflush.h)

CFLAGS_BASE := -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC \
	-Iinclude -iquote engine -iquote . -D_GNU_SOURCE -pthread
LIBS := -luring -laio -lpthread -lm -ldl

ifeq ($(SANITIZE),address)
  CFLAGS_BASE += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined -DUF_NO_JEMALLOC
  LDSAN := -fsanitize=address,undefined
  O := build-asan
else ifeq ($(SANITIZE),thread)
  CFLAGS_BASE += -fsanitize=thread -fno-omit-frame-pointer -DUF_NO_JEMALLOC
  LDSAN := -fsanitize=thread
  O := build-tsan
else ifeq ($(SANITIZE),fuzzer)
  # clang only: libFuzzer's coverage in the objects, its main() at link
  CFLAGS_BASE += -fsanitize=fuzzer-no-link,address,undefined \
	-fno-omit-frame-pointer -fno-sanitize-recover=undefined -DUF_NO_JEMALLOC
  LDSAN := -fsanitize=address,undefined
  O := build-fuzz
else ifeq ($(SANITIZE),)
  LIBS += -ljemalloc
else
  $(error SANITIZE must be address, thread or fuzzer)
endif

CFLAGS  += $(CFLAGS_BASE)
LDFLAGS += $(LDSAN) -pthread

LIB_SRCS   := $(sort $(wildcard engine/*.c engine/*/*.c engine/*/*/*.c io/*.c \
	policies/*.c))
BENCH_SRCS := $(sort $(wildcard bench/*.c))
# The bench harness, also linked into the tests (tests/test_bench_harness.c).
BENCH_LIB_SRCS := bench/harness.c bench/target.c bench/host.c bench/fio.c \
	bench/abcase.c bench/ab.c bench/plot.c bench/compare.c bench/ktrace.c \
	bench/calib.c
TEST_SRCS  := $(sort $(wildcard tests/*.c))
STRESS_SRCS := $(sort $(wildcard tests/stress/*.c))
FUZZ_SRCS  := tests/fuzz/api_fuzz.c
CRASH_SRCS := tests/crash/crashloop.c tests/crash/crashloop_sim.c
LIB_OBJS   := $(LIB_SRCS:%.c=$(O)/%.o)
BENCH_OBJS := $(BENCH_SRCS:%.c=$(O)/%.o)
TEST_OBJS  := $(TEST_SRCS:%.c=$(O)/%.o) $(BENCH_LIB_SRCS:%.c=$(O)/%.o)
STRESS_OBJS := $(STRESS_SRCS:%.c=$(O)/%.o)
FUZZ_OBJS  := $(FUZZ_SRCS:%.c=$(O)/%.o)
CRASH_OBJS := $(CRASH_SRCS:%.c=$(O)/%.o)

TOOLS := $(O)/uflush-bench
TESTBIN := $(O)/uflush-tests
PLUGIN_SRCS := $(sort $(wildcard policies/examples/*.c))
PLUGINS := $(PLUGIN_SRCS:policies/examples/%.c=$(O)/plugins/%.so)
STRESSBIN := $(O)/uflush-stress
CRASHBIN := $(O)/uflush-crashloop
FUZZBIN  := build-fuzz/uflush-api-fuzz
FUZZ_SECONDS ?= 60

# SQLite on uflush (clients/sqlite): the VFS as a library, as a loadable
# extension for the stock sqlite3 shell, and its crash test.
SQLITE_LIB := $(O)/libuflush_sqlite.a
SQLITE_EXT := $(O)/clients/uflush_sqlite.so
SQLITE_CRASH := $(O)/uflush-sqlite-crash
SQLITE_LIBS := $(SQLITE_LIB) -lsqlite3

# Under TSan the first report ends uflush-stress with an error; a caller's
# own $TSAN_OPTIONS come last and win.
ifeq ($(SANITIZE),thread)
  STRESS_ENV := TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 $$TSAN_OPTIONS"
endif

ifneq ($(V),1)
  Q := @
endif

.PHONY: all build deps test run run-io run-hits run-idle check layers stress install clean \
	sqlite-crash sqlite-crash-sim break-check fuzz fuzz-run crashloop \
	crashloop-sim install-check FORCE

all: build

deps:
	$(Q)scripts/install-deps

build: deps $(O)/libuflush.a $(O)/libuflush.so $(TOOLS) $(TESTBIN) $(STRESSBIN) \
	$(PLUGINS) $(SQLITE_LIB) $(SQLITE_EXT) $(SQLITE_CRASH) $(CRASHBIN)

# The commit a result names (uflush-bench's JSON): as of this build.
GIT_COMMIT := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
$(O)/bench/ab.o $(O)/bench/target.o: CFLAGS += -DUF_BENCH_VERSION='"$(VERSION)"' \
	-DUF_BENCH_COMMIT='"$(GIT_COMMIT)"'

# uf_version()'s commit: the stamp is rewritten only when the commit (or
# a dirty tree) changes, so version.o is rebuilt then and only then.
GIT_COMMIT := $(shell git describe --always --dirty --abbrev=12 2>/dev/null)
$(O)/git-commit: FORCE
	@mkdir -p $(dir $@)
	$(Q)echo '$(GIT_COMMIT)' | cmp -s - $@ || echo '$(GIT_COMMIT)' > $@
$(O)/engine/api/version.o $(O)/ext/engine/api/version.o: $(O)/git-commit
$(O)/engine/api/version.o $(O)/ext/engine/api/version.o: \
	CFLAGS += -DUF_GIT_COMMIT='"$(GIT_COMMIT)"'

$(O)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(O)/libuflush.a: $(LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/libuflush.so: $(LIB_OBJS)
	$(Q)$(CC) -shared -Wl,-soname,libuflush.so.0 -o $@ $^ $(LDFLAGS) $(LIBS)

# Example policy plugins: their engine symbols resolve in the loading
# process (-rdynamic on our executables).
$(O)/plugins/%.so: policies/examples/%.c | deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -shared -o $@ $< $(LDSAN)

$(O)/uflush-bench: $(BENCH_OBJS) $(O)/libuflush.a $(SQLITE_LIB)
	$(Q)$(CC) -rdynamic -o $@ $(BENCH_OBJS) $(SQLITE_LIBS) \
		$(O)/libuflush.a $(LDFLAGS) $(LIBS)

$(TESTBIN): $(TEST_OBJS) $(O)/libuflush.a $(SQLITE_LIB)
	$(Q)$(CC) -rdynamic -o $@ $(TEST_OBJS) $(SQLITE_LIBS) \
		$(O)/libuflush.a $(LDFLAGS) $(LIBS) -lcriterion

$(SQLITE_LIB): $(O)/clients/sqlite/uflush_sqlite.o
	$(Q)rm -f $@ && ar rcs $@ $^

# The extension carries its own copy of libuflush, built without jemalloc
# (whose initial-exec TLS cannot be dlopen()ed into the shell), and
# exports only its entry points.
SQLITE_EXT_OBJS := $(LIB_SRCS:%.c=$(O)/ext/%.o)

$(O)/ext/%.o: %.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (extension)")
	$(Q)$(CC) $(CFLAGS) -DUF_NO_JEMALLOC -MMD -MP -c $< -o $@

$(O)/clients/sqlite/uflush_sqlite-ext.o: clients/sqlite/uflush_sqlite.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (extension)")
	$(Q)$(CC) $(CFLAGS) -DUF_SQLITE_EXT -fvisibility=hidden -MMD -MP \
		-c $< -o $@

$(SQLITE_EXT): $(O)/clients/sqlite/uflush_sqlite-ext.o $(SQLITE_EXT_OBJS) \
		clients/sqlite/uflush_sqlite.map
	$(Q)$(CC) -shared -Wl,--version-script=clients/sqlite/uflush_sqlite.map \
		-o $@ $(filter %.o,$^) $(LDFLAGS) \
		$(filter-out -ljemalloc,$(LIBS))

$(SQLITE_CRASH): $(O)/tests/crash/sqlite_crash.o $(O)/libuflush.a $(SQLITE_LIB)
	$(Q)$(CC) -o $@ $< $(SQLITE_LIBS) $(O)/libuflush.a $(LDFLAGS) $(LIBS)

# No criterion here: it cannot start under TSan (Criterion#274).
$(STRESSBIN): $(STRESS_OBJS) $(O)/libuflush.a
	$(Q)$(CC) -o $@ $(STRESS_OBJS) $(O)/libuflush.a $(LDFLAGS) $(LIBS)

$(CRASHBIN): $(CRASH_OBJS) $(O)/libuflush.a
	$(Q)$(CC) -o $@ $(CRASH_OBJS) $(O)/libuflush.a $(LDFLAGS) $(LIBS)

# Only under SANITIZE=fuzzer (make fuzz): the objects carry its coverage.
build-fuzz/uflush-api-fuzz: $(FUZZ_OBJS) $(O)/libuflush.a
	$(Q)$(CC) -fsanitize=fuzzer,address,undefined -o $@ $(FUZZ_OBJS) \
		$(O)/libuflush.a -pthread $(LIBS)

# The suite needs root for loop devices; without it those tests skip.
# CRITERION_JOBS bounds the parallel workers (timing tests dislike crowds).
CRITERION_JOBS ?= 2
test: deps
	$(Q)scripts/check-layers
	$(Q)$(MAKE) --no-print-directory build
	$(Q)$(MAKE) --no-print-directory check
	$(Q)$(MAKE) --no-print-directory install-check

# Under SANITIZE=thread only uflush-stress runs: the criterion binary
# aborts at start under TSan ("Could not initialize inheritable arena").
ifeq ($(SANITIZE),thread)
check: $(STRESSBIN)
	@echo "check: the criterion suite cannot run under TSan (Criterion#274); running uflush-stress instead"
	$(Q)$(STRESS_ENV) $(STRESSBIN) $(STRESS_ARGS)
else
check: $(TESTBIN) $(STRESSBIN)
	$(Q)LSAN_OPTIONS="suppressions=$(CURDIR)/tests/lsan.supp $$LSAN_OPTIONS" \
		$(TESTBIN) --jobs $(CRITERION_JOBS) --timeout 300 $(TEST_ARGS)
	$(Q)$(STRESSBIN) $(STRESS_ARGS)
endif

# The include lines keep to the layers DESIGN.md draws.
layers: deps
	$(Q)scripts/check-layers

# STRESS_ARGS="--filter engine" runs a subset; uflush-stress --list.
stress: deps
	$(Q)$(MAKE) --no-print-directory $(STRESSBIN)
	$(Q)$(STRESS_ENV) $(STRESSBIN) $(STRESS_ARGS)

# The SQLite crash test: SIGKILL at random moments, then PRAGMA
# integrity_check and the bank's invariant (SQLITE_CRASH_ARGS="--kills 50").
sqlite-crash: deps
	$(Q)$(MAKE) --no-print-directory $(SQLITE_CRASH)
	$(Q)$(SQLITE_CRASH) $(SQLITE_CRASH_ARGS)

# The same bank over a sim device in this process: power cuts at seeded
# requests in place of kills (no root).  SQLITE_CRASH_SIM_ARGS.
SQLITE_CRASH_SIM_ARGS ?= --kills 200 --seed 1 --twice
sqlite-crash-sim: deps
	$(Q)$(MAKE) --no-print-directory $(SQLITE_CRASH)
	$(Q)$(SQLITE_CRASH) --sim $(SQLITE_CRASH_SIM_ARGS)

# The power-cut tests must fail on a broken fsync: tests/crash/break-check
# patches a scratch copy of the tree (tests/crash/breaks/*.patch).
break-check: deps
	$(Q)$(MAKE) --no-print-directory $(CRASHBIN) $(SQLITE_CRASH)
	$(Q)O=$(O) tests/crash/break-check $(BREAK_CHECK_ARGS)

RUN_DIR := $(O)/run

# The demo runs uflush-bench only: build that, not the test suite.
run: deps
	$(Q)$(MAKE) --no-print-directory $(O)/uflush-bench
	$(Q)mkdir -p $(RUN_DIR)
	$(Q)$(O)/uflush-bench ab --matrix demo --reps 2 --dev-size 256M \
		--plots $(RUN_DIR)/plots --json $(RUN_DIR)/ab.json $(RUN_ARGS)
	$(Q)echo; echo "== busyloop: seed 000's v3a (busy-loops) vs v4.2, 3 s stuck =="
	$(Q)$(O)/uflush-bench busyloop --secs 3 --variants v3a,v4.2 --files 2 \
		--json $(RUN_DIR)/busyloop.json
	$(Q)echo; echo "results: $(RUN_DIR)/ab.json $(RUN_DIR)/busyloop.json"

# One benchmark, RUN_ARGS going to it: make run-io, run-hits, run-idle.
run-io run-hits run-idle: deps
	$(Q)$(MAKE) --no-print-directory $(O)/uflush-bench
	$(Q)$(O)/uflush-bench $(@:run-%=%) $(RUN_ARGS)

# libFuzzer: clang, and libclang-rt-dev (only recommended by clang).
fuzz:
	$(Q)UF_FUZZ=1 CC=clang scripts/install-deps
	$(Q)$(MAKE) --no-print-directory SANITIZE=fuzzer CC=clang $(FUZZBIN)

# New inputs go to build-fuzz/corpus; tests/fuzz/corpus (the committed
# seeds) is only read.  Crashes land in build-fuzz/ as crash-<sha1>.
FUZZ_OPTS ?= -timeout=60 -rss_limit_mb=2048
fuzz-run: fuzz
	@mkdir -p build-fuzz/corpus
	$(Q)$(FUZZBIN) -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=build-fuzz/ \
		-print_final_stats=1 $(FUZZ_OPTS) build-fuzz/corpus tests/fuzz/corpus

# Needs root for a loop device.  CRASHLOOP_ARGS="-n 150 -s 1"
crashloop: deps
	$(Q)$(MAKE) --no-print-directory $(CRASHBIN)
	$(Q)$(CRASHBIN) $(CRASHLOOP_ARGS)

# The same workload over a sim device, power cuts at seeded requests in
# place of kills (no root).  Deterministic: --twice runs every seed twice
# and fails if the images differ.
CRASHLOOP_SIM_ARGS ?= -n 100 -s 1 --twice
crashloop-sim: deps
	$(Q)$(MAKE) --no-print-directory $(CRASHBIN)
	$(Q)$(CRASHBIN) --sim $(CRASHLOOP_SIM_ARGS)

# The plugin kit: the engine's headers as the tree has them (a plugin
# includes "mm/backing-dev.h", "policies/policy.h", ...), without the
# tree-internal ones (uflush-internal.h, io/testdev.h).
KIT_HEADERS := $(sort $(wildcard engine/kernel/*.h engine/lib/*.h \
	engine/mm/*.h engine/fs/*.h engine/trace/*.h engine/trace/events/*.h)) \
	io/io.h policies/policy.h policies/nowait.h policies/requeue.h
KIT_DIR = $(DESTDIR)$(PREFIX)/include/uflush
LIBDIR = $(DESTDIR)$(PREFIX)/lib

# The .pc files are written at install time, so that they always name the
# PREFIX of this install, whatever an earlier build was given.
PC_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|'

install: all
	install -d $(LIBDIR)/pkgconfig $(LIBDIR)/uflush \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/share/uflush/examples
	install -m 644 $(O)/libuflush.a $(LIBDIR)/
	install -m 755 $(O)/libuflush.so $(LIBDIR)/libuflush.so.0
	ln -sf libuflush.so.0 $(LIBDIR)/libuflush.so
	install -m 644 include/uflush.h clients/sqlite/uflush_sqlite.h \
		$(DESTDIR)$(PREFIX)/include/
	install -m 644 $(SQLITE_LIB) $(LIBDIR)/
	install -m 755 $(SQLITE_EXT) $(LIBDIR)/uflush/
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	$(Q)for h in $(KIT_HEADERS); do d=$(KIT_DIR)/$$(dirname $${h#engine/}); \
		install -d $$d && install -m 644 $$h $$d/ || exit 1; done
	install -m 644 $(PLUGIN_SRCS) $(DESTDIR)$(PREFIX)/share/uflush/examples/
	$(PC_SUBST) uflush.pc.in > $(LIBDIR)/pkgconfig/uflush.pc
	$(PC_SUBST) uflush-plugin.pc.in > $(LIBDIR)/pkgconfig/uflush-plugin.pc

# make install into a scratch DESTDIR, then build README's plugin command
# and a small embedder against what was installed (run by make test).
install-check: build
	$(Q)MAKE="$(MAKE)" O=$(O) CC="$(CC)" SANITIZE="$(SANITIZE)" \
		scripts/test-install

clean:
	rm -rf build build-asan build-tsan build-fuzz

-include $(LIB_OBJS:.o=.d) $(BENCH_OBJS:.o=.d) $(TEST_OBJS:.o=.d) \
	$(STRESS_OBJS:.o=.d) $(PLUGINS:.so=.d) \
	$(O)/clients/sqlite/uflush_sqlite.d \
	$(O)/clients/sqlite/uflush_sqlite-ext.d $(O)/tests/crash/sqlite_crash.d \
	$(SQLITE_EXT_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) $(CRASH_OBJS:.o=.d)
