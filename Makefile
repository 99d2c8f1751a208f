# treefarm — one non-recursive Makefile.
#
#   make            build bin/treefarm and bin/treefarm-node under $(BUILD),
#                   and bin/treefarm-sim where SimGrid is installed
#   make check      build and run every unit and integration test
#   make demo       run the reference 7-node fork in emulation
#   make bench      benchmarks against the machine's limits: a table and bench/results.json
#   make study      the reference policy study into docs/study (~30 min)
#   make fuzz       libFuzzer on the wire decoder, the config loader and
#                   the tasks loader (tests/fuzz/fuzz_*.c), FUZZ_SECONDS
#                   (default 60) each; make check runs them
#                   for a few seconds
#   make SANITIZE=address,undefined check    the same under sanitizers
#   make install PREFIX=/usr/local DESTDIR=  install the two commands
#
# Targets that need the Debian packages first run scripts/install-deps.sh,
# which installs what is missing and says nothing when nothing is.

.DELETE_ON_ERROR:
.SUFFIXES:
SHELL := /bin/bash
# Builds use every CPU (a clean make check built for 74 s one file at a
# time on 2 cores); an explicit -j on the command line still wins.
ifeq ($(filter -j% j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif

PREFIX  ?= /usr/local
DESTDIR ?=
SANITIZE ?=

ifeq ($(SANITIZE),)
BUILD ?= build
else
BUILD ?= build/san-$(subst $(comma),-,$(SANITIZE))
endif
comma := ,

PKGS     := libczmq libzmq jansson
CC       ?= cc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
CPPFLAGS += -I. -MMD -MP -D_GNU_SOURCE
WERROR   ?= $(if $(CI),-Werror,)
CFLAGS   += $(WERROR)
ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

DEPS_STAMP := $(BUILD)/.deps-ok
# Whether SimGrid is here, found once the packages are in: make reads
# this file again after making it (a fresh machine installs SimGrid
# first). Without SimGrid everything but treefarm-sim builds, and
# `treefarm simulate` says how to get it.
DEPS_MK := $(BUILD)/.deps.mk
ifeq ($(filter clean,$(MAKECMDGOALS)),)
-include $(DEPS_MK)
endif
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lglpk -lpthread -lm
CMOCKA_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null)

# One archive per layer, and each program links only the layers it may
# use (docs/architecture.md): a controller file that calls into node/, or
# an overlay file that calls into policies/, fails to link.
OVERLAY_SRC    := $(wildcard overlay/*.c)
POLICIES_SRC   := $(wildcard policies/*.c)
NODE_SRC       := $(filter-out node/main.c,$(wildcard node/*.c))
CONTROLLER_SRC := $(filter-out controller/main.c,$(wildcard controller/*.c))
# The simulator drives node cores and files controller results: the one
# program that links every layer (docs/architecture.md).
SIM_SRC        := $(filter-out sim/main.c,$(wildcard sim/*.c)) $(wildcard sim/*.cpp)
LIB_SIM        := $(BUILD)/libsim.a
SIM_LIBS        = $(shell pkg-config --libs simgrid 2>/dev/null)
LIB_SRC  := $(OVERLAY_SRC) $(POLICIES_SRC) $(NODE_SRC) $(CONTROLLER_SRC)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB_OVERLAY    := $(BUILD)/liboverlay.a
LIB_POLICIES   := $(BUILD)/libpolicies.a
LIB_NODE       := $(BUILD)/libnode.a
LIB_CONTROLLER := $(BUILD)/libcontroller.a
# What each program links, in link order (a layer before those it uses).
CONTROLLER_LIBS := $(LIB_CONTROLLER) $(LIB_POLICIES) $(LIB_OVERLAY)
NODE_LIBS       := $(LIB_NODE) $(LIB_POLICIES) $(LIB_OVERLAY)
# Unit tests test every layer: all four.
TEST_LIBS       := $(LIB_CONTROLLER) $(LIB_NODE) $(LIB_POLICIES) $(LIB_OVERLAY)

BINS     := $(BUILD)/bin/treefarm $(BUILD)/bin/treefarm-node
ifeq ($(HAVE_SIMGRID),yes)
BINS     += $(BUILD)/bin/treefarm-sim
endif
TEST_SRC := $(wildcard tests/test_*.c)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

# What every unit test links besides its own file: tests/helpers.c and
# the virtual-clock driver tests/vclock.c (modules, not tests: their
# names do not match tests/test_*.c).
TEST_SUPPORT := $(BUILD)/obj/tests/helpers.o $(BUILD)/obj/tests/vclock.o

# Helper programs of the integration scripts (not unit tests).
HELPERS  := $(BUILD)/tests/hostile $(BUILD)/tests/burner_probe

# The benchmarks' reference programs (make bench builds them).
BENCH_BINS := $(BUILD)/bin/raw-dispatch $(BUILD)/bin/load-probe $(BUILD)/bin/spin

# Fuzz targets: clang, libFuzzer, ASan and UBSan, the overlay layer built
# again with coverage (the wire, the config and the tasks file are all
# there). One build for every pass (not under $(BUILD)).
FUZZ_CC     ?= clang
FUZZ_BUILD  := build/fuzz
FUZZ_FLAGS  := -std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
               -Wall -Wextra -Wno-missing-field-initializers $(WERROR)
FUZZ_OBJ    := $(OVERLAY_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_SRC    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS   := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_SECONDS ?= 60

ALL_OBJ  := $(LIB_OBJ) $(BUILD)/obj/node/main.o $(BUILD)/obj/controller/main.o \
            $(TEST_SRC:%.c=$(BUILD)/obj/%.o) $(FUZZ_OBJ) $(HELPERS:$(BUILD)/tests/%=$(BUILD)/obj/tests/%.o) \
            $(BUILD)/obj/bench/raw_dispatch.o $(BUILD)/obj/bench/load_probe.o $(BUILD)/obj/bench/spin.o \
            $(TEST_SUPPORT) $(patsubst %.cpp,$(BUILD)/obj/%.o,$(SIM_SRC:%.c=$(BUILD)/obj/%.o)) $(BUILD)/obj/sim/main.o

# Test objects are intermediates of the pattern rules; keep them (make
# would otherwise remove them after the run, and print so after the
# summary's closing line).
.SECONDARY: $(ALL_OBJ)

.PHONY: all deps check unit integration demo bench study fuzz install uninstall clean

all: $(BINS)

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@bash scripts/install-deps.sh
	@mkdir -p $(@D) && touch $@

# SimGrid installed since (its .pc file newer than this) counts too.
$(DEPS_MK): $(DEPS_STAMP) $(wildcard $(shell pkg-config --variable=pcfiledir simgrid 2>/dev/null)/simgrid.pc)
	@echo "HAVE_SIMGRID := $$(pkg-config --exists simgrid && echo yes)" > $@

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

# sim/s4u.cpp, the one C++ file (sim/s4u.h says why).
CXX      ?= c++
CXXFLAGS := $(filter-out -std=gnu11 -Wstrict-prototypes,$(CFLAGS)) -std=gnu++17
$(BUILD)/obj/%.o: %.cpp | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

$(LIB_OVERLAY): $(OVERLAY_SRC:%.c=$(BUILD)/obj/%.o)
$(LIB_POLICIES): $(POLICIES_SRC:%.c=$(BUILD)/obj/%.o)
$(LIB_NODE): $(NODE_SRC:%.c=$(BUILD)/obj/%.o)
$(LIB_CONTROLLER): $(CONTROLLER_SRC:%.c=$(BUILD)/obj/%.o)
$(LIB_SIM): $(patsubst %.cpp,$(BUILD)/obj/%.o,$(SIM_SRC:%.c=$(BUILD)/obj/%.o))
$(BUILD)/lib%.a:
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/bin/treefarm: $(BUILD)/obj/controller/main.o $(CONTROLLER_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/bin/treefarm-node: $(BUILD)/obj/node/main.o $(NODE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/bin/treefarm-sim: $(BUILD)/obj/sim/main.o $(LIB_SIM) $(TEST_LIBS)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS) -o $@ $^ $(SIM_LIBS) $(PKG_LIBS)

$(BUILD)/bin/raw-dispatch: $(BUILD)/obj/bench/raw_dispatch.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# The short CPU-bound command of bench-commands.sh: libc only.
$(BUILD)/bin/spin: $(BUILD)/obj/bench/spin.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^

# The background load's measurements use the node's load processes.
$(BUILD)/bin/load-probe: $(BUILD)/obj/bench/load_probe.o $(NODE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_SUPPORT) $(TEST_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(PKG_LIBS)

$(FUZZ_BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) -o $@ $^ $(PKG_LIBS)

fuzz: $(FUZZ_BINS)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh $(FUZZ_BINS)

check: $(BINS) $(TESTS) $(HELPERS) $(FUZZ_BINS)
	@BUILD=$(BUILD) FUZZ_BINS="$(FUZZ_BINS)" bash tests/run.sh $(TESTS)

unit: $(TESTS)
	@BUILD=$(BUILD) bash tests/run.sh --unit-only $(TESTS)

demo: $(BINS)
	@$(BUILD)/bin/treefarm run configs/fork7.json --out $(BUILD)/demo

bench: $(BINS) $(BENCH_BINS)
	@BUILD=$(BUILD) bash scripts/bench.sh

# The reference study (docs/study/README.md): the published grid on
# configs/fork7.json in emulation, from scratch; about half an hour.
study: $(BINS)
	@BUILD=$(BUILD) bash scripts/study.sh

install: $(BINS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/treefarm/configs
	install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 configs/*.json $(DESTDIR)$(PREFIX)/share/treefarm/configs/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/treefarm $(DESTDIR)$(PREFIX)/bin/treefarm-node \
	      $(DESTDIR)$(PREFIX)/bin/treefarm-sim
	rm -rf $(DESTDIR)$(PREFIX)/share/treefarm

clean:
	rm -rf build

-include $(ALL_OBJ:.o=.d)
