# attnbench — build, test and install.
#
#   make                 libattn.a, libattn.so and the test runner, in build/
#   make test            build and run every test
#   make test SAN=1      the same under AddressSanitizer + UBSan, in build/san/
#   make fixtures        regenerate tests/fixtures with PyTorch (Debian python3-torch)
#   make install PREFIX=/usr/local [DESTDIR=...]
#   make check-install   install into build/stage and build tests/example.c
#                        against it with pkg-config
#
# hwloc and PAPI are optional: found with pkg-config, disabled with
# HWLOC=0 / PAPI=0. The library itself depends on neither.

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

# Optional dependencies, used from the harness on (issue 3).
ifneq ($(HWLOC),0)
HAVE_HWLOC := $(shell $(PKG_CONFIG) --exists hwloc 2>/dev/null && echo 1)
endif
ifneq ($(PAPI),0)
HAVE_PAPI := $(shell $(PKG_CONFIG) --exists papi 2>/dev/null && echo 1)
endif

WARNFLAGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# Baseline ISA only: ISA-specific kernels get their flags per folder, so the
# default build runs on any machine of the architecture.
BASEFLAGS := -std=c11 -D_GNU_SOURCE -pthread -fPIC $(WARNFLAGS) $(OPTFLAGS) -Iinclude
LIBFLAGS  := $(BASEFLAGS) -fvisibility=hidden -DATTN_BUILDING_LIBRARY
LDLIBS    := -lm -pthread

LIB_SRCS := $(wildcard kernels/*.c) $(wildcard kernels/naive/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_SRCS := $(filter-out tests/example.c,$(wildcard tests/*.c))
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)

STATIC_LIB := $(BUILD)/libattn.a
SHARED_LIB := $(BUILD)/libattn.so
TEST_BIN   := $(BUILD)/tests/run_tests

.PHONY: all test fixtures install uninstall check-install clean config FORCE
all: $(STATIC_LIB) $(SHARED_LIB) $(TEST_BIN)

$(BUILD)/obj/kernels/%.o: kernels/%.c
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) -Ikernels $(CFLAGS) -MMD -MP -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libattn.so.$(SOVERSION) $(SANFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(TEST_BIN): $(TEST_OBJS) $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) $(LDFLAGS) $(TEST_OBJS) $(STATIC_LIB) -o $@ $(LDLIBS)

# allocator_may_return_null: the tests ask for absurd (non-overflowing) sizes
# and expect ATTN_ERR_NO_MEMORY, which ASan would otherwise turn into an abort.
test: all
	ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 $(TEST_BIN) tests/fixtures

fixtures:
	$(PYTHON) tests/gen_fixtures.py tests/fixtures

# Regenerated every time: it records PREFIX, which may change between calls.
$(BUILD)/attn.pc: FORCE
	@mkdir -p $(@D)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
	  'Name: attn' 'Description: attnbench attention and transformer encoder kernels' \
	  'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lattn' \
	  'Libs.private: -lm -pthread' > $@

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

config:
	@echo "CC=$(CC) BUILD=$(BUILD) VERSION=$(VERSION)"
	@echo "hwloc: $(if $(HAVE_HWLOC),yes,no)  PAPI: $(if $(HAVE_PAPI),yes,no)"

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d)
