# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The browser test's driver (tests/flamegraph.bats): playwright-core from
# npm, which drives Debian's chromium; it downloads no browser of its own.

BROWSER_MODULES := $(OUTPUT)/cache/browser/node_modules/playwright-core/package.json

$(BROWSER_MODULES): tests/browser/package.json
	$(call msg,NPM,$(OUTPUT)/cache/browser)
	$(Q)mkdir -p $(OUTPUT)/cache/browser
	$(Q)cp $< $(OUTPUT)/cache/browser/package.json
	$(Q)cd $(OUTPUT)/cache/browser && npm install --no-audit --no-fund --loglevel=error > /dev/null
	$(Q)touch $@

check: $(BROWSER_MODULES)
