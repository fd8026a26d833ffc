# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The JVM's test workload (tests/jvm.bats), compiled by the JDK's javac.

$(OUTPUT)/tests/jvm/Cheese.class: tests/jvm/Cheese.java
	$(call msg,JAVAC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)javac -d $(dir $@) $<

check: $(OUTPUT)/tests/jvm/Cheese.class

# The same as a jar that runs itself: `java -jar cheese.jar short`.
$(OUTPUT)/tests/jvm/cheese.jar: $(OUTPUT)/tests/jvm/Cheese.class
	$(call msg,JAR,$@)
	$(Q)cd $(dir $@) && jar --create --file cheese.jar --main-class Cheese Cheese*.class

check: $(OUTPUT)/tests/jvm/cheese.jar
