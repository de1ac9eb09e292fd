# cdpgate — one GNU Makefile.
#
#   make                 build/cdpgate and build/libcdpgate.a
#   make CC=clang        same with clang
#   make OPENSSL=1       adds libssl/libcrypto (wss://, second AES-GCM backend)
#   make SAN=1           ASan + UBSan build (no recovery) into build-san/
#   make STATIC=1        one static binary with musl (musl-gcc) into build-static/:
#                        no runtime dependency at all, the smallest footprint
#   make test            unit tests, vector tests, corpus replay, Chromium integration
#   make fuzz            clang libFuzzer targets, FUZZ_TIME seconds each (default 20)
#   make bench           benchmarks with peers, figures printed (not asserted);
#                        BENCH=load: only page loads, privileged egress rule off/on
#   make bench-smoke     every benchmark once in quick mode (CI: none may rot)
#   make check           source style checker (line length, banned calls), the
#                        layering check (docs/architecture.md's module map) and
#                        the size check (files, functions: tests/checkfnlen.sh)
#   make install PREFIX=/usr/local
#   make clean
#
# Local overrides go in an optional config.mak.

-include config.mak

CC      ?= cc
PREFIX  ?= /usr/local
OPENSSL ?= 0
SAN     ?= 0
STATIC  ?= 0
FUZZ_TIME ?= 20

# STATIC=1: linked statically against musl (Debian: apt-get install
# musl-tools). A static glibc would want its shared NSS modules at run time
# for getaddrinfo; musl reads /etc/hosts and resolv.conf itself.
ifeq ($(STATIC),1)
ifeq ($(OPENSSL),1)
$(error STATIC=1 links no OpenSSL: build OPENSSL=1 dynamically)
endif
ifeq ($(origin CC),default)
CC       = musl-gcc
endif
BUILD   ?= build-static
LDFLAGS += -static
endif

ifeq ($(SAN),1)
BUILD   ?= build-san
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT     ?= -O1 -g
else
BUILD   ?= build
SANFLAGS =
OPT     ?= -O2 -g
endif

WARN    = -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes \
          -Wmissing-prototypes -Wno-unused-parameter
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -I.
CFLAGS  += -std=c11 $(OPT) $(WARN) $(SANFLAGS) -MMD -MP
LDFLAGS += $(SANFLAGS)
LDLIBS  +=

ifeq ($(OPENSSL),1)
CPPFLAGS += -DCDPGATE_OPENSSL=1
LDLIBS   += -lssl -lcrypto
endif

MODULES  = base url json ws cdp gate snapshot vault replay live evidence a11y
LIB_SRC  = $(sort $(foreach m,$(MODULES),$(wildcard $(m)/*.c)))
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_SRC  = $(sort $(wildcard cli/*.c))
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
HEADERS  = $(foreach m,$(MODULES),$(m)/$(m).h)

# Unit and integration test programs: tests/test_*.c, each linked with
# tests/harness.c and the library; the malloc wrapper lets tests fail the
# Nth allocation (see tests/harness.h).
TEST_SRC = $(sort $(wildcard tests/test_*.c))
TEST_BIN = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
# Support objects go in an archive so a test links only what it uses.
TEST_SUPPORT = $(BUILD)/tests/libsupport.a
.SECONDARY: $(BUILD)/tests/harness.o $(BUILD)/tests/fixture.o $(BUILD)/tests/testlib.o
TEST_WRAP = -Wl,--wrap=malloc -Wl,--wrap=realloc -Wl,--wrap=calloc
# test_takeover injects a fault right after a session is saved (vault_put).
TEST_WRAP_test_takeover = -Wl,--wrap=vault_put

FUZZ_SRC = $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAY = $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/replay_%)
FUZZ_BIN = $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)

.PHONY: all test tests-build check valgrind fuzz bench bench-smoke install clean demo
all: $(BUILD)/cdpgate $(BUILD)/libcdpgate.a

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The archive is rebuilt when the module list changes (MODULES=... builds).
$(BUILD)/.modules: FORCE
	@mkdir -p $(BUILD)
	@echo "$(MODULES)" | cmp -s - $@ || echo "$(MODULES)" > $@

$(BUILD)/libcdpgate.a: $(LIB_OBJ) $(BUILD)/.modules
	@rm -f $@
	ar rcs $@ $(LIB_OBJ)

FORCE:

$(BUILD)/cdpgate: $(CLI_OBJ) $(BUILD)/libcdpgate.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libcdpgate.a $(LDLIBS)

$(BUILD)/tests/libsupport.a: $(BUILD)/tests/harness.o $(BUILD)/tests/fixture.o \
    $(BUILD)/tests/testlib.o
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT) $(BUILD)/libcdpgate.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(TEST_WRAP) $(TEST_WRAP_$*) -o $@ $< \
	    $(TEST_SUPPORT) $(BUILD)/libcdpgate.a $(LDLIBS)

# fuzz_mcp also links the MCP protocol layer (cli/mcp.c, I/O-free).
FUZZ_EXTRA_fuzz_mcp = cli/mcp.c
$(BUILD)/fuzz/replay_fuzz_mcp build-fuzz/fuzz_mcp: cli/mcp.c cli/mcp.h
$(BUILD)/fuzz/replay_%: tests/fuzz/%.c tests/fuzz/replay.c $(BUILD)/libcdpgate.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(FUZZ_EXTRA_$*) \
	    $(BUILD)/libcdpgate.a $(LDLIBS)

# probe_nocheck: a planted check-less test for tests/checkrun.sh.
tests-build: $(TEST_BIN) $(FUZZ_REPLAY) $(BUILD)/cdpgate $(BUILD)/tests/probe_nocheck
test: all tests-build
	@sh tests/setup.sh
	@BUILD=$(BUILD) sh tests/run.sh

check: $(BUILD)/libcdpgate.a $(BUILD)/cdpgate
	@sh tests/checksrc.sh
	@sh tests/checklayers.sh
	@sh tests/checksyms.sh $(BUILD)
	@sh tests/checkfnlen.sh

# Every test program under valgrind (memcheck, leaks are errors; any
# valgrind error is a non-zero exit, which tests/run.sh counts as a failure).
# VALGRIND_TESTS="test_json test_gate" limits it to those programs (the fuzz
# corpus replays always run).
valgrind: all tests-build
	@sh tests/setup.sh
	@BUILD=$(BUILD) TESTS="$(VALGRIND_TESTS)" VALGRIND="valgrind -q --error-exitcode=99 \
	    --leak-check=full --errors-for-leak-kinds=definite,indirect" sh tests/run.sh

# libFuzzer needs clang; each target runs FUZZ_TIME seconds on its corpus.
FUZZ_FLAGS = -std=c11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJ = $(LIB_SRC:%.c=build-fuzz/obj/%.o)
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(FUZZ_FLAGS) -MMD -MP -fsanitize=fuzzer-no-link -c -o $@ $<
build-fuzz/libcdpgate.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^
build-fuzz/%: tests/fuzz/%.c build-fuzz/libcdpgate.a
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_EXTRA_$*) \
	    build-fuzz/libcdpgate.a $(LDLIBS)
fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do n=$$(basename $$f); \
	  mkdir -p build-fuzz/corpus/$$n; \
	  echo "fuzz: $$n for $(FUZZ_TIME)s"; \
	  ./$$f -max_total_time=$(FUZZ_TIME) -max_len=65536 -print_final_stats=0 \
	    build-fuzz/corpus/$$n tests/fuzz/corpus/$$n 2>build-fuzz/$$n.log \
	    || { tail -40 build-fuzz/$$n.log; exit 1; }; \
	done; echo "fuzz: all targets ran clean"

bench: all
	@BUILD=$(BUILD) BENCH=$(BENCH) sh bench/run.sh

# Every benchmark built and run once in quick mode (seconds each, figures
# printed, nothing asserted on speed): .ci/run runs it so a benchmark that
# no longer builds or runs fails CI.
bench-smoke: all
	@sh tests/setup.sh
	@BUILD=$(BUILD) sh bench/smoke.sh

demo: all
	@sh cli/demo.sh $(BUILD)/cdpgate

# Headers keep their module folders under include/cdpgate/, plus one
# umbrella header: embedders use -I$(PREFIX)/include/cdpgate and
# #include <cdpgate.h>, and link $(PREFIX)/lib/libcdpgate.a.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	    $(DESTDIR)$(PREFIX)/include/cdpgate
	install -m 0755 $(BUILD)/cdpgate $(DESTDIR)$(PREFIX)/bin/cdpgate
	install -m 0644 $(BUILD)/libcdpgate.a $(DESTDIR)$(PREFIX)/lib/libcdpgate.a
	for h in $(HEADERS); do \
	    install -d $(DESTDIR)$(PREFIX)/include/cdpgate/$$(dirname $$h); \
	    install -m 0644 $$h $(DESTDIR)$(PREFIX)/include/cdpgate/$$h; done
	{ echo "/* cdpgate.h — everything an embedder needs (generated by make install). */"; \
	  echo "#ifndef CDPGATE_H"; echo "#define CDPGATE_H"; \
	  for h in $(HEADERS); do echo "#include \"$$h\""; done; echo "#endif"; } \
	    > $(DESTDIR)$(PREFIX)/include/cdpgate/cdpgate.h

clean:
	rm -rf build build-san build-fuzz build-*/

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(BUILD)/tests/harness.d $(TEST_BIN:=.d) \
    $(BUILD)/tests/fixture.d $(BUILD)/tests/testlib.d $(FUZZ_OBJ:.o=.d)
