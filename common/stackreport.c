// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Turning stack counts into bcc's layouts and flame graph and pprof files. */
#include <argp.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/types.h>

#include "cli.h"
#include "escape.h"
#include "json.h"
#include "outfile.h"
#include "pprofdir.h"
#include "stack_key.h"
#include "stackreport.h"
#include "stackread.h"
#include "stackset.h"
#include "syms.h"
#include "syscalls.h"
#include "tool.h"

/* A count read back: the key's bytes follow the value. */
struct record {
	uint64_t value;
	unsigned char key[];
};

static size_t key_size(const struct stackreport *r)
{
	return r->key_size ? r->key_size : sizeof(struct stack_key);
}

/*
 * "vfs_read_[k]": bcc's -a, so kernel frames stand out in any flame graph
 * tool. Kernel names are the symbolizer's, fixed for the run: each is
 * annotated once and kept, keyed by its address.
 */
static const char *annotated(struct stackreport *r, const char *name)
{
	static struct { const char *name; char *annotated; } *slot;
	static size_t cap, used;
	size_t i;

	if (!r->annotate_kernel)
		return name;
	if ((used + 1) * 2 > cap) {
		size_t ncap = cap ? cap * 2 : 4096;
		__typeof__(slot) t = calloc(ncap, sizeof(*t));

		if (!t)
			return name;
		for (size_t k = 0; k < cap; k++) {
			if (!slot[k].name)
				continue;
			for (i = ((uintptr_t)slot[k].name >> 4) & (ncap - 1); t[i].name;
			     i = (i + 1) & (ncap - 1))
				;
			t[i] = slot[k];
		}
		free(slot);
		slot = t;
		cap = ncap;
	}
	for (i = ((uintptr_t)name >> 4) & (cap - 1); slot[i].name; i = (i + 1) & (cap - 1))
		if (slot[i].name == name)
			return slot[i].annotated;
	if (asprintf(&slot[i].annotated, "%s_[k]", name) < 0)
		return name;
	slot[i].name = name;
	used++;
	return slot[i].annotated;
}

size_t stackreport__thread(struct stackreport *r, const struct proc_key *proc,
			   __u64 user_stack, __u64 kernel_stack, struct frame *out)
{
	struct frame user[STACKREAD_MAX_USER];
	int nk = 0, nu = 0;
	size_t n;

	if (!r->user_only) {
		nk = stackread__kernel(r->stacks, kernel_stack, out);
		for (int i = 0; i < nk; i++)
			if (out[i].kind == FRAME_KERNEL)
				out[i].name = annotated(r, out[i].name);
	}
	if (!r->kernel_only)
		nu = stackread__user(r->stacks, proc, user_stack, user);
	n = nk;
	if (r->delimit && nk && nu)
		out[n++] = (struct frame){ .name = "-", .kind = FRAME_SEPARATOR };
	for (int i = 0; i < nu; i++)
		out[n++] = user[i];
	return n;
}

const char *stackreport__state_name(unsigned int state)
{
	static const char *const names[WALL_STATES] = {
		[WALL_RUNNING] = "[running]",
		[WALL_RUNNABLE] = "[runnable]",
		[WALL_SLEEPING] = "[sleeping]",
		[WALL_UNINTERRUPTIBLE] = "[uninterruptible]",
		[WALL_STOPPED] = "[stopped]",
		[WALL_OTHER] = "[other]",
		[WALL_SHORT] = "[short]",
	};

	return state < WALL_STATES && names[state] ? names[state] : NULL;
}

size_t stackreport__container(struct stackreport *r, const struct proc_key *proc,
			      struct frame *out)
{
	const struct syms_cgroup *c = syms__cgroup(r->syms, proc);

	if (!c)
		return 0;
	*out = (struct frame){ .name = c->frame, .kind = FRAME_CONTAINER, .func = c->container,
			       .file = c->path };
	return 1;
}

/*
 * struct stack_key's fold: [container]; comm; [state]; [sys_read] (profile
 * --wall); user; [-]; kernel, root first.
 */
static size_t key_fold(struct stackreport *r, const void *k, struct frame *out)
{
	const struct stack_key *key = k;
	static struct frame leaf_first[STACKREPORT_MAX_THREAD];
	const char *state = stackreport__state_name(key->state);
	const char *sys = key->syscall ? syscalls__frame(key->syscall - 1) : NULL;
	size_t n = stackreport__thread(r, &key->proc, key->user_stack, key->kernel_stack,
				       leaf_first), o = 0;

	o += stackreport__container(r, &key->proc, out);
	out[o++] = (struct frame){ .name = key->comm, .kind = FRAME_ROOT };
	if (state)
		out[o++] = (struct frame){ .name = state, .kind = FRAME_STATE };
	if (sys)
		out[o++] = (struct frame){ .name = sys, .kind = FRAME_SYSCALL };
	for (size_t i = 0; i < n; i++)
		out[o++] = leaf_first[n - 1 - i];
	return o;
}

void stackreport__print_frames(const struct frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* bcc's delimiter line between kernel and user frames. */
		if (f[i].kind == FRAME_SEPARATOR) {
			puts("    --");
			continue;
		}
		fputs("    ", stdout);
		escape__print(stdout, f[i].name, ESCAPE_TEXT);
		/* perf script's mark. */
		fputs(f[i].kind == FRAME_INLINE ? " (inlined)\n" : "\n", stdout);
	}
}

/* bcc's layout: kernel frames, "--" with -d, user frames, then "- comm (pid)" and the count. */
static void key_print_text(struct stackreport *r, const void *k, uint64_t value)
{
	const struct stack_key *key = k;
	static struct frame f[STACKREPORT_MAX_THREAD];
	const char *state = stackreport__state_name(key->state);

	stackreport__print_frames(f, stackreport__thread(r, &key->proc, key->user_stack,
							 key->kernel_stack, f));
	if (key->syscall && syscalls__frame(key->syscall - 1))
		printf("    %s\n", syscalls__frame(key->syscall - 1));
	if (state)
		printf("    %s\n", state);
	printf("    %-16s ", "-");
	escape__print(stdout, key->comm, ESCAPE_TEXT);
	printf(" (%u)\n        %llu\n\n", key->tid, (unsigned long long)value);
}

static void key_json_fields(struct stackreport *r, const void *k, uint64_t value,
			    struct json *j)
{
	const struct stack_key *key = k;

	json__str(j, "comm", key->comm);
	json__u64(j, "pid", key->tid);
	json__u64(j, "tgid", key->proc.tgid);
	if (stackreport__state_name(key->state))
		json__str(j, "state", stackreport__state_name(key->state));
	/* Named where the build knew it; the frames have it either way. */
	if (key->syscall && syscalls__name(key->syscall - 1))
		json__str(j, "syscall", syscalls__name(key->syscall - 1));
	json__u64(j, r->json_value ? r->json_value : "value", value);
}

static void key_track(struct stackreport *r, const void *k)
{
	const struct stack_key *key = k;

	if (!r->kernel_only && key->user_stack != STACK_NONE)
		syms__track(r->syms, &key->proc);
}

static const struct stackreport_ops key_ops = {
	.fold = key_fold,
	.print_text = key_print_text,
	.json_fields = key_json_fields,
	.track = key_track,
};

static const struct stackreport_ops *ops(const struct stackreport *r)
{
	return r->ops ? r->ops : &key_ops;
}

int stackreport__track(struct stackreport *r)
{
	unsigned char key[256], prev[256];
	size_t ks = key_size(r);
	bool first = true;

	if (ks > sizeof(key))
		return -EINVAL;
	while (!bpf_map_get_next_key(swapped__fd(&r->counts), first ? NULL : prev, key)) {
		ops(r)->track(r, key);
		memcpy(prev, key, ks);
		first = false;
	}
	syms__tick(r->syms);
	return 0;
}

static int cmp_record(const void *a, const void *b)
{
	const struct record *x = *(struct record *const *)a, *y = *(struct record *const *)b;

	return (x->value > y->value) - (x->value < y->value);
}

/*
 * Every count of the map, smallest first (bcc prints the largest last);
 * with @take, taken out of the map after the other took its place
 * (swapped__swap), so that no count is in two reports or in none.
 */
static int read_counts(struct stackreport *r, struct record ***out, size_t *nout, bool take)
{
	size_t ks = key_size(r), n = 0, cap = 0;
	struct record **all = NULL, *rec = NULL;
	unsigned char prev[256];
	bool first = true;
	int err = 0, fd;

	if (ks > sizeof(prev))
		return -EINVAL;
	fd = take ? swapped__swap(&r->counts) : swapped__fd(&r->counts);
	if (fd < 0)
		return fd;
	for (;;) {
		if (!rec && !(rec = malloc(sizeof(*rec) + ks))) {
			err = -ENOMEM;
			break;
		}
		if (bpf_map_get_next_key(fd, first ? NULL : prev, rec->key)) {
			if (errno != ENOENT)
				err = -errno;
			break;
		}
		memcpy(prev, rec->key, ks);
		first = false;
		if (bpf_map_lookup_elem(fd, rec->key, &rec->value))
			continue;	/* gone meanwhile */
		if (n == cap) {
			struct record **t;

			cap = cap ? cap * 2 : 1024;
			t = realloc(all, cap * sizeof(*t));
			if (!t) {
				err = -ENOMEM;
				break;
			}
			all = t;
		}
		all[n++] = rec;
		rec = NULL;
	}
	free(rec);
	/* Emptied for its next turn after the walk: a hash map's walk restarts at a key that is gone. */
	for (size_t i = 0; take && !err && i < n; i++)
		bpf_map_delete_elem(fd, all[i]->key);
	if (err) {
		for (size_t i = 0; i < n; i++)
			free(all[i]);
		free(all);
		return err;
	}
	if (n)
		qsort(all, n, sizeof(*all), cmp_record);
	*out = all;
	*nout = n;
	return 0;
}

static int write_file(const struct stackset *set, const char *path, bool svg,
		      const struct stackreport *r)
{
	struct outfile *o = outfile__open(path);
	int err;

	if (!o)
		return -EIO;
	errno = 0;
	if (svg)
		err = flamegraph__write(set, outfile__stream(o), &r->flamegraph);
	else
		err = pprof__write(set, outfile__stream(o), &r->profile);
	/* The run loop says once what became of the standard output. */
	if (outfile__is_stdout(path) && (err || fflush(stdout)) && ferror(stdout)) {
		err = -(errno ? errno : EIO);
		outfile__discard(o);
		return err;
	}
	if (err) {
		pr_err("cannot write %s: %s", path, strerror(-err));
		outfile__discard(o);
		return err;
	}
	err = outfile__commit(o);
	if (!err && !outfile__is_stdout(path))
		fprintf(stderr, "%s: %s written to %s\n", tool_name,
			svg ? "flame graph" : "pprof profile", path);
	return err;
}

/* Is @f a frame of a JSON line's frames (the names are fields; where it runs, with --containers)? */
static bool json_listed(const struct stackreport *r, const struct frame *f)
{
	return f->kind != FRAME_ROOT && (f->kind != FRAME_CONTAINER || r->containers);
}

/* A frame's name in a JSON line's frames, inlined calls marked as in folded output. */
static void json_frame(struct json *j, const struct frame *f)
{
	char *marked;

	if (f->kind != FRAME_INLINE) {
		json__str(j, NULL, f->name);
	} else if (asprintf(&marked, "%s_[i]", f->name) >= 0) {
		json__str(j, NULL, marked);
		free(marked);
	}
}

int stackreport__print(struct stackreport *r)
{
	static struct frame f[STACKREPORT_MAX_FRAMES];
	const struct stackreport_ops *o = ops(r);
	bool files = r->svg || r->pprof;
	struct stackset *set = NULL, *shown = NULL;
	struct record **all = NULL;
	size_t n = 0;
	int err;

	err = read_counts(r, &all, &n, r->pprof_dir);
	if (err) {
		pr_err("cannot read the counts: %s", strerror(-err));
		return err;
	}
	if (r->folded || files || r->pprof_dir) {
		set = stackset__new();
		for (size_t i = 0; set && i < n; i++) {
			syms__trim(r->syms);	/* the stack set keeps copies of the names */
			if (stackset__add(set, f, o->fold(r, all[i]->key, f), all[i]->value)) {
				stackset__free(set);
				set = NULL;
			}
		}
		if (!set) {
			err = -ENOMEM;
			pr_err("cannot merge the stacks: %s", strerror(ENOMEM));
			goto out;
		}
		stackset__sort(set);
		/* Where processes run, a label in pprof, is a frame elsewhere only if asked. */
		shown = set;
		if (!r->containers && (r->folded || r->svg) && stackset__has(set, FRAME_CONTAINER))
			shown = stackset__without(set, FRAME_CONTAINER);
		if (!shown) {
			err = -ENOMEM;
			pr_err("cannot merge the stacks: %s", strerror(ENOMEM));
			goto out;
		}
	}
	if (r->pprof_dir) {
		err = pprofdir__write(r->pprof_dir, set, &r->profile, r->pprof_keep);
		if (!err)
			err = stackread__prune(r->stacks);
		syms__forget_exited(r->syms);
		goto out;
	}
	if (r->folded) {
		/* A failure is the run loop's to say, with the files still written. */
		errno = 0;
		err = stackset__write_folded(shown, stdout);
		if (err && errno)
			err = -errno;
	} else if (!outfile__is_stdout(r->svg ? r->svg : "") &&
		   !outfile__is_stdout(r->pprof ? r->pprof : "")) {
		for (size_t i = 0; i < n; i++) {
			struct json j;
			size_t nf;

			syms__trim(r->syms);
			if (!r->cli->json) {
				o->print_text(r, all[i]->key, all[i]->value);
				continue;
			}
			nf = o->fold(r, all[i]->key, f);
			json__begin_line(&j, stdout);
			o->json_fields(r, all[i]->key, all[i]->value, &j);
			if (nf && f[0].kind == FRAME_CONTAINER) {
				if (f[0].func)
					json__str(&j, "container", f[0].func);
				json__str(&j, "cgroup", f[0].file);
			}
			json__begin_array(&j, "frames");	/* root first, as in folded output */
			for (size_t k = 0; k < nf; k++)
				if (json_listed(r, &f[k]))
					json_frame(&j, &f[k]);
			json__end_array(&j);
			/* Beside the names, each frame's kind: what the name alone leaves unsaid. */
			json__begin_array(&j, "kinds");
			for (size_t k = 0; k < nf; k++)
				if (json_listed(r, &f[k]))
					json__str(&j, NULL, frame_kind__name(f[k].kind));
			json__end_array(&j);
			json__end_line(&j);
		}
	}
	/* The run loop says it, but by then errno is gone: the first failure's, kept. */
	errno = 0;
	if (fflush(stdout) || ferror(stdout))
		err = err ?: -(errno ? errno : EIO);
	if (r->svg)
		err = write_file(shown, r->svg, true, r) ?: err;
	if (r->pprof)
		err = write_file(set, r->pprof, false, r) ?: err;
out:
	if (shown != set)
		stackset__free(shown);
	stackset__free(set);
	for (size_t i = 0; i < n; i++)
		free(all[i]);
	free(all);
	/*
	 * A run without end frees a report's names and stacks every
	 * interval: hand the pages back, or the heap's free space, spread
	 * among what stays, keeps resident memory growing (tests/bench/fleet).
	 */
	if (r->pprof_dir)
		malloc_trim(0);
	return err;
}

/* Do @a and @b name one file? By their directories: a symlink there is replaced, not followed. */
static bool same_path(const char *a, const char *b)
{
	char *da = strdup(a), *db = strdup(b), *ba = strdup(a), *bb = strdup(b);
	char ra[PATH_MAX], rb[PATH_MAX];
	bool same = !strcmp(a, b);

	if (!same && da && db && ba && bb && realpath(dirname(da), ra) && realpath(dirname(db), rb))
		same = !strcmp(ra, rb) && !strcmp(basename(ba), basename(bb));
	free(da);
	free(db);
	free(ba);
	free(bb);
	return same;
}

void stackreport__check_args(struct argp_state *state, const char *svg, const char *pprof,
			     bool stdout_taken)
{
	if (svg && pprof && same_path(svg, pprof))
		argp_error(state, "--svg and --pprof name the same file '%s'", svg);
	if ((svg && outfile__is_stdout(svg)) || (pprof && outfile__is_stdout(pprof))) {
		if (stdout_taken)
			argp_error(state, "'-' writes a file to the standard output, where -f and "
				   "--json print too: give a file name");
	}
	if (svg && !*svg)
		argp_error(state, "--svg needs a file name ('-' for the standard output)");
	if (pprof && !*pprof)
		argp_error(state, "--pprof needs a file name ('-' for the standard output)");
}

int stackreport__check_files(const char *svg, const char *pprof, const char *pprof_dir)
{
	int err = 0;

	if (pprof_dir)
		return pprofdir__check(pprof_dir);
	if (svg)
		err = outfile__check(svg);
	if (!err && pprof)
		err = outfile__check(pprof);
	return err;
}
