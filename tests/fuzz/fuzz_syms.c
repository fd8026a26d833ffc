// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for what the symbolizer parses from files any user can
 * write. The first byte picks the parser: 0 an ELF file (segments, symbols,
 * build-id, debuglink, MiniDebugInfo, uprobe offsets), 1 a /proc/PID/maps
 * line, 2 kallsyms and modules text, 3 a perf-PID.map, 4 a debug file
 * planted in a fake root where the build-id and debuglink searches look,
 * 5 an ELF file's unwind tables (its CFI, or Go's pclntab) and CPython's
 * interpreter found in it, 6 machine code Go's return finder disassembles,
 * 7 a name through every escaper, 8 an ld.so.cache (a container's, anyone's),
 * 9 /proc/PID/stat and status text (a process names itself what it likes),
 * 10 a symbol's name through the C++ and Rust demanglers, 11 a request to
 * the Prometheus exporter (anyone on the host can connect), the series
 * it serves labelled with what the input's head says. FUZZ_TARGET=N in the
 * environment gives every input to parser N alone (its first byte still
 * skipped), for a run of one parser's own length.
 */
#include <elf.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi.h"
#include "runtimes/cpython.h"
#include "demangle.h"
#include "debuginfo.h"
#include "elffile.h"
#include "escape.h"
#include "goprobe.h"
#include "json.h"
#include "ksyms.h"
#include "perfmap.h"
#include "procfile.h"
#include "procmaps.h"
#include "prom.h"
#include "report.h"
#include "syms.h"
#include "symtab.h"
#include "inlines.h"
#include "uprobes.h"

static void fuzz_elf(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	struct uprobe_func *funcs;
	struct sym_info si;
	struct syms *s;
	ssize_t n;

	if (fd < 0)
		return;
	if (write(fd, data, size) == (ssize_t)size) {
		s = syms__new();
		for (uint64_t off = 0; s && off < size + 64; off += 1 + size / 16) {
			struct sym_source calls[INLINES_MAX_DEPTH + 1];

			syms__file(s, fd, off, &si);
			syms__source(&si, off & 1, calls, INLINES_MAX_DEPTH + 1);
		}
		syms__free(s);
		n = uprobes__find(fd, "*", false, 1000, &funcs);
		if (n > 0)
			uprobes__free(funcs, n);
		uprobes__is_go(fd);
	}
	close(fd);
}

static void fuzz_maps(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct maps_entry e;

	if (!line)
		return;
	memcpy(line, data, size);
	line[size] = '\0';
	procmaps__parse_line(line, &e);
	free(line);
}

static void fuzz_kallsyms(const uint8_t *data, size_t size)
{
	size_t half = size / 2;
	FILE *ks = fmemopen((void *)data, half ? half : 1, "r");
	FILE *mods = fmemopen((void *)(data + half), size - half ? size - half : 1, "r");
	const char *module;
	struct ksyms *k;
	uint64_t start;

	k = ksyms__parse(ks, mods);
	if (k) {
		for (uint64_t a = 0; a < 64; a++)
			ksyms__find(k, a * 0x1000 + (size ? data[0] : 0), &start, &module);
		ksyms__find(k, UINT64_MAX, &start, &module);
		ksyms__free(k);
	}
	if (ks)
		fclose(ks);
	if (mods)
		fclose(mods);
}

static void fuzz_perfmap(const uint8_t *data, size_t size)
{
	struct perfmap m = {};
	char *text = malloc(size + 1);

	if (!text)
		return;
	memcpy(text, data, size);
	if (perfmap__parse(&m, text, size)) {
		perfmap__free(&m);
		return;
	}
	for (size_t i = 0; i < 64; i++)
		perfmap__find(&m, size ? (uint64_t)data[i % size] << (i % 48) : i);
	perfmap__free(&m);
}

/* A root tree of our own, where the searches look for debug files. */
static const char *fake_root(void)
{
	static char dir[] = "/tmp/bpfscope-fuzz-root.XXXXXX";
	static bool made;
	char path[PATH_MAX];

	if (made)
		return dir;
	if (!mkdtemp(dir))
		return NULL;
	snprintf(path, sizeof(path), "%s/usr", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/usr/lib", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/usr/lib/debug", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/ab", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/bin", dir);
	mkdir(path, 0755);
	made = true;
	return dir;
}

static void put(const char *root, const char *name, const uint8_t *data, size_t size)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size)
		ftruncate(fd, 0);
	close(fd);
}

/* 20 bytes of build-id and 4 of CRC, then the planted file's contents. */
static void fuzz_debuginfo(const uint8_t *data, size_t size)
{
	static struct debuginfo *d;
	unsigned char id[20] = { 0xab };
	const char *root = fake_root();
	struct debuginfo_query q;
	char found[PATH_MAX];
	int rootfd, fd;
	uint32_t crc = 0;

	char name[128];

	if (!root || size < 24)
		return;
	if (!d)
		d = debuginfo__new();
	memcpy(id + 1, data + 1, 19);
	memcpy(&crc, data + 20, 4);
	/* Where the build-id search will look for this id. */
	snprintf(name, sizeof(name), "usr/lib/debug/.build-id/ab/");
	for (size_t i = 1; i < sizeof(id); i++)
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "%02x", id[i]);
	strcat(name, ".debug");
	put(root, name, data + 24, size - 24);
	put(root, "bin/prog.debug", data + 24, size - 24);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return;
	q = (struct debuginfo_query){
		.rootfd = rootfd, .path = "/bin/prog", .build_id = data[0] & 1 ? id : NULL,
		.build_id_len = sizeof(id), .debuglink = "prog.debug", .crc = crc,
	};
	fd = debuginfo__find(d, &q, found, sizeof(found));
	if (fd >= 0)
		close(fd);
	close(rootfd);
}

/* Unwind rows from the file's CFI and from Go's pclntab, the two merged (cgo), and CPython's interpreter. */
static void fuzz_unwind(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	struct py_binary *pb;
	struct cfi_table t;
	uint64_t lo, hi;
	Elf *elf;

	if (fd < 0)
		return;
	if (write(fd, data, size) == (ssize_t)size && !elffile__begin(fd, &elf)) {
		if (!cfi__build(elf, NULL, 1 << 20, &t)) {
			cfi__add_go(fd, elf, 1 << 20, &t);
			cfi__free(&t);
		}
		if (!cfi__build_go(fd, elf, 1 << 20, &t))
			cfi__free(&t);
		cfi__function(elf, size ? data[size / 2] << 12 : 0, &lo, &hi);
		pb = python__probe(fd, elf, "fuzz");
		python__binary_free(pb);
		elf_end(elf);
	}
	close(fd);
}

/* x86-64 or arm64 code (by the first byte), whose returns are looked for. */
static void fuzz_returns(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	uint64_t *rets;
	ssize_t n;

	if (fd < 0 || size < 2)
		goto out;
	if (write(fd, data + 1, size - 1) == (ssize_t)(size - 1)) {
		n = goprobe__returns(fd, data[0] & 1 ? EM_AARCH64 : EM_X86_64, 0, size - 1, &rets);
		if (n > 0)
			free(rets);
	}
out:
	if (fd >= 0)
		close(fd);
}

static bool ldcache_path(const char *path, void *ctx)
{
	(*(size_t *)ctx) += strlen(path);
	return false;	/* every entry */
}

/* An ld.so.cache, for each library name its first bytes before a NUL spell. */
static void fuzz_ldcache(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size < 64 ? size : 64);
	char *copy;
	size_t n = 0;

	if (!nul)
		return;
	/* A copy of its own size, so that ASan sees a read past its end. */
	copy = malloc(size - (nul + 1 - data) + 1);
	if (!copy)
		return;
	memcpy(copy, nul + 1, size - (nul + 1 - data));
	uprobes__ldcache_each(copy, size - (nul + 1 - data), (const char *)data, ldcache_path, &n);
	free(copy);
}

/* /proc/PID/stat and a status line, as the kernel shows any process's name. */
static void fuzz_proc_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	unsigned long long start;
	pid_t ns = 1;

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	procfile__stat_start(text, &start);
	procfile__status_nspid(text, &ns);
	free(text);
}

/* A name through every writer: whatever it holds, they must not read past it. */
static void fuzz_escape(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1), out[64];
	FILE *null = fopen("/dev/null", "w");

	if (!name || !null)
		goto out;
	memcpy(name, data, size);
	name[size] = '\0';
	for (int fl = ESCAPE_TEXT; fl <= ESCAPE_PROM; fl++) {
		escape__print(null, name, fl);
		escape__format(out, size % sizeof(out), name, fl);
	}
	json__print_string(null, name);
out:
	free(name);
	if (null)
		fclose(null);
}

/* A symbol's name, as long as a symbol table keeps one, demangled. */
static void fuzz_demangle(const uint8_t *data, size_t size)
{
	char *name, *d;

	if (size > SYMTAB_MAX_NAME)
		size = SYMTAB_MAX_NAME;
	name = malloc(size + 1);
	if (!name)
		return;
	memcpy(name, data, size);
	name[size] = '\0';
	d = demangle(name);
	free(d);
	free(name);
}

/*
 * The exporter, started once on a free port: the input's first byte says
 * how much of what follows labels a series (a function's, a directory's
 * name), the rest is sent as it is, all at once, and the reply read to its
 * end or for 2 s at most.
 */
static void fuzz_prom(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static unsigned int port;
	struct pollfd p;
	char buf[4096];
	size_t nlabel;
	int fd;

	if (!port && (prom__start("127.0.0.1:0", 16) || !(port = prom__port())))
		abort();
	if (size < 1)
		return;
	nlabel = data[0] < size - 1 ? data[0] : size - 1;
	if (nlabel) {
		char *value = strndup((const char *)data + 1, nlabel);

		if (value)
			prom__add_counter("fuzz_total", "Fuzzed labels.",
					  &(struct label){ .key = "function", .str = value }, 1, 1);
		free(value);
	}
	data += 1 + nlabel;
	size -= 1 + nlabel;
	sa.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    (size == 0 || send(fd, data, size, MSG_NOSIGNAL) >= 0)) {
		shutdown(fd, SHUT_WR);
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		while (poll(&p, 1, 2000) == 1 && recv(fd, buf, sizeof(buf), 0) > 0)
			;
	}
	close(fd);
}

enum { PARSERS = 12 };

static int target = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = getenv("FUZZ_TARGET");

	if (t && *t)
		target = atoi(t) % PARSERS;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (target >= 0 ? target : data[0] % PARSERS) {
	case 0:
		fuzz_elf(data + 1, size - 1);
		break;
	case 1:
		fuzz_maps(data + 1, size - 1);
		break;
	case 2:
		fuzz_kallsyms(data + 1, size - 1);
		break;
	case 3:
		fuzz_perfmap(data + 1, size - 1);
		break;
	case 4:
		fuzz_debuginfo(data + 1, size - 1);
		break;
	case 5:
		fuzz_unwind(data + 1, size - 1);
		break;
	case 6:
		fuzz_returns(data + 1, size - 1);
		break;
	case 7:
		fuzz_escape(data + 1, size - 1);
		break;
	case 8:
		fuzz_ldcache(data + 1, size - 1);
		break;
	case 9:
		fuzz_proc_text(data + 1, size - 1);
		break;
	case 10:
		fuzz_demangle(data + 1, size - 1);
		break;
	case 11:
		fuzz_prom(data + 1, size - 1);
		break;
	}
	return 0;
}
