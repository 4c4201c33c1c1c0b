# vmscope build. Plain `make` only builds; `make deps` installs Debian packages.
# Sources are picked up by directory, so adding a module needs no edit here:
#   common/*.c      -> build/.../libvmscope-common.a: each program takes from
#                   it only the objects it calls (the agent: names, errf)
#   agent/*.c       -> bin/vmscope-agent
#   detect/*.c      the detector engine: no HTTP, no database; linked by the
#                   server, the replay tool and the tests
#   server/*/*.c    -> bin/vmscope-server (one folder per subsystem)
#   replay/*.c      -> bin/vmscope-replay (detect + common only)
#   tests/unit/test_*.c -> one unit-test binary each, linked with common,
#                   detect and server objects
# `make SANITIZE=address,undefined` builds into build/san and bin/san instead.
#
# The version is the file VERSION, one line; `make VERSION=x.y.z` overrides
# it (a VERSION in the environment does not). It reaches the programs (--version, the agent's User-Agent and its
# samples' agent_version) through the generated header build/.../gen/version.h,
# the Debian packages (make deb) and the image's tag (make image).

VERSION := $(shell cat $(CURDIR)/VERSION)
CC      ?= cc
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Wno-format-nonliteral
STD     := -std=c11 -D_GNU_SOURCE
OPT     ?= -O2 -g
DEPFLAGS = -MMD -MP
PKGS    := libmicrohttpd jansson libpq libcurl zlib nettle yajl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# Each program links the libraries its own code (and the common objects it
# takes) calls, no more: the agent runs on every machine and its package must
# not pull in the server's libraries (tests/link_deps.sh checks the binaries'
# NEEDED entries). pkglibs = the pkg-config --libs of the named packages.
pkglibs     = $(shell pkg-config --libs $(1) 2>/dev/null)
AGENT_LIBS  := $(call pkglibs,libcurl zlib) -lm
REPLAY_LIBS := $(call pkglibs,jansson zlib) -lm
SERVER_LIBS := $(call pkglibs,$(PKGS)) -lpthread -lm
LOADGEN_LIBS := $(call pkglibs,libcurl jansson yajl) -lpthread -lm

ifdef SANITIZE
  SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
  OUT      := build/san
  BIN      := bin/san
else
  SANFLAGS :=
  OUT      := build/rel
  BIN      := bin
endif

CFLAGS  += $(STD) $(OPT) $(WARN) $(SANFLAGS) -I$(OUT)/gen -Icommon -Idetect $(addprefix -I,$(SERVER_DIRS)) -Iagent -Ibench $(PKG_CFLAGS)
# The server's built-in --web and --schema: this checkout's, or (make deb)
# the installed copies. An installed copy beside the binary wins (config.c).
WEB_DIR    ?= $(CURDIR)/web
SCHEMA_DIR ?= $(CURDIR)/schema
CFLAGS  += -DVMSCOPE_SCHEMA_DIR='"$(SCHEMA_DIR)"'
LDFLAGS += $(SANFLAGS)

SERVER_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard server/*/*.c))))
COMMON_SRC := $(wildcard common/*.c)
AGENT_SRC  := $(wildcard agent/*.c)
DETECT_SRC := $(wildcard detect/*.c)
REPLAY_SRC := $(wildcard replay/*.c)
SERVER_SRC := $(filter-out server/core/main.c,$(wildcard server/*/*.c))
TEST_SRC   := $(wildcard tests/unit/test_*.c)

COMMON_OBJ := $(COMMON_SRC:%.c=$(OUT)/%.o)
COMMON_LIB := $(OUT)/libvmscope-common.a
AGENT_OBJ  := $(AGENT_SRC:%.c=$(OUT)/%.o)
DETECT_OBJ := $(DETECT_SRC:%.c=$(OUT)/%.o)
REPLAY_OBJ := $(REPLAY_SRC:%.c=$(OUT)/%.o)
SERVER_OBJ := $(SERVER_SRC:%.c=$(OUT)/%.o)
TEST_BINS  := $(TEST_SRC:tests/unit/%.c=$(BIN)/tests/%)

PROGS := $(BIN)/vmscope-server $(BIN)/vmscope-agent
ifneq ($(REPLAY_SRC),)
PROGS += $(BIN)/vmscope-replay
endif

.PHONY: all programs deps run test unit test-san bench bench-agent fuzz fuzz-build bench-build clean
all: $(PROGS) $(TEST_BINS)
programs: $(PROGS)

$(OUT)/server/core/config.o: CFLAGS += -DVMSCOPE_WEB_DIR='"$(WEB_DIR)"'

$(OUT)/%.o: %.c | $(OUT)/gen/version.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# Rewritten only when the version changed, so that a new version recompiles
# just the files that include it (the .d files name them).
$(OUT)/gen/version.h: FORCE
	@mkdir -p $(dir $@)
	@case '$(VERSION)' in [0-9]*) ;; *) echo "VERSION '$(VERSION)' must start with a digit" >&2; exit 1;; esac
	@printf '/* generated from VERSION by the Makefile */\n#define VMSCOPE_VERSION "%s"\n' '$(VERSION)' >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
.PHONY: FORCE
FORCE:

# common/ as an archive: the linker takes only the members a program calls.
$(COMMON_LIB): $(COMMON_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN)/vmscope-agent: $(AGENT_OBJ) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(AGENT_LIBS)

$(BIN)/vmscope-server: $(OUT)/server/core/main.o $(SERVER_OBJ) $(DETECT_OBJ) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(SERVER_LIBS)

$(BIN)/vmscope-replay: $(REPLAY_OBJ) $(DETECT_OBJ) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(REPLAY_LIBS)

# Unit tests link every non-main object; agent modules are linked in too
# (minus agent/main.c) so agent parsers can be tested directly.
AGENT_LIB_OBJ := $(filter-out $(OUT)/agent/main.o,$(AGENT_OBJ))
$(BIN)/tests/%: $(OUT)/tests/unit/%.o $(SERVER_OBJ) $(DETECT_OBJ) $(AGENT_LIB_OBJ) $(OUT)/bench/gen.o $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(SERVER_LIBS)

# Benchmarks: bench/gen.c is shared by the load generator and the bulk loader.
$(BIN)/vmscope-loadgen: $(OUT)/bench/loadgen.o $(OUT)/bench/gen.o $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LOADGEN_LIBS)

$(BIN)/vmscope-bulkload: $(OUT)/bench/bulkload.o $(OUT)/bench/gen.o $(SERVER_OBJ) $(DETECT_OBJ) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(SERVER_LIBS)

# Fuzzing (libFuzzer, clang, ASan+UBSan): one binary per tests/fuzz/fuzz_*.c,
# linked with common/ and the agent's parsers. `make fuzz` runs each for
# FUZZ_SECONDS; `make test` runs a short budget (tests/fuzz_short.sh).
FUZZ_CC    ?= clang
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS  := $(FUZZ_SRC:tests/fuzz/%.c=bin/fuzz/%)
FUZZ_LIB   := $(COMMON_SRC) $(filter-out agent/main.c,$(AGENT_SRC))
bin/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB) $(wildcard common/*.h agent/*.h) $(OUT)/gen/version.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(STD) $(FUZZ_FLAGS) -Wall -Wextra -Werror -I$(OUT)/gen -Icommon -Iagent $(PKG_CFLAGS) \
		-o $@ $< $(FUZZ_LIB) $(SERVER_LIBS)
fuzz-build: $(FUZZ_BINS)
fuzz: deps
	@$(MAKE) --no-print-directory fuzz-build
	@scripts/fuzz.sh $${FUZZ_SECONDS:-300}

deps:
	@scripts/deps.sh

run: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@scripts/run.sh

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: deps-packaging
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@$(MAKE) --no-print-directory -j$(JOBS) SANITIZE=address,undefined all
	@$(MAKE) --no-print-directory -j$(JOBS) fuzz-build
	@scripts/test.sh

# Soak: the PostgreSQL-restart test with 200 simulated agents for 2 minutes
# instead of make test's 20 s (it runs a cluster of its own).
.PHONY: soak
soak: deps
	@$(MAKE) --no-print-directory SANITIZE=address,undefined all
	@FLEET_SECONDS=$${FLEET_SECONDS:-120} VMSCOPE_TEST_DB=$${VMSCOPE_TEST_DB:-own-cluster} \
		SERVER=$(CURDIR)/bin/san/vmscope-server AGENT=$(CURDIR)/bin/san/vmscope-agent \
		tests/e2e/test_pg_restart.sh

# instructions per parsed sample under callgrind (docs/scaling.md)
$(BIN)/vmscope-parsecost: $(OUT)/bench/parsecost.o $(OUT)/bench/gen.o $(SERVER_OBJ) $(DETECT_OBJ) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(SERVER_LIBS)

BENCH_BINS := $(BIN)/vmscope-loadgen $(BIN)/vmscope-bulkload $(BIN)/vmscope-parsecost
bench-build: $(BENCH_BINS)
bench: deps
	@$(MAKE) --no-print-directory all bench-build
	@bench/run.sh
bench-agent: deps
	@$(MAKE) --no-print-directory all
	@bench/agent_footprint.sh

# Install under PREFIX (default /usr/local; the units' paths follow it),
# DESTDIR for packaging: install-agent the agent, its unit and agent.conf;
# install-server the server, vmscope-replay, the schema, the dashboard, its
# unit and server.env; install both and the docs in DOCDIR. agent.conf is
# 0644 (the agent's user reads it; its token comes as a credential),
# server.env 0640 (read by systemd); neither overwrites an existing file. The
# server finds its schema and web files in PREFIX/share/vmscope unless
# --schema / --web say otherwise. The units' Documentation= names DOCDIR.
PREFIX  ?= /usr/local
DOCDIR  ?= $(PREFIX)/share/doc/vmscope
UNITDIR ?= /lib/systemd/system
.PHONY: install install-agent install-server
install: install-agent install-server
	install -d $(DESTDIR)$(DOCDIR)
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/

# unit NAME: deploy/NAME.service with /usr/local/ made PREFIX (its doc path DOCDIR)
unit = install -d $(DESTDIR)$(UNITDIR) && \
	sed -e 's|/usr/local/share/doc/vmscope/|$(DOCDIR)/|g' -e 's|/usr/local/|$(PREFIX)/|g' \
	deploy/$(1).service >$(DESTDIR)$(UNITDIR)/$(1).service && chmod 0644 $(DESTDIR)$(UNITDIR)/$(1).service
# conf FILE MODE: deploy/FILE.example as /etc/vmscope/FILE unless it exists
conf = install -d $(DESTDIR)/etc/vmscope && \
	{ [ -e $(DESTDIR)/etc/vmscope/$(1) ] || install -m $(2) deploy/$(1).example $(DESTDIR)/etc/vmscope/$(1); }

install-agent: $(BIN)/vmscope-agent
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN)/vmscope-agent $(DESTDIR)$(PREFIX)/bin/
	$(call unit,vmscope-agent)
	$(call conf,agent.conf,0644)

install-server: $(BIN)/vmscope-server $(BIN)/vmscope-replay
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/vmscope/schema $(DESTDIR)$(PREFIX)/share/vmscope/web
	install -m 0755 $(BIN)/vmscope-server $(BIN)/vmscope-replay $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 schema/*.sql $(DESTDIR)$(PREFIX)/share/vmscope/schema/
	cp -r web/. $(DESTDIR)$(PREFIX)/share/vmscope/web/
	$(call unit,vmscope-server)
	$(call conf,server.env,0640)

# Debian packages and the agent's container image (deploy/README.md), in
# DIST: `make deb` builds vmscope-agent_VERSION_ARCH.deb and
# vmscope-server_VERSION_ARCH.deb with dpkg-buildpackage (debian/) and checks
# them with lintian (scripts/deb.sh); `make image` also writes the agent's OCI
# image, from scratch, with umoci and skopeo (scripts/image.sh). Both install
# their tools when missing (scripts/deps.sh packaging).
DIST ?= dist
.PHONY: deb image deps-packaging
deps-packaging: deps
	@scripts/deps.sh packaging
deb: deps-packaging
	@VERSION='$(VERSION)' DIST='$(DIST)' scripts/deb.sh
image: deb
	@VERSION='$(VERSION)' DIST='$(DIST)' scripts/image.sh

clean:
	rm -rf build bin dist

-include $(shell find build -name '*.d' 2>/dev/null)
