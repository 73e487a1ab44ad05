# attnbench — build, test and install.
#
#   make                 libattn.a, libattn.so and the test runner, in build/
#   make test            build and run every test
#   make test SAN=1      the same under AddressSanitizer + UBSan, in build/san/
#   make test-neon       cross-build for AArch64 and run the tests under qemu-aarch64
#   make test-tsan       the threaded tests under ThreadSanitizer (clang, libomp)
#   make test-valgrind   the unit tests under valgrind memcheck
#   make CROSS=aarch64-linux-gnu-   cross-build (into build/aarch64-linux-gnu)
#   make bench           the default benchmark suite; JSON into results/
#   make bench-anchors   the targets' shapes beside PyTorch (python3-torch), one table
#   make bench-decode    decoding (GB/s) and generation (tokens/s) beside PyTorch, one table
#   make tune            tune the default suite's buckets into the wisdom (10 minutes at most)
#   make tune-eval       the tuner's picks against an exhaustive search, in real time
#   make report          reports/out/index.html: figures of the results/ present
#   make gate [BASE=ref] the regression gate: this tree against BASE (HEAD~1)
#   make fuzz [FUZZ_SECONDS=N] the libFuzzer targets (clang), N seconds each
#   make fixtures        regenerate tests/fixtures with PyTorch (Debian python3-torch)
#   make install PREFIX=/usr/local [DESTDIR=...]
#   make check-install   install into build/stage and build tests/example.c
#                        against it with pkg-config
#   make examples        the programs of examples/, built the same way
#
# hwloc, PAPI, SQLite and libpq (the results history's two stores) are
# optional: found with pkg-config, disabled with HWLOC=0 / PAPI=0 / SQLITE=0
# / POSTGRES=0. The library itself
# depends on none of them. OpenBLAS, when pkg-config finds it (OPENBLAS=0
# turns it off), adds the `openblas` kernel, and oneDNN, when a test program
# compiles and links against it (ONEDNN=0 turns it off; Debian's libdnnl-dev
# ships no pkg-config file), the `onednn` kernel; the library then links them.

# Cross builds: `make CROSS=aarch64-linux-gnu-` uses that toolchain and
# builds into build/aarch64-linux-gnu (hwloc / PAPI only if a pkg-config for
# the target finds them).
ifneq ($(CROSS),)
CC         := $(CROSS)gcc
AR         := $(CROSS)ar
PKG_CONFIG := $(CROSS)pkg-config
BUILD      ?= build/$(patsubst %-,%,$(CROSS))
endif
CC         ?= cc
PKG_CONFIG ?= pkg-config
PYTHON     ?= /usr/bin/python3
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include

VERSION := $(shell sed -n 's/^\#define ATTN_VERSION_STRING "\(.*\)"/\1/p' include/attn.h)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))

ifeq ($(SAN),1)
BUILD    ?= build/san
OPTFLAGS ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
SANFLAGS := -fsanitize=address,undefined
else
BUILD    ?= build
OPTFLAGS ?= -O2 -g
SANFLAGS :=
endif

# Optional dependencies of the harness (never of the library).
ifneq ($(HWLOC),0)
HAVE_HWLOC := $(shell $(PKG_CONFIG) --exists hwloc 2>/dev/null && echo 1)
endif
ifneq ($(PAPI),0)
HAVE_PAPI := $(shell $(PKG_CONFIG) --exists papi 2>/dev/null && echo 1)
endif
ifneq ($(SQLITE),0)
HAVE_SQLITE := $(shell $(PKG_CONFIG) --exists sqlite3 2>/dev/null && echo 1)
endif
ifneq ($(POSTGRES),0)
HAVE_POSTGRES := $(shell $(PKG_CONFIG) --exists libpq 2>/dev/null && echo 1)
endif
HARNESS_DEFS :=
HARNESS_LIBS := -ldl
ifeq ($(HAVE_HWLOC),1)
HARNESS_DEFS += -DATTN_HAVE_HWLOC $(shell $(PKG_CONFIG) --cflags hwloc)
HARNESS_LIBS += $(shell $(PKG_CONFIG) --libs hwloc)
endif
ifeq ($(HAVE_PAPI),1)
HARNESS_DEFS += -DATTN_HAVE_PAPI $(shell $(PKG_CONFIG) --cflags papi)
HARNESS_LIBS += $(shell $(PKG_CONFIG) --libs papi)
endif
ifeq ($(HAVE_SQLITE),1)
HARNESS_DEFS += -DATTN_HAVE_SQLITE $(shell $(PKG_CONFIG) --cflags sqlite3)
HARNESS_LIBS += $(shell $(PKG_CONFIG) --libs sqlite3)
endif
ifeq ($(HAVE_POSTGRES),1)
HARNESS_DEFS += -DATTN_HAVE_POSTGRES $(shell $(PKG_CONFIG) --cflags libpq)
HARNESS_LIBS += $(shell $(PKG_CONFIG) --libs libpq)
endif

# The target architecture decides which ISA-specific sources are built.
ARCH := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
ifeq ($(ARCH),x86_64)
AVX2_FLAGS   := -mavx2 -mfma -mf16c
AVX512_FLAGS := -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma
AVX512_BF16_FLAGS := $(AVX512_FLAGS) -mavx512bf16
endif

WARNFLAGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# Baseline ISA only: ISA-specific kernels get their flags per folder, so the
# default build runs on any machine of the architecture.
BASEFLAGS := -std=c11 -D_GNU_SOURCE -pthread -fPIC $(WARNFLAGS) $(OPTFLAGS) -Iinclude
# Vectorizing the kernels' row loops (softmax exp, layernorm, epilogues):
# GCC's -O2 cost model ("very cheap") only vectorizes loops whose trip count
# is a known multiple of the vector width, so ask for the dynamic model; and
# -fno-trapping-math lets the branch-free selects of vmath.h become vector
# blends (we never enable FP traps). Neither reorders arithmetic, so results
# are unchanged. GCC-only flags: probed so that clang builds too.
VECFLAGS := $(shell $(CC) -fvect-cost-model=dynamic -Werror -E -x c /dev/null >/dev/null 2>&1 \
              && echo -fvect-cost-model=dynamic) -fno-trapping-math
# Kernels use OpenMP (libgomp) for their threads.
LIBFLAGS  := $(BASEFLAGS) $(VECFLAGS) -fopenmp -fvisibility=hidden -DATTN_BUILDING_LIBRARY
LDLIBS    := -fopenmp -lm -pthread

# Library-backed kernels (kernels/openblas, kernels/onednn): built when their library is found.
ifneq ($(OPENBLAS),0)
HAVE_OPENBLAS := $(shell $(PKG_CONFIG) --exists openblas 2>/dev/null && echo 1)
endif
LIB_DEPS :=
ifeq ($(HAVE_OPENBLAS),1)
LIBFLAGS += -DATTN_HAVE_OPENBLAS
OPENBLAS_CFLAGS := $(shell $(PKG_CONFIG) --cflags openblas)
LIB_DEPS += $(shell $(PKG_CONFIG) --libs openblas)
endif
ifneq ($(ONEDNN),0)
HAVE_ONEDNN := $(shell printf '\043include <dnnl.h>\nint main(void) { return dnnl_version() == 0; }\n' \
  | $(CC) -x c - -o /dev/null -ldnnl >/dev/null 2>&1 && echo 1)
endif
ifeq ($(HAVE_ONEDNN),1)
LIBFLAGS += -DATTN_HAVE_ONEDNN
LIB_DEPS += -ldnnl
endif
LDLIBS := $(LIB_DEPS) $(LDLIBS)

# Portable kernel folders; ISA folders are added below with their flags.
LIB_SRCS := $(wildcard kernels/*.c kernels/frame/*.c kernels/naive/*.c kernels/blocked/*.c \
              kernels/einsum/*.c kernels/simd/*.c model/*.c)
ifeq ($(ARCH),x86_64)
LIB_SRCS += $(wildcard kernels/avx2/*.c kernels/avx512/*.c kernels/avx512_bf16/*.c)
endif
ifeq ($(ARCH),aarch64)
LIB_SRCS += $(wildcard kernels/neon/*.c kernels/neon_bf16/*.c)
endif
ifeq ($(HAVE_OPENBLAS),1)
LIB_SRCS += $(wildcard kernels/openblas/*.c)
endif
ifeq ($(HAVE_ONEDNN),1)
LIB_SRCS += $(wildcard kernels/onednn/*.c)
endif
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
# The harness, a folder per concern (docs/architecture.md): cli/ (the commands),
# measure/ (timing, peaks, topology, suites, the tuner's search, the
# summary), store/ (result files, history, wisdom, the peaks' cache) and
# analysis/ (statistics, compare, steps); ops/ (the ops table: shapes, their
# work, workloads) below them all. Sources named *_avx2.c / *_avx512.c are
# built only for x86-64, with their flags.
HARNESS_DIRS := harness/ops harness/cli harness/measure harness/store harness/analysis
HARNESS_SRCS := $(filter-out harness/cli/main.c,$(wildcard $(addsuffix /*.c,$(HARNESS_DIRS))))
ifneq ($(ARCH),x86_64)
HARNESS_SRCS := $(filter-out %_avx2.c %_avx512.c,$(HARNESS_SRCS))
endif
HARNESS_OBJS := $(HARNESS_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_SRCS := $(filter-out tests/example.c,$(wildcard tests/*.c))
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)

STATIC_LIB  := $(BUILD)/libattn.a
SHARED_LIB  := $(BUILD)/libattn.so
HARNESS_LIB := $(BUILD)/libharness.a
CLI_BIN     := $(BUILD)/attnbench
TEST_BIN    := $(BUILD)/tests/run_tests

.PHONY: all test test-neon bench bench-anchors bench-decode tune tune-eval report gate fuzz fuzz-build test-tsan test-valgrind fixtures install uninstall check-install examples clean config FORCE
all: $(STATIC_LIB) $(SHARED_LIB) $(CLI_BIN) $(TEST_BIN)

$(BUILD)/obj/kernels/%.o: kernels/%.c
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
# Whole models (model/): the safetensors reader and the BERT loader, part of
# the library but not kernels (they see only attn.h and their own headers).
$(BUILD)/obj/model/%.o: model/%.c
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
# The wisdom's machine key names the build flags (a different build may tune
# differently).
$(BUILD)/obj/kernels/wisdom.o: LIBFLAGS += -DATTN_BUILD_OPTFLAGS='"$(strip $(OPTFLAGS) $(CFLAGS))"'
# ISA folders: their flags, and only theirs (docs/adding-a-kernel.md).
$(BUILD)/obj/kernels/avx2/%.o: kernels/avx2/%.c
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) $(AVX2_FLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/kernels/openblas/%.o: kernels/openblas/%.c
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) $(OPENBLAS_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/kernels/avx512/%.o: kernels/avx512/%.c
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) $(AVX512_FLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
# AArch64 BF16 (BFDOT): only this folder; the row runs where HWCAP2 says BF16.
$(BUILD)/obj/kernels/neon_bf16/%.o: kernels/neon_bf16/%.c
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) -march=armv8.2-a+bf16 $(CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/kernels/avx512_bf16/%.o: kernels/avx512_bf16/%.c
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) $(AVX512_BF16_FLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

HARNESS_FLAGS = $(BASEFLAGS) -Ikernels $(addprefix -I,$(HARNESS_DIRS)) -I$(BUILD)/gen $(HARNESS_DEFS)

# What the binary was built from, recorded in every benchmark's context. The
# header is rewritten only when its content changes, so a new commit rebuilds
# machine.o and nothing else.
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell \
  git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
BUILD_INFO := $(BUILD)/gen/build_info.h
$(BUILD_INFO): FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '/* generated by the Makefile; do not edit */' \
	  '#define ATTN_BUILD_COMMIT "$(GIT_COMMIT)"' \
	  '#define ATTN_BUILD_COMPILER "$(shell $(CC) --version | head -n 1)"' \
	  '#define ATTN_BUILD_FLAGS "$(strip $(OPTFLAGS) $(CFLAGS))"' \
	  '#define ATTN_BUILD_TYPE "$(if $(filter 1,$(SAN)),sanitize,release)"' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@
$(BUILD)/obj/harness/measure/machine.o: $(BUILD_INFO)
# Which library-backed rows kernels.def holds depends on what was found: the
# registry is rebuilt when that changes (a stale one would name a kernel the
# link no longer has, or leave out one it has).
LIB_CONFIG := $(BUILD)/gen/lib_config
$(LIB_CONFIG): FORCE
	@mkdir -p $(@D)
	@printf '%s\n' 'openblas=$(HAVE_OPENBLAS)' 'onednn=$(HAVE_ONEDNN)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@
$(BUILD)/obj/kernels/registry.o: $(LIB_CONFIG)
$(BUILD)/obj/harness/%.o: harness/%.c
	@mkdir -p $(@D)
	$(CC) $(HARNESS_FLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/harness/%_avx2.o: harness/%_avx2.c
	@mkdir -p $(@D)
	$(CC) $(HARNESS_FLAGS) $(AVX2_FLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/harness/%_avx512.o: harness/%_avx512.c
	@mkdir -p $(@D)
	$(CC) $(HARNESS_FLAGS) $(AVX512_FLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(HARNESS_FLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libattn.so.$(SOVERSION) $(SANFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# A second build of the library for the tests of run --lib (tests/cli.sh):
# the same objects linked in reverse order, so that its code lies
# elsewhere, as another build's would.
reverse = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
RELINKED_LIB := $(BUILD)/tests/libattn-relinked.so
$(RELINKED_LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) -shared $(SANFLAGS) $(LDFLAGS) $(call reverse,$^) -o $@ $(LDLIBS)

$(HARNESS_LIB): $(HARNESS_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(CLI_BIN): $(BUILD)/obj/harness/cli/main.o $(HARNESS_LIB) $(STATIC_LIB)
	$(CC) $(SANFLAGS) $(LDFLAGS) $^ -o $@ $(HARNESS_LIBS) $(LDLIBS)

$(TEST_BIN): $(TEST_OBJS) $(HARNESS_LIB) $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) $(LDFLAGS) $^ -o $@ $(HARNESS_LIBS) $(LDLIBS)

# allocator_may_return_null: the tests ask for absurd (non-overflowing) sizes
# and expect ATTN_ERR_NO_MEMORY, which ASan would otherwise turn into an abort.
# CEILINGS=0 skips tests/ceilings.sh (104 s on 2 cores): CI's second
# configuration runs the same kernels on the same peaks as its first.
# REPORT_PART=binary: tests/test_report.sh checks only what the build
# changes (the history database, with or without SQLite and libpq); the
# rest renders committed samples, the same in every configuration.
REPORT_PART ?= all
# TEST_JOBS: the unit test groups run in that many processes at once
# (run_tests --jobs), their OpenMP threads passive so that a group's idle
# threads do not spin on the core another group needs (active, two groups
# took 151 s on 2 cores where one at a time took 63).
TEST_JOBS ?= 2
RUN_TESTS_ENV := OMP_WAIT_POLICY=passive
test: all $(RELINKED_LIB)
	sh tests/layers.sh
	ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 $(RUN_TESTS_ENV) $(TEST_BIN) tests/fixtures --jobs $(TEST_JOBS)
	$(CLI_BIN) check --quiet
	sh tests/cli.sh $(CLI_BIN)
	$(PYTHON) tests/list_json.py $(CLI_BIN)
	sh tests/crash.sh $(CLI_BIN)
	PYTHON=$(PYTHON) sh tests/history.sh $(CLI_BIN)
	$(if $(filter 1,$(SAN)),@echo "ceilings: skipped under the sanitizers (their timings mean nothing)",$(if $(filter 0,$(CEILINGS)),@echo "ceilings: skipped (CEILINGS=0)",PYTHON=$(PYTHON) sh tests/ceilings.sh $(CLI_BIN)))
	$(if $(filter 1,$(SAN)),@echo "test_report.sh: skipped under the sanitizers (Python renders the report; attnbench's part in it, history add, is tests/history.sh's)",REPORT_PART=$(REPORT_PART) PYTHON=$(PYTHON) sh tests/test_report.sh $(CLI_BIN))
	@if $(PYTHON) -c 'import torch' 2>/dev/null; then $(PYTHON) reports/pytorch_anchor.py --self-test --attnbench $(CLI_BIN); \
	else echo "pytorch_anchor.py --self-test: skipped (no torch for $(PYTHON))"; fi
	PYTHON=$(PYTHON) sh tests/ort_anchor.sh $(CLI_BIN)
	$(MAKE) --no-print-directory examples
	sh tests/examples.sh $(BUILD)/examples

# AArch64 under user-mode qemu (Debian: gcc-aarch64-linux-gnu qemu-user):
# the unit tests and `attnbench check`, with `neon` as the auto kernel. The
# check runs the AArch64 kernels and blocked (whose loops the compiler
# vectorizes anew for AArch64); the einsum orders and the oracle, plain C,
# are the unit tests' there (under qemu all nine took 65 s of CPU, these
# three 41).
QEMU_AARCH64 ?= qemu-aarch64 -L /usr/aarch64-linux-gnu
NEON_BUILD := build/aarch64-linux-gnu
test-neon:
	$(MAKE) CROSS=aarch64-linux-gnu- BUILD=$(NEON_BUILD) all
	$(RUN_TESTS_ENV) $(QEMU_AARCH64) $(NEON_BUILD)/tests/run_tests tests/fixtures --jobs $(TEST_JOBS)
	$(QEMU_AARCH64) $(NEON_BUILD)/attnbench check --quiet --kernel neon,neon-bf16,blocked
	$(QEMU_AARCH64) $(NEON_BUILD)/attnbench info | grep -q '"auto" picks neon' \
	  || { echo 'test-neon: "auto" does not pick neon'; exit 1; }

# The main job: the default suite over every kernel this machine runs; the
# JSON goes to a new file under results/ (an earlier one is never replaced).
# BENCH_ARGS: more run options (CI: --max-time 0.25, to check the job and
# its JSON in a fraction of the time).
bench: all
	$(CLI_BIN) run --suite default --kernel all --json-dir results $(BENCH_ARGS)

# The tuner on the buckets of `make bench`, within 9 minutes of search (the
# checks and the writing fit in a tenth minute: make tune stays under 10).
tune: all
	$(CLI_BIN) tune --suite default --level measure --budget 540

# How close the tuner's pick comes to an exhaustive search of its
# neighbourhood, in real time on this machine (a benchmark, not a test: the
# docs/tuning.md quotes it). The wisdom goes to a scratch file.
tune-eval: all
	$(CLI_BIN) tune --threads 1 --level measure --evaluate --wisdom $(BUILD)/tune-eval.wisdom \
	  --shape 'op=sdpa,B=1,H=4,L=128,Dh=32,mask=causal;op=mha,B=1,L=128,D=256,H=4'

# attnbench's auto kernel beside the libraries a user would otherwise pick:
# its onednn and openblas kernels, PyTorch 1.13 (reports/pytorch_anchor.py)
# and ONNX Runtime (reports/ort_anchor.py), interleaved shape by shape, with
# the memory a call adds; then the side-by-side table with a speedup per
# peer (docs/performance.md). ANCHOR_SUITES and ANCHOR_THREADS choose, e.g.
#   make bench-anchors ANCHOR_SUITES="bert-base long decode" ANCHOR_THREADS=1,2
#   make bench-anchors ANCHOR_SUITES="op=bert,B=1,L=128,mask=padding"   (one shape)
ANCHOR_SUITES ?= anchors
ANCHOR_THREADS ?= 1
bench-anchors: all reports/ort_anchor/node_modules
	PYTHON=$(PYTHON) sh reports/bench_anchors.sh $(CLI_BIN) "$(ANCHOR_SUITES)" $(ANCHOR_THREADS) \
	  results/anchors

# ONNX Runtime for reports/ort_anchor.py: onnxruntime-node from the lock file
# (its .npmrc skips the postinstall, which would download CUDA providers).
# Without npm the anchor is left out (bench_anchors.sh says so).
reports/ort_anchor/node_modules: reports/ort_anchor/package-lock.json
	-command -v npm >/dev/null && npm ci --prefix reports/ort_anchor --no-audit --no-fund \
	  && touch $@

# Decoding beside PyTorch: the decode suite (one query against 1k-32k
# cached keys: GB/s against the measured read bandwidth) and the generate
# suite (a 6-layer decoder, prompt then token by token: tokens/s), the
# auto kernel and PyTorch's cached loop at 1 and 2 threads; one table.
bench-decode: all
	@mkdir -p results
	$(CLI_BIN) run --suite decode --kernel auto --threads 1,2 --json results/decode-attnbench.json
	$(CLI_BIN) run --suite generate --kernel auto --threads 1,2 --json results/generate-attnbench.json
	$(PYTHON) reports/pytorch_anchor.py --suite decode --threads 1,2 --json results/decode-pytorch.json
	$(PYTHON) reports/pytorch_anchor.py --suite generate --threads 1,2 --json results/generate-pytorch.json
	$(PYTHON) reports/anchor_table.py results/decode-attnbench.json results/generate-attnbench.json \
	  results/decode-pytorch.json results/generate-pytorch.json

# The report page from every results/*.json (and results/history.db, the
# wisdom), or from the files named in REPORT_INPUTS.
report:
	$(PYTHON) reports/report.py $(REPORT_INPUTS)

# The CI regression gate (tests/gate.sh): interleaved A/B timing of this
# tree's build against BASE's, and callgrind instruction counts.
BASE ?= HEAD~1
gate: $(CLI_BIN) $(SHARED_LIB)
	bash tests/gate.sh --base $(BASE) --new-bin $(CLI_BIN) $(GATE_FLAGS)

# ThreadSanitizer over the threaded tests (test_threads: every parallel
# kernel at 1-3 threads; test_concurrency: contexts used from several
# threads at once). Built with clang and its libomp: GCC's libgomp is not
# instrumented, so TSan would report its barriers as races; libomp with the
# Archer tool (OMP_TOOL_LIBRARIES) tells TSan what OpenMP synchronizes.
TSAN_BUILD   := build/tsan
ARCHER       ?= $(firstword $(wildcard /usr/lib/llvm-*/lib/libarcher.so))
test-tsan:
	$(MAKE) --no-print-directory CC=clang BUILD=$(TSAN_BUILD) SANFLAGS=-fsanitize=thread \
	  OPTFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=thread" $(TSAN_BUILD)/tests/run_tests
	OMP_TOOL_LIBRARIES=$(ARCHER) \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=tests/tsan.supp" \
	  $(TSAN_BUILD)/tests/run_tests tests/fixtures threads,concurrency

# Valgrind memcheck over the unit tests, for the kernels valgrind runs:
# under valgrind CPUID shows no AVX-512, so that kernel is skipped as not
# runnable; the stress and long groups are left out (long's L = 65536 cases
# alone would take most of an hour under valgrind), counters (its
# unprivileged child fails under valgrind) and topology (libhwloc 2.9's own
# memcpy of overlapping buffers, loading a synthetic topology, is reported);
# the rest runs whole (~7 minutes; explain, packed, kvtypes and bf16 took 2
# of them, 2026-11-28).
# Definite leaks fail; libgomp's pooled threads keep their TLS ("possibly
# lost", in glibc's pthread_create), which is not ours to free.
VG_GROUPS := api,errors,golden,fixtures,properties,harness,vmath,threads,einsum,params,wisdom,tune,compare,history,concurrency,model,explain,packed,kvtypes,bf16
test-valgrind: $(TEST_BIN)
	valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	  --show-leak-kinds=definite \
	  --quiet $(TEST_BIN) tests/fixtures $(VG_GROUPS)

# libFuzzer targets (fuzz/), built with Debian's clang, ASan and UBSan
# into build/fuzz; `make fuzz FUZZ_SECONDS=N` runs each for N seconds from
# its committed seed corpus (fuzz/run.sh prints executions and coverage),
# then fuzz_report.py mutates the report's sample inputs as long.
FUZZ_BUILD   := build/fuzz
FUZZ_SECONDS ?= 30
FUZZ_TARGETS := api files cli model
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
fuzz-build:
	$(MAKE) --no-print-directory CC=clang BUILD=$(FUZZ_BUILD) SANFLAGS="$(FUZZ_SAN)" \
	  OPTFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SAN)" \
	  $(FUZZ_BUILD)/libattn.a $(FUZZ_BUILD)/libharness.a
	for t in $(FUZZ_TARGETS); do \
	  clang $(BASEFLAGS) -O1 -g -fsanitize=fuzzer $(FUZZ_SAN) -Ikernels $(addprefix -I,$(HARNESS_DIRS)) \
	    -I$(FUZZ_BUILD)/gen $(HARNESS_DEFS) fuzz/fuzz_$$t.c $(FUZZ_BUILD)/libharness.a \
	    $(FUZZ_BUILD)/libattn.a -o $(FUZZ_BUILD)/fuzz_$$t $(HARNESS_LIBS) $(LDLIBS) || exit 1; \
	done
fuzz: fuzz-build
	sh fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
	$(PYTHON) fuzz/fuzz_report.py --seconds $(FUZZ_SECONDS)

fixtures:
	$(PYTHON) tests/gen_fixtures.py tests/fixtures

# Regenerated every time: it records PREFIX, which may change between calls.
$(BUILD)/attn.pc: FORCE
	@mkdir -p $(@D)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
	  'Name: attn' 'Description: attnbench attention and transformer encoder kernels' \
	  'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lattn' \
	  'Libs.private: $(strip $(LIB_DEPS) -fopenmp -lm -pthread)' > $@

install: $(STATIC_LIB) $(SHARED_LIB) $(BUILD)/attn.pc
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 include/attn.h $(DESTDIR)$(INCLUDEDIR)/attn.h
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/libattn.a
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/libattn.so.$(VERSION)
	ln -sf libattn.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libattn.so.$(SOVERSION)
	ln -sf libattn.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libattn.so
	install -m 644 $(BUILD)/attn.pc $(DESTDIR)$(LIBDIR)/pkgconfig/attn.pc

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/attn.h $(DESTDIR)$(LIBDIR)/libattn.a \
	  $(DESTDIR)$(LIBDIR)/libattn.so $(DESTDIR)$(LIBDIR)/libattn.so.$(SOVERSION) \
	  $(DESTDIR)$(LIBDIR)/libattn.so.$(VERSION) $(DESTDIR)$(LIBDIR)/pkgconfig/attn.pc

# Installs into a staging prefix and builds the README's example against the
# installed header and shared library through pkg-config, then runs it.
STAGE := $(abspath $(BUILD)/stage)
check-install:
	rm -rf $(STAGE)
	$(MAKE) --no-print-directory install PREFIX=$(STAGE) BUILD=$(BUILD)
	$(CC) -std=c11 $(WARNFLAGS) -Werror tests/example.c -o $(BUILD)/example \
	  $$(PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig $(PKG_CONFIG) --cflags --libs attn) \
	  -Wl,-rpath,$(STAGE)/lib $(SANFLAGS)
	$(BUILD)/example

# examples/: each program built against the library installed into a
# staging prefix, through pkg-config, as a user builds it (after
# `make install`: cc prog.c $$(pkg-config --cflags --libs attn)).
examples:
	rm -rf $(STAGE)
	$(MAKE) --no-print-directory install PREFIX=$(STAGE) BUILD=$(BUILD)
	@mkdir -p $(BUILD)/examples
	for src in examples/*.c; do \
	  $(CC) -std=c11 $(WARNFLAGS) -Werror $$src -o $(BUILD)/examples/$$(basename $$src .c) \
	    $$(PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig $(PKG_CONFIG) --cflags --libs attn) -lm \
	    -Wl,-rpath,$(STAGE)/lib $(SANFLAGS) || exit 1; \
	done

config:
	@echo "CC=$(CC) BUILD=$(BUILD) VERSION=$(VERSION)"
	@echo "hwloc: $(if $(HAVE_HWLOC),yes,no)  PAPI: $(if $(HAVE_PAPI),yes,no)  SQLite: $(if $(HAVE_SQLITE),yes,no)  PostgreSQL: $(if $(HAVE_POSTGRES),yes,no)  OpenBLAS: $(if $(HAVE_OPENBLAS),yes,no)  oneDNN: $(if $(HAVE_ONEDNN),yes,no)"

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(HARNESS_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(BUILD)/obj/harness/cli/main.d
