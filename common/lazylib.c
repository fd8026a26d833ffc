// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Shared libraries loaded the first time their feature is used (capstone, libmicrohttpd). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifndef BPFSCOPE_STATIC
#include <dlfcn.h>
#endif

#include "lazylib.h"
#include "probe.h"

/*
 * Linked as usual, capstone's tables are 77,000 pointers that the dynamic
 * loader relocates at every start (3.2 MiB resident, 4 ms), and Debian's
 * libmicrohttpd maps GnuTLS and the eight libraries under it (2.3 MiB),
 * in every tool, where few runs disassemble or serve.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void set(struct lazylib *lib, const struct lazysym *s, void *addr)
{
	memcpy((char *)lib->table + s->off, &addr, sizeof(addr));
}

static int resolve(struct lazylib *lib)
{
#ifndef BPFSCOPE_STATIC
	const char *why;
	void *addr;
#endif

	if (lib->syms[0].linked) {
		for (size_t i = 0; i < lib->nsyms; i++)
			set(lib, &lib->syms[i], lib->syms[i].linked);
		return 0;
	}
#ifdef BPFSCOPE_STATIC
	snprintf(lib->why, sizeof(lib->why), "not linked into this static build");
	return -ENOENT;
#else
	lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib->handle)
		goto fail;
	for (size_t i = 0; i < lib->nsyms; i++) {
		dlerror();
		addr = dlsym(lib->handle, lib->syms[i].name);
		if (!addr)
			goto fail;
		set(lib, &lib->syms[i], addr);
	}
	return 0;
fail:
	why = dlerror();
	snprintf(lib->why, sizeof(lib->why), "%s", why ? why : "no such library");
	if (lib->handle)
		dlclose(lib->handle);
	lib->handle = NULL;
	return -ENOENT;
#endif
}

static int load(struct lazylib *lib)
{
	/* As a host without it: for tests of what the tools say then. */
	if (probe__disabled(lib->soname))
		snprintf(lib->why, sizeof(lib->why), "BPFSCOPE_DISABLE=%s", lib->soname);
	else if (!resolve(lib))
		return 0;
	/* Never half a table: a caller checks the result, not each pointer. */
	for (size_t i = 0; i < lib->nsyms; i++)
		set(lib, &lib->syms[i], NULL);
	return -ENOENT;
}

int lazylib__load(struct lazylib *lib)
{
	int err;

	pthread_mutex_lock(&lock);
	if (!lib->done) {
		lib->err = load(lib);
		lib->done = true;
	}
	err = lib->err;
	pthread_mutex_unlock(&lock);
	return err;
}

void lazylib__unload(struct lazylib *lib)
{
	pthread_mutex_lock(&lock);
#ifndef BPFSCOPE_STATIC
	if (lib->done && !lib->err && lib->handle) {
		for (size_t i = 0; i < lib->nsyms; i++)
			set(lib, &lib->syms[i], NULL);
		dlclose(lib->handle);
		lib->handle = NULL;
		lib->done = false;
	}
#endif
	pthread_mutex_unlock(&lock);
}

const char *lazylib__why(const struct lazylib *lib)
{
	return lib->why;
}
