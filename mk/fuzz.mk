# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make fuzz FUZZ_SECONDS=N`: libFuzzer, with ASan and UBSan, on the symbolizer's parsers;
# FUZZ_TARGET=N for parser N alone (tests/fuzz/fuzz_syms.c numbers them), each
# with its own corpus directory; `make fuzz-each` runs every parser in turn,
# FUZZ_JOBS at once.

FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_PARSERS := 0 1 2 3 4 5 6 7 8 9 10 11
FUZZ_SRCS := tests/fuzz/fuzz_syms.c $(COMMON_SRCS)

$(OUTPUT)/fuzz/fuzz_syms: $(FUZZ_SRCS) $(COMMON_HDRS) $(OUTPUT)/skel/syscall_names.h \
		$(OUTPUT)/skel/ksym.skel.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-D_GNU_SOURCE -DBPFSCOPE_VERSION='"fuzz"' -I common -I bpf -I $(OUTPUT)/skel $(FUZZ_SRCS) -lbpf -ldw -lelf -lz -llzma -lcapstone -liberty -lmicrohttpd -ldl -o $@

FUZZ_CORPUS = $(OUTPUT)/fuzz/corpus$(if $(FUZZ_TARGET),-$(FUZZ_TARGET))

.PHONY: fuzz fuzz-each
fuzz: $(OUTPUT)/fuzz/fuzz_syms
	@scripts/deps.sh check fuzz || scripts/deps.sh install fuzz
	@mkdir -p $(FUZZ_CORPUS)
	@cp -n tests/fuzz/corpus/* $(FUZZ_CORPUS)/ 2>/dev/null || true
	FUZZ_TARGET=$(FUZZ_TARGET) $(OUTPUT)/fuzz/fuzz_syms -max_total_time=$(FUZZ_SECONDS) \
		-timeout=10 -rss_limit_mb=2048 -artifact_prefix=$(OUTPUT)/fuzz/$(if $(FUZZ_TARGET),parser-$(FUZZ_TARGET)-) \
		-print_final_stats=1 $(FUZZ_CORPUS)

# One log per parser, build/fuzz/parser-N.log; fails if any parser found something.
fuzz-each: $(OUTPUT)/fuzz/fuzz_syms
	@printf '%s\n' $(FUZZ_PARSERS) | xargs -P $(FUZZ_JOBS) -I{} sh -c \
		'$(MAKE) --no-print-directory fuzz FUZZ_TARGET={} > $(OUTPUT)/fuzz/parser-{}.log 2>&1 && \
		 echo "parser {}: no finding in $$(sed -n "s/^stat::number_of_executed_units: *//p" $(OUTPUT)/fuzz/parser-{}.log) inputs" || \
		 { echo "parser {}: FINDING, $(OUTPUT)/fuzz/parser-{}.log"; exit 1; }'
