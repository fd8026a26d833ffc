# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Builds the bpfscope tools, their tests and man pages; see README.md.

comma := ,

# The architecture built for (the kernel's names): this machine's, or
# ARCH=arm64 to cross-build on an x86 machine, with Debian's cross compiler
# and bookworm's libraries for it unpacked into a sysroot (scripts/sysroot).
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH      := $(HOST_ARCH)
GNU_ARCH_x86   := x86_64-linux-gnu
GNU_ARCH_arm64 := aarch64-linux-gnu
GNU_ARCH  := $(GNU_ARCH_$(ARCH))
ifeq ($(GNU_ARCH),)
$(error ARCH=$(ARCH): the tools build for x86 and arm64)
endif
CROSS     := $(if $(filter $(HOST_ARCH),$(ARCH)),,1)

OUTPUT    := build$(if $(CROSS),/$(ARCH))
# make check SANITIZE=1: everything again under ASan and UBSan, beside the
# normal build (not static: the sanitizers' runtimes are shared libraries).
SANITIZING := $(if $(filter 1,$(STATIC)),,$(filter 1,$(SANITIZE)))
ifeq ($(SANITIZING),1)
OUTPUT    := build/san
endif
CLANG     ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL   ?= bpftool
ifeq ($(origin CC),default)
CC        := $(if $(CROSS),$(GNU_ARCH)-)gcc
endif
PREFIX    ?= /usr/local
DESTDIR   ?=
VERSION   := $(shell scripts/version)

TOOLS     := $(sort $(patsubst tools/%.c,%,$(wildcard tools/*.c)))
BINS      := $(addprefix $(OUTPUT)/bin/,$(TOOLS))
COMMON_SRCS := $(wildcard common/*.c common/*/*.c)
COMMON_OBJS := $(patsubst common/%.c,$(OUTPUT)/obj/common/%.o,$(COMMON_SRCS))
COMMON_HDRS := $(wildcard common/*.h common/*/*.h)
BPF_HDRS  := $(wildcard bpf/*.h bpf/*/*.h)

CFLAGS    ?= -g -O2
CFLAGS    += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-std=gnu11 -D_GNU_SOURCE -DBPFSCOPE_VERSION='"$(VERSION)"' \
	-I common -I bpf -I $(OUTPUT)/skel
# The BPF side is the same bytecode on every architecture but for its view
# of the kernel's types (vmlinux/ARCH/vmlinux.h) and of registers.
BPF_CFLAGS := -g -O2 -Wall -Wno-unused-function -target bpf -D__TARGET_ARCH_$(ARCH) \
	-I vmlinux/$(ARCH) -I bpf $(addprefix -I ,$(wildcard /usr/include/$(GNU_ARCH))) \
	$(BPF_EXTRA_CFLAGS)
LDLIBS    := -lbpf -ldw -lelf -lz -llzma -liberty

ifneq ($(CROSS),)
SYSROOT   ?= build/cache/sysroot-$(ARCH)
SYSROOT_DONE := $(SYSROOT)/.done
SYSROOT_LIBS := $(SYSROOT)/usr/lib/$(GNU_ARCH) $(SYSROOT)/lib/$(GNU_ARCH)
CFLAGS    += -isystem $(SYSROOT)/usr/include -isystem $(SYSROOT)/usr/include/$(GNU_ARCH)
LDFLAGS   += $(addprefix -L,$(SYSROOT_LIBS)) $(addprefix -Wl$(comma)-rpath-link$(comma),$(SYSROOT_LIBS))
endif

ifeq ($(SANITIZING),1)
CFLAGS    += -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LDFLAGS   += -fsanitize=address,undefined
endif

ifeq ($(STATIC),1)
LDFLAGS   += -static
WORKLOAD_LDFLAGS := -static
LDLIBS    += -lcapstone -lpthread
CFLAGS    += -DBPFSCOPE_STATIC
DEPS_GROUPS := build $(if $(CROSS),cross,static)
else
# libdebuginfod, capstone and libmicrohttpd are loaded at run time, when
# --debuginfod, a disassembly or --prometheus first needs them (common/lazylib.c).
LDLIBS    += -ldl
DEPS_GROUPS := build $(if $(CROSS),cross)
endif

# --prometheus serves with libmicrohttpd: Debian's, or for static and cross
# builds its source built without TLS (scripts/microhttpd: GnuTLS does not
# link statically).
ifneq ($(filter 1,$(STATIC))$(CROSS),)
MHD_DIR   := build/cache/microhttpd-$(ARCH)
MHD_LIB   := $(MHD_DIR)/lib/libmicrohttpd.a
CFLAGS    += -isystem $(MHD_DIR)/include -DBPFSCOPE_MHD_LINKED
LDLIBS    := $(MHD_LIB) $(LDLIBS)
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all deps deps-check check check-stress check-vm vm-deps vm-fetch vm-prep demo install uninstall clean vmlinux bench bench-doc man-lint workloads deb dist
.DELETE_ON_ERROR:
.SECONDARY:

all: deps-check $(BINS)

deps:
	@scripts/deps.sh install build static test
	@# Debian 12's Go (1.19) has one of the pclntab layouts tests/go.bats reads: the newest too.
	@tests/go/fetch 1.24 $(OUTPUT)/cache/go > /dev/null
	@# The CPythons of other Debian releases tests/python.bats runs chrooted.
	@for v in 3.9 3.13 3.14; do tests/python/fetch $$v $(OUTPUT)/cache/python/$$v > /dev/null || exit 1; done
	@# The Node.js releases tests/node.bats runs chrooted (V8 in Debian's libnode.so).
	@for v in 18 20 24; do tests/node/fetch $$v $(OUTPUT)/cache/node/$$v > /dev/null || exit 1; done
	@# Debian 13's JVM (openjdk-21) tests/jvm.bats runs chrooted.
	@tests/jvm/fetch $(OUTPUT)/cache/jvm/21 > /dev/null
	@# Debian 13's PHP (8.4) tests/php.bats runs chrooted.
	@tests/php/fetch $(OUTPUT)/cache/php/8.4 > /dev/null
	@# Debian 13's Perl (5.40) tests/perl.bats runs chrooted.
	@tests/perl/fetch $(OUTPUT)/cache/perl/5.40 > /dev/null
	@# Debian 13's Ruby (3.3, its library stripped) tests/ruby.bats runs chrooted.
	@tests/ruby/fetch $(OUTPUT)/cache/ruby/3.3 > /dev/null

deps-check:
	@scripts/deps.sh check $(DEPS_GROUPS)

$(OUTPUT)/obj/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/obj/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUTPUT)/skel/%.skel.h: $(OUTPUT)/obj/bpf/%.bpf.o | $(OUTPUT)/skel
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# Tools whose BPF side is built a second time for kernels before 5.17
# (BPFSCOPE_LEGACY: no bpf_loop and other callbacks, no task storage or BTF
# task pointers in tracing programs, as Linux 5.10 has): the same maps,
# programs and globals (scripts/skel-compat checks), other code. The tool
# opens its skeleton with those bytes where the kernel needs them.
LEGACY_TOOLS := profile offcputime offwaketime readdirlat funclatency

$(OUTPUT)/obj/bpf/%.legacy.bpf.o: bpf/%.bpf.c $(BPF_HDRS) vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/obj/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DBPFSCOPE_LEGACY -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@
	$(Q)scripts/legacy-check $@

# Only the bytes are kept: TOOL_legacy_bpf__elf_bytes().
$(OUTPUT)/skel/%.legacy.h: $(OUTPUT)/obj/bpf/%.legacy.bpf.o $(OUTPUT)/skel/%.skel.h | $(OUTPUT)/skel
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_legacy_bpf > $@.skel
	$(Q)scripts/skel-compat $* $(OUTPUT)/skel/$*.skel.h $@.skel
	$(Q){ echo '/* $*: its BPF object for kernels before 5.17, from bpftool gen skeleton. */'; \
	     sed -n '/^static inline const void \*$*_legacy_bpf__elf_bytes(size_t \*sz)$$/,/^}$$/p' $@.skel; \
	   } > $@
	$(Q)rm -f $@.skel

$(foreach t,$(LEGACY_TOOLS),$(eval $(OUTPUT)/obj/tools/$(t).o: $(OUTPUT)/skel/$(t).legacy.h))

$(OUTPUT)/obj/common/%.o: common/%.c $(COMMON_HDRS) $(BPF_HDRS) | $(OUTPUT)/obj/common $(SYSROOT_DONE) $(MHD_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# The names of the target's system calls, from its own headers: SYSCALL(read) ...
$(OUTPUT)/skel/syscall_names.h: | $(OUTPUT)/skel $(SYSROOT_DONE)
	$(call msg,GEN,$@)
	$(Q)echo '#include <asm/unistd.h>' | $(CC) $(CFLAGS) -dM -E -x c - | \
		sed -n 's/^#define __NR_\([a-z0-9_]*\) .*/SYSCALL(\1)/p' | \
		grep -v '^SYSCALL(\(syscalls\|arch_specific_syscall\))$$' | sort > $@

$(OUTPUT)/obj/common/syscalls.o: $(OUTPUT)/skel/syscall_names.h

# The one BPF program of the library: the kernel names its addresses (common/klookup.c).
$(OUTPUT)/obj/common/klookup.o: $(OUTPUT)/skel/ksym.skel.h

# -V's version is compiled into cli.o: built again when it changes (a
# commit, a tree made dirty), so every tool and package says what it is.
$(OUTPUT)/obj/common/cli.o: $(OUTPUT)/version
$(OUTPUT)/version: FORCE
	@mkdir -p $(@D)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
.PHONY: FORCE
FORCE:

$(OUTPUT)/libcommon.a: $(COMMON_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUTPUT)/obj/tools/%.o: tools/%.c $(OUTPUT)/skel/%.skel.h $(COMMON_HDRS) $(BPF_HDRS) | $(OUTPUT)/obj/tools $(SYSROOT_DONE)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/bin/%: $(OUTPUT)/obj/tools/%.o $(OUTPUT)/libcommon.a | $(OUTPUT)/bin
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/obj/bpf $(OUTPUT)/skel $(OUTPUT)/obj/common $(OUTPUT)/obj/tools $(OUTPUT)/bin:
	$(Q)mkdir -p $@

ifneq ($(MHD_LIB),)
$(MHD_LIB):
	$(call msg,MHD,$(MHD_DIR))
	$(Q)scripts/microhttpd $(CC) $(MHD_DIR)
endif

ifneq ($(CROSS),)
$(SYSROOT_DONE): scripts/sysroot
	$(call msg,SYSROOT,$(SYSROOT))
	$(Q)scripts/sysroot $(ARCH) $(SYSROOT)
endif

# Test workloads: small C programs the bats suites start and trace.
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/tests/%,$(wildcard tests/workloads/*.c))
WORKLOAD_CFLAGS := -g -O1 -fno-omit-frame-pointer -fno-inline -Wall -pthread

$(OUTPUT)/tests/%: tests/workloads/%.c $(wildcard tests/workloads/*.h) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $(WORKLOAD_LDFLAGS) $< -o $@ -lpthread

$(OUTPUT)/tests:
	$(Q)mkdir -p $@

workloads: $(WORKLOADS)

check: deps all $(WORKLOADS)
	@BPFSCOPE_BUILD=$(abspath $(OUTPUT)) LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
		tests/run-bats

# Chosen bats files, RUNS times each (3), beside a CPU and I/O load like the
# kernel matrix's preparation and a version manager's python3 first in PATH:
# make check-stress FILES="tests/hostile.bats tests/unwind.bats" [FILTER=regex]
RUNS ?= 3
check-stress: deps all $(WORKLOADS)
	@[ -n "$(FILES)" ] || { echo 'check-stress: say which bats files: FILES="tests/X.bats ..."' >&2; exit 2; }
	@BPFSCOPE_BUILD=$(abspath $(OUTPUT)) LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
		tests/stress/run -n $(RUNS) $(if $(FILTER),-f '$(FILTER)') $(FILES)

# The kernel matrix (tests/vm/run): static tools checked on this kernel and
# in qemu on Debian's 5.10, 6.1 and 6.12 cloud kernels, and arm64's 6.12.
# The arm64 guest's tools and workloads are cross-built, Go's too.
# vm-fetch downloads what it needs (packages, the arm64 sysroot, the
# kernels), which CI does while make check runs; vm-prep builds the rest.
# The static build takes a lock that tests/project.bats, which builds the
# same tree, takes too.
VM_ARM64 := $(findstring arm64,$(if $(VM_KERNELS),$(VM_KERNELS),arm64))
vm-deps:
	@scripts/deps.sh install build static vm $(if $(VM_ARM64),cross)

vm-fetch: vm-deps
ifneq ($(VM_ARM64),)
	@scripts/sysroot arm64 $(OUTPUT)/cache/sysroot-arm64
endif
	@tests/vm/run fetch

vm-prep: vm-fetch
	@mkdir -p $(OUTPUT)
	@flock $(OUTPUT)/.static.lock $(MAKE) --no-print-directory STATIC=1 OUTPUT=$(OUTPUT)/static all workloads
	@# cgocheese too (CGO=1), dynamic: the guests run it by the loader beside the workloads.
	@CGO=1 tests/go/build $(OUTPUT)/static/tests/go "$$(go env GOROOT)" \
		"$$(tests/go/fetch 1.24 $(OUTPUT)/cache/go)" > /dev/null
ifneq ($(VM_ARM64),)
	@$(MAKE) --no-print-directory STATIC=1 ARCH=arm64 OUTPUT=$(OUTPUT)/static-arm64 all workloads
	@CGO=1 CC=$(GNU_ARCH_arm64)-gcc GOARCH=arm64 tests/go/build $(OUTPUT)/static-arm64/tests/go \
		"$$(go env GOROOT)" \
		"$$(tests/go/fetch 1.24 $(OUTPUT)/cache/go)" > /dev/null
endif

check-vm: vm-prep
	@tests/vm/run

# Only what the build needs: the test suite's packages (chromium, Go) can wait.
demo:
	@scripts/deps.sh install build
	@$(MAKE) --no-print-directory all workloads
	@scripts/demo.sh

# Figures, not pass/fail: every tests/bench/TOOL script, or BENCH="runqlat ...".
BENCH ?= $(TOOLS)
bench: all workloads
	@for t in $(BENCH); do [ -x tests/bench/$$t ] && tests/bench/$$t; echo; done

# docs/performance.md, written from what the benchmarks print (BENCH="..." for some sections).
bench-doc: all workloads
	@$(if $(filter command line,$(origin BENCH)),BENCH="$(BENCH)") scripts/bench-doc

man-lint:
	@mandoc -Tlint -W warning man/man8/*.8

# What install puts down, and uninstall takes away: the tools, their pages and
# their bash completion (one script, under each tool's name, where
# bash-completion looks for a command's completion when it is first used).
INSTALL_DIRS := sbin share/man/man8 share/bash-completion/completions
INSTALLED := $(addprefix sbin/,$(TOOLS)) $(addprefix share/man/man8/,$(TOOLS:=.8)) \
	$(addprefix share/bash-completion/completions/,$(TOOLS))

install: all
	install -d $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALL_DIRS))
	install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/sbin/
	install -m 0644 $(wildcard man/man8/*.8) $(DESTDIR)$(PREFIX)/share/man/man8/
	for t in $(TOOLS); do \
		install -m 0644 completion/bpfscope.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$t || exit 1; \
	done

# Into a DESTDIR, the directories install made go too, up to the DESTDIR.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))
	@if [ -n "$(DESTDIR)" ]; then \
		for d in $(INSTALL_DIRS); do \
			p=$(DESTDIR)$(PREFIX)/$$d; \
			while [ "$$p" != "$(patsubst %/,%,$(DESTDIR))" ] && rmdir "$$p" 2> /dev/null; do \
				p=$${p%/*}; \
			done; \
		done; \
	fi

# A Debian package of the dynamic tools, by Debian's own tools, into
# $(OUTPUT)/deb/: bpfscope_VERSION_ARCH.deb, checked by lintian. Its version
# is what -V prints (scripts/version); debian/changelog says it, written here.
deb:
	@scripts/deps.sh install build deb
	@mkdir -p $(OUTPUT)/deb
	@scripts/debian-changelog $(VERSION) > debian/changelog
	@dpkg-buildpackage -b -uc -us > $(OUTPUT)/deb/build.log 2>&1 || \
		{ tail -n 30 $(OUTPUT)/deb/build.log; exit 1; }
	@mv ../bpfscope_$(VERSION)_*.deb ../bpfscope-dbgsym_$(VERSION)_*.deb $(OUTPUT)/deb/ 2> /dev/null; \
		rm -f ../bpfscope_$(VERSION)_*.buildinfo ../bpfscope_$(VERSION)_*.changes
	@lintian --allow-root --fail-on warning,error $(OUTPUT)/deb/bpfscope_$(VERSION)_*.deb
	@ls $(OUTPUT)/deb/bpfscope_$(VERSION)_*.deb

# Release files in $(OUTPUT)/dist: the source tarball (git archive), static
# tools for x86-64 and arm64, and their SHA256SUMS.
dist:
	@mkdir -p $(OUTPUT)/dist
	@git archive --prefix=bpfscope-$(VERSION)/ -o $(OUTPUT)/dist/bpfscope-$(VERSION).tar.gz HEAD
	@$(MAKE) --no-print-directory STATIC=1 OUTPUT=$(OUTPUT)/static all
	@$(MAKE) --no-print-directory STATIC=1 ARCH=arm64 OUTPUT=$(OUTPUT)/static-arm64 all
	@for a in x86_64:static arm64:static-arm64; do \
		tar -C $(OUTPUT)/$${a#*:} -czf $(OUTPUT)/dist/bpfscope-$(VERSION)-static-$${a%%:*}.tar.gz \
			--transform "s,^bin,bpfscope-$(VERSION)-$${a%%:*}," bin || exit 1; \
	done
	@cd $(OUTPUT)/dist && rm -f SHA256SUMS && sha256sum bpfscope-$(VERSION)* > SHA256SUMS && cat SHA256SUMS

# The checked-in vmlinux/ARCH/vmlinux.h is what builds use (CO-RE adapts it
# to every kernel); this regenerates it from the running kernel's BTF, or for
# another architecture from its Debian kernel's (scripts/vmlinux-h).
vmlinux:
ifeq ($(CROSS),)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h
else
	scripts/vmlinux-h $(ARCH) vmlinux/$(ARCH)/vmlinux.h
endif

clean:
	rm -rf $(OUTPUT)

-include $(wildcard mk/*.mk)
