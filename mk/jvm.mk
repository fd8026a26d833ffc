# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The JVM's test workload (tests/jvm.bats), compiled by the JDK's javac.

$(OUTPUT)/tests/jvm/Cheese.class: tests/jvm/Cheese.java
	$(call msg,JAVAC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)javac -d $(dir $@) $<

check: $(OUTPUT)/tests/jvm/Cheese.class
