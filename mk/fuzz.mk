# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make fuzz FUZZ_SECONDS=N`: libFuzzer, with ASan and UBSan, on the symbolizer's parsers.

FUZZ_SECONDS ?= 60
FUZZ_SRCS := tests/fuzz/fuzz_syms.c $(COMMON_SRCS)

$(OUTPUT)/fuzz/fuzz_syms: $(FUZZ_SRCS) $(wildcard common/*.h)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-D_GNU_SOURCE -DBPFSCOPE_VERSION='"fuzz"' -I common -I bpf $(FUZZ_SRCS) -lbpf -ldw -lelf -lz -llzma -lcapstone -liberty -lmicrohttpd -ldl -o $@

.PHONY: fuzz
fuzz: $(OUTPUT)/fuzz/fuzz_syms
	@scripts/deps.sh check fuzz || scripts/deps.sh install fuzz
	@mkdir -p $(OUTPUT)/fuzz/corpus
	@cp -n tests/fuzz/corpus/* $(OUTPUT)/fuzz/corpus/ 2>/dev/null || true
	$(OUTPUT)/fuzz/fuzz_syms -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix=$(OUTPUT)/fuzz/ \
		-print_final_stats=1 $(OUTPUT)/fuzz/corpus
