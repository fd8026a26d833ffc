// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The escapers (common/escape.c, json.c) through tests/common.bats: each
 * flavour of a name given as an argument, and escape__format cut to a size.
 * usage: escapetest FLAVOUR STRING      text, folded, spaced, xml, prom, json
 *        escapetest cut SIZE STRING     escape__format (text) into SIZE bytes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "json.h"

int main(int argc, char **argv)
{
	static const struct { const char *name; enum escape_flavour fl; } flavours[] = {
		{ "text", ESCAPE_TEXT }, { "folded", ESCAPE_FOLDED },
		{ "spaced", ESCAPE_FOLDED_SPACED }, { "xml", ESCAPE_XML }, { "prom", ESCAPE_PROM },
	};

	if (argc == 4 && !strcmp(argv[1], "cut")) {
		size_t size = strtoul(argv[2], NULL, 10);
		char *buf = malloc(size);
		size_t need = escape__format(buf, size, argv[3], ESCAPE_TEXT);

		printf("%s\n%zu\n", buf, need);
		free(buf);
		return 0;
	}
	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "json")) {
		json__print_string(stdout, argv[2]);
		putchar('\n');
		return 0;
	}
	for (size_t i = 0; i < sizeof(flavours) / sizeof(flavours[0]); i++) {
		if (!strcmp(argv[1], flavours[i].name)) {
			escape__print(stdout, argv[2], flavours[i].fl);
			putchar('\n');
			return 0;
		}
	}
	return 2;
}
