# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Unit-test drivers for common/: small programs linked with libcommon.a.

UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,$(wildcard tests/unit/*.c))

$(OUTPUT)/tests/unit/%: tests/unit/%.c $(OUTPUT)/libcommon.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< $(OUTPUT)/libcommon.a $(LDLIBS) -o $@

check bench bench-doc: $(UNIT_BINS)

# The symbolizer's test workload: a PIE executable and the library it links.
$(OUTPUT)/tests/libsymlib.so: tests/symwork/symlib.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O1 -fPIC -shared $< -o $@

$(OUTPUT)/tests/symwork: tests/symwork/symwork.c $(OUTPUT)/tests/libsymlib.so | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O1 -fno-inline -fPIE -pie $< -L$(OUTPUT)/tests -lsymlib -Wl,-rpath,'$$ORIGIN' -o $@

check: $(OUTPUT)/tests/symwork

# The unwinder's workload and its library, built as distributions build:
# -O2, no frame pointers (tests/unwind.bats).
NOFP_CFLAGS := -g -O2 -fomit-frame-pointer -Wall

$(OUTPUT)/tests/libnofplib.so: tests/nofp/nofplib.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -fPIC -shared $< -o $@

# The same code under other names, to be loaded where libnofplib.so was.
$(OUTPUT)/tests/libswaplib.so: tests/nofp/nofplib.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -fPIC -shared -Dnofplib_leaf=swaplib_leaf \
		-Dnofplib_inner=swaplib_inner -Dnofplib_outer=swaplib_outer \
		-Dnofplib_tick=swaplib_tick $< -o $@

# The same with code that only adds unwind rows (1,557 in all), copied 2,000
# times to fill the unwinder's tables (unwind.bats); without -g, each copy small.
$(OUTPUT)/tests/libpadlib.so: tests/nofp/nofplib.c tests/nofp/padlib.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(filter-out -g,$(NOFP_CFLAGS)) -fPIC -shared $^ -o $@

check workloads: $(OUTPUT)/tests/libpadlib.so

# Linked into it, without call-frame information: code with frame pointers
# (fpcode.c), and code with neither (nocfi.c), as JIT code or a stripped
# .eh_frame would be. No -g either: it would bring .debug_frame.
NOFP_NOCFI := -O2 -Wall -fno-asynchronous-unwind-tables -fno-unwind-tables
NOFP_OBJS := $(OUTPUT)/obj/tests/nofp-fpcode.o $(OUTPUT)/obj/tests/nofp-nocfi.o

$(OUTPUT)/obj/tests/nofp-fpcode.o: tests/nofp/fpcode.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(NOFP_NOCFI) -fno-omit-frame-pointer -c $< -o $@

$(OUTPUT)/obj/tests/nofp-nocfi.o: tests/nofp/nocfi.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(NOFP_NOCFI) -fomit-frame-pointer -c $< -o $@

$(addprefix $(OUTPUT)/tests/,nofp nofp-dyn nofp-pac nofp-fp): tests/workloads/lifetime.h

ifeq ($(STATIC),1)
# The kernel matrix's guests have no shared libraries: the library's code goes in.
$(OUTPUT)/tests/nofp: tests/nofp/nofp.c tests/nofp/nofplib.c $(NOFP_OBJS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -pthread -static $(filter-out %.h,$^) -o $@

# And for its shared-library cell, nofp linked as usual (nofp-dyn), with
# what runs it beside it: libnofplib.so, the C library and the loader,
# which the check starts as a program (ld.so --library-path DIR nofp-dyn).
NOFP_LD_x86   := ld-linux-x86-64.so.2
NOFP_LD_arm64 := ld-linux-aarch64.so.1
NOFP_RUNTIME  := $(OUTPUT)/tests/$(NOFP_LD_$(ARCH)) $(OUTPUT)/tests/libc.so.6

$(OUTPUT)/tests/nofp-dyn: tests/nofp/nofp.c $(NOFP_OBJS) $(OUTPUT)/tests/libnofplib.so | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -pthread $< $(NOFP_OBJS) -L$(OUTPUT)/tests -lnofplib -Wl,-rpath,'$$ORIGIN' -o $@

$(NOFP_RUNTIME): | $(OUTPUT)/tests
	$(call msg,CP,$@)
	$(Q)cp -L "$$($(CC) -print-file-name=$(notdir $@))" $@

check workloads: $(OUTPUT)/tests/nofp-dyn $(NOFP_RUNTIME)

ifeq ($(ARCH),arm64)
# Its return addresses signed (pointer authentication), as most arm64
# distributions build: the arm64 guest's CPU (qemu's max) signs them.
$(OUTPUT)/tests/nofp-pac: tests/nofp/nofp.c tests/nofp/nofplib.c $(NOFP_OBJS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -mbranch-protection=standard -pthread -static $(filter-out %.h,$^) -o $@

check workloads: $(OUTPUT)/tests/nofp-pac
endif
else
$(OUTPUT)/tests/nofp: tests/nofp/nofp.c $(NOFP_OBJS) $(OUTPUT)/tests/libnofplib.so | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -pthread $< $(NOFP_OBJS) -L$(OUTPUT)/tests -lnofplib -Wl,-rpath,'$$ORIGIN' -o $@

check workloads: $(OUTPUT)/tests/libswaplib.so

# The same program with frame pointers as well as its CFI, for the
# benchmark's walk of one stack both ways (tests/bench/unwind).
$(OUTPUT)/tests/nofp-fp: tests/nofp/nofp.c $(NOFP_OBJS) $(OUTPUT)/tests/libnofplib.so | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -fno-omit-frame-pointer -pthread $< $(NOFP_OBJS) -L$(OUTPUT)/tests -lnofplib -Wl,-rpath,'$$ORIGIN' -o $@

bench bench-doc: $(OUTPUT)/tests/nofp-fp

# The library with its CFI only in its own .debug_frame, as code built
# without unwind tables but with -g has it: as is, and compressed.
NOFP_DFRAME := -O2 -fomit-frame-pointer -Wall -g -fno-asynchronous-unwind-tables -fno-unwind-tables

$(OUTPUT)/tests/libdframe.so: tests/nofp/nofplib.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_DFRAME) -fPIC -shared $< -o $@

$(OUTPUT)/tests/libdframez.so: tests/nofp/nofplib.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_DFRAME) -gz=zlib -fPIC -shared $< -o $@

# And with .debug_frame for nofplib.c's functions, .eh_frame for another
# object's: one binary with both, each describing its own code.
$(OUTPUT)/obj/tests/dmixed-lib.o: tests/nofp/nofplib.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(NOFP_DFRAME) -fPIC -c $< -o $@

$(OUTPUT)/obj/tests/dmixed-cfi.o: tests/nofp/withcfi.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -Wall -fPIC -c $< -o $@

$(OUTPUT)/tests/libdmixed.so: $(OUTPUT)/obj/tests/dmixed-lib.o $(OUTPUT)/obj/tests/dmixed-cfi.o | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -shared $^ -o $@

check workloads: $(OUTPUT)/tests/libdframe.so $(OUTPUT)/tests/libdframez.so $(OUTPUT)/tests/libdmixed.so
endif

check workloads: $(OUTPUT)/tests/nofp

# A process that says it is Ruby, and its library (tests/ruby.bats's planted
# case): the host's only.
ifneq ($(STATIC),1)
$(OUTPUT)/tests/libfakeruby.so: tests/fakeruby/libfakeruby.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -O2 -fPIC -shared $< -o $@

$(OUTPUT)/tests/fakeruby: tests/fakeruby/fakeruby.c $(OUTPUT)/tests/libfakeruby.so | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $< -L$(OUTPUT)/tests -lfakeruby -Wl,-rpath,'$$ORIGIN' -o $@

check workloads: $(OUTPUT)/tests/fakeruby
endif
