// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Processes, one per program image: their maps read at exec, on a stack's first sight, again when they change. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "container.h"
#include "procfile.h"
#include "procmaps.h"
#include "runtimes/runtime.h"
#include "syms_priv.h"
#include "tool.h"

void proc__free(struct syms *s, struct proc *p)
{
	s->held -= p->jit.bytes;
	perfmap__free(&p->jit);
	free(p->vmas);
	free(p);
}

/* Process @pid's root, shared with every process that has the same one. */
static struct root *root_get(struct syms *s, pid_t pid)
{
	char path[64];
	struct root *r;
	struct stat st;
	int fd;

	/* Most share one: a stat finds it, where opening it to check takes three calls. */
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	if (!stat(path, &st))
		for (r = s->roots; r; r = r->next)
			if (r->dev == st.st_dev && r->ino == st.st_ino)
				return r;
	fd = procfile__open_root(pid);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	for (r = s->roots; r; r = r->next) {
		if (r->dev == st.st_dev && r->ino == st.st_ino) {
			close(fd);
			return r;
		}
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		return NULL;
	}
	*r = (struct root){ s->roots, st.st_dev, st.st_ino, fd };
	s->roots = r;
	return r;
}

/* By pid alone: the images one process has exec'd through share a bucket. */
static unsigned int proc_hash(const struct proc_key *k)
{
	return k->tgid % BUCKETS;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The link to @k's process in its bucket, or the bucket's last, NULL, if it has none. */
static struct proc **proc_link(struct syms *s, const struct proc_key *k)
{
	struct proc **pp = &s->procs[proc_hash(k)];

	while (*pp && ((*pp)->key.tgid != k->tgid || (*pp)->key.exec_id != k->exec_id ||
		       (*pp)->key.start_ns != k->start_ns))
		pp = &(*pp)->next;
	return pp;
}

struct proc *proc__find(struct syms *s, const struct proc_key *k)
{
	return *proc_link(s, k);
}

/* Is exec count @a before @b? Both are a counter's low bits: by their difference. */
static bool exec_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* Another image of @k's process (same pid and start), known to come after @k's? */
static bool exec_known_after(struct syms *s, const struct proc_key *k)
{
	if (!k->start_ns)	/* then a pid's processes cannot be told apart */
		return false;
	for (struct proc *q = s->procs[proc_hash(k)]; q; q = q->next)
		if (q->key.tgid == k->tgid && q->key.start_ns == k->start_ns &&
		    exec_before(k->exec_id, q->key.exec_id))
			return true;
	return false;
}

/*
 * Is @k still the process that has its pid (owned by *@uid), in the image
 * @k names? A reused pid is another program; after an exec, the pid and
 * start time stay and /proc shows the new image, which no file tells from
 * the old: only a later exec_id seen in a stack or at the exec does.
 */
static bool alive(struct syms *s, const struct proc_key *k, uid_t *uid, bool *reused)
{
	unsigned long long ticks;

	*reused = false;
	if (exec_known_after(s, k))
		return false;
	if (procfile__identity(k->tgid, uid, &ticks))
		return false;
	/* /proc gives clock ticks of the very nanoseconds the BPF side read. */
	if (k->start_ns && ticks != k->start_ns / (1000000000ULL / s->ticks_per_sec)) {
		*reused = true;
		return false;
	}
	return true;
}

bool syms__alive(struct syms *s, const struct proc_key *k)
{
	bool reused;
	uid_t uid;

	return alive(s, k, &uid, &reused);
}

int syms__found_exited(struct syms *s, const struct proc_key *k)
{
	struct proc *p = proc__find(s, k);

	return p ? p->exited : -ENOENT;
}

bool proc__same(struct syms *s, struct proc *p)
{
	bool reused;

	if (alive(s, &p->key, &p->uid, &reused))
		return true;
	s->lost.reused += reused;
	return false;
}

/*
 * @p's process has exec'd into a new image: the older images of it are
 * read no more (the maps would be the new one's). One whose maps read the
 * same as @p's was read after that exec: what it holds is @p's, not its
 * own, and goes, so that its stacks are [unknown] rather than misnamed.
 */
static void superseded_by(struct syms *s, struct proc *p)
{
	const struct image_sig *a = &p->sig;

	if (!p->key.start_ns)
		return;
	for (struct proc *q = s->procs[proc_hash(&p->key)]; q; q = q->next) {
		const struct image_sig *b = &q->sig;

		if (q == p || q->key.tgid != p->key.tgid || q->key.start_ns != p->key.start_ns ||
		    !exec_before(q->key.exec_id, p->key.exec_id))
			continue;
		q->superseded = true;
		if (!q->nvmas || !a->first_ino || a->first_ino != b->first_ino ||
		    a->first_dev != b->first_dev || a->vdso != b->vdso || a->stack_end != b->stack_end)
			continue;
		free(q->vmas);
		q->vmas = NULL;
		q->nvmas = 0;
		q->gone = true;
	}
}

static int add_vma(struct proc *p, size_t *cap, const struct vma *v)
{
	if (p->nvmas == *cap) {
		size_t n = *cap ? *cap * 2 : 32;
		struct vma *t = realloc(p->vmas, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		p->vmas = t;
		*cap = n;
	}
	p->vmas[p->nvmas++] = *v;
	return 0;
}

/* Shows the observer a process's executable mappings, as just read. */
static void observe_process(struct syms *s, struct proc *p)
{
	struct syms_mapping *m = calloc(p->nvmas ? p->nvmas : 1, sizeof(*m));

	if (!m)
		return;
	for (size_t i = 0; i < p->nvmas; i++)
		m[i] = (struct syms_mapping){ p->vmas[i].start, p->vmas[i].end, p->vmas[i].pgoff,
					      p->vmas[i].bin ? p->vmas[i].bin->observed : NULL };
	s->observer.process(s->observer.ctx, &p->key, m, p->nvmas);
	free(m);
}

/*
 * Out of descriptors within budget: the limit counts the tool's own too
 * (BPF objects, perf events), which the budget could not know. From now
 * on hold half as many, and read the binaries held, as the report would,
 * until only that many are. Did a descriptor come free?
 */
static bool release_fds(struct syms *s)
{
	size_t before = s->open_fds;

	s->fd_budget = s->open_fds / 2;
	for (int i = 0; i < BUCKETS && s->open_fds > s->fd_budget; i++)
		for (struct binary *b = s->binaries[i]; b && s->open_fds > s->fd_budget;
		     b = b->next)
			if (b->fd >= 0 && !b->loaded)
				binary__load(s, b);
	pr_debug("out of file descriptors: %zu held, %zu now", before, s->open_fds);
	return s->open_fds < before;
}

/*
 * Where @p's paths lead (its root) and its pid there (for its perf map):
 * found when first needed, as most processes read at their exec are gone
 * before any stack of theirs is seen.
 */
static void proc__place(struct syms *s, struct proc *p)
{
	if (p->placed)
		return;
	p->placed = true;
	p->root = root_get(s, p->key.tgid);
	p->nspid = procfile__nspid(p->key.tgid);
}

/*
 * While it lives, for its perf map, which is read when a frame needs it:
 * of a process seen in a stack that runs code from no file. Two calls
 * most processes, which have none, are spared.
 */
static void place_for_jit(struct syms *s, struct proc *p)
{
	if (!p->unfiled_code || p->gone || p->prefetched || p->jit_placed)
		return;
	p->jit_placed = true;
	proc__place(s, p);
	if (p->root)
		pr_debug("pid %d runs code from no file: its perf map is /tmp/perf-%d.map where "
			 "it lives", p->key.tgid, p->nspid);
}

/* The binary @p maps at @e; NULL if it cannot be opened. */
static struct binary *mapped_binary(struct syms *s, struct proc *p, const struct maps_entry *e)
{
	long long now = now_ms();
	struct binary *bin;
	struct stat st;
	int fd;

	bin = binary__checked(s, makedev(e->dev_major, e->dev_minor), e->inode, now);
	if (bin && !binary__stale(s, bin))
		return bin;
	/*
	 * One already read, as most are: one stat, where opening it to check
	 * takes five calls; opened if the observer wants to see it again.
	 */
	if (!procfile__stat_mapped(p->key.tgid, e, &st) && (bin = binary__find(s, &st)) &&
	    !binary__stale(s, bin)) {
		bin->checked_ms = now;
		return bin;
	}
	proc__place(s, p);
	fd = procfile__open_mapped(p->key.tgid, e, p->root ? p->root->fd : -1, &st);
	if ((fd == -EMFILE || fd == -ENFILE) && release_fds(s))
		fd = procfile__open_mapped(p->key.tgid, e, p->root ? p->root->fd : -1, &st);
	if (fd >= 0) {
		bin = binary__get(s, fd, &st, e->path, p->root);
		if (bin)
			bin->checked_ms = now;
		return bin;
	}
	/* ENOENT, ESRCH: unmapped or exited meanwhile, nothing lost. */
	if (fd != -ENOENT && fd != -ESRCH) {
		s->lost.unopened++;
		s->lost.no_fds += fd == -EMFILE || fd == -ENFILE;
	}
	return NULL;
}

static void read_maps(struct syms *s, struct proc *p)
{
	char path[64], line[PATH_MAX + 128];
	struct maps_entry e;
	size_t cap = 0;
	FILE *f;

	p->sig = (struct image_sig){};
	snprintf(path, sizeof(path), "/proc/%d/maps", p->key.tgid);
	f = fopen(path, "re");
	if (!f && (errno == EMFILE || errno == ENFILE) && release_fds(s))
		f = fopen(path, "re");
	if (!f) {
		p->gone = true;
		return;
	}
	setvbuf(f, s->maps_buf, _IOFBF, sizeof(s->maps_buf));
	p->read_ms = now_ms();
	while (fgets(line, sizeof(line), f)) {
		struct binary *bin = NULL;

		if (procmaps__parse_line(line, &e))
			continue;
		if (!p->sig.first_ino && e.inode) {
			p->sig.first_dev = makedev(e.dev_major, e.dev_minor);
			p->sig.first_ino = e.inode;
		}
		if (!strcmp(e.path, "[stack]"))
			p->sig.stack_end = e.end;
		if (!e.exec)
			continue;
		if (!strcmp(e.path, "[vdso]")) {
			p->sig.vdso = e.start;
			bin = binary__vdso(s);
		} else if (e.path[0] == '/') {
			bin = mapped_binary(s, p, &e);
		}
		if (!bin && strcmp(e.path, "[vsyscall]"))
			p->unfiled_code = true;
		if (add_vma(p, &cap, &(struct vma){ e.start, e.end, e.pgoff, bin }))
			break;
	}
	fclose(f);
	superseded_by(s, p);
	if (s->observer.process)
		observe_process(s, p);
}

void syms__want_cgroups(struct syms *s)
{
	s->want_cgroups = true;
}

/* The label of cgroup @path, kept once for every process in it; NULL when none can be. */
static const struct syms_cgroup *cgroup_label(struct syms *s, const char *path)
{
	char id[CONTAINER_ID_LEN + 1];
	struct cgroup_label *l;
	bool contained;
	int n;

	for (l = s->cgroups; l; l = l->next)
		if (!strcmp(l->c.path, path))
			return &l->c;
	if (s->ncgroups >= CGROUP_LABELS_MAX)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	contained = container__id_of_path(path, id);
	l->c.path = strdup(path);
	l->c.container = contained ? strndup(id, CONTAINER_ID_LEN) : NULL;
	n = contained ? asprintf((char **)&l->c.frame, "[container %.*s]", CONTAINER_SHORT_LEN, id) :
			asprintf((char **)&l->c.frame, "[cgroup %s]", path);
	if (n < 0)
		l->c.frame = NULL;
	if (!l->c.path || (contained && !l->c.container) || !l->c.frame) {
		free((char *)l->c.path);
		free((char *)l->c.container);
		free((char *)l->c.frame);
		free(l);
		return NULL;
	}
	l->next = s->cgroups;
	s->cgroups = l;
	s->ncgroups++;
	return &l->c;
}

/* @p's cgroup, read once, while it is the process it was (its start time checked after). */
static void read_cgroup(struct syms *s, struct proc *p)
{
	char path[PATH_MAX];

	if (!s->want_cgroups || p->cgroup_read || p->gone)
		return;
	p->cgroup_read = true;
	if (container__cgroup_of(p->key.tgid, path, sizeof(path)) || !proc__same(s, p))
		return;
	p->cgroup = cgroup_label(s, path);
	s->lost.cgroups_full += !p->cgroup;
}

const struct syms_cgroup *syms__cgroup(struct syms *s, const struct proc_key *k)
{
	struct proc *p = proc__find(s, k);

	if (!p)
		return NULL;
	read_cgroup(s, p);
	return p->cgroup;
}

void syms__cgroups_free(struct syms *s)
{
	for (struct cgroup_label *l = s->cgroups, *n; l; l = n) {
		n = l->next;
		free((char *)l->c.path);
		free((char *)l->c.container);
		free((char *)l->c.frame);
		free(l);
	}
	s->cgroups = NULL;
	s->ncgroups = 0;
}

/* Reads @k's process, seen in a stack (@seen) or at its exec. */
static int track(struct syms *s, const struct proc_key *k, bool seen)
{
	struct proc *p = proc__find(s, k);

	if (p) {
		if (!p->prefetched)
			return 0;
		/* Read in its loader: what it has mapped since is in this stack. */
		p->prefetched = false;
		place_for_jit(s, p);
		return syms__refresh(s, k);
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->key = *k;
	p->next = s->procs[proc_hash(k)];
	s->procs[proc_hash(k)] = p;
	if (exec_known_after(s, k)) {
		/* /proc shows what it exec'd since: nothing there is this image's. */
		p->superseded = p->gone = true;
		return -ESRCH;
	}
	if (!proc__same(s, p)) {
		p->gone = true;
		return -ESRCH;
	}
	read_maps(s, p);
	read_cgroup(s, p);
	if (seen)
		place_for_jit(s, p);
	return p->gone ? -ESRCH : 0;
}

int syms__track(struct syms *s, const struct proc_key *k)
{
	return track(s, k, true);
}

/* Lets @k's process go if it is still one read at its exec that no stack has shown. */
static void drop_prefetched(struct syms *s, const struct proc_key *k)
{
	struct proc **pp = proc_link(s, k), *p = *pp;

	if (p && p->prefetched) {
		*pp = p->next;
		proc__free(s, p);
	}
}

/* For the runtimes' names: is @k a process forgotten, or about to be? */
static bool forgotten(void *ctx, const struct proc_key *k)
{
	struct proc *p = proc__find(ctx, k);

	return !p || p->exited;
}

void syms__forget_exited(struct syms *s)
{
	runtime_names__forget(s->runtime_names, forgotten, s);
	for (int i = 0; i < BUCKETS; i++) {
		struct proc **pp = &s->procs[i];

		while (*pp) {
			struct proc *p = *pp;

			if (p->exited) {
				*pp = p->next;
				proc__free(s, p);
				continue;
			}
			p->exited = !syms__alive(s, &p->key);
			pp = &p->next;
		}
	}
	budget__release_unmapped(s);
	if (s->observer.forgot)
		s->observer.forgot(s->observer.ctx);
}

int syms__prefetch(struct syms *s, const struct proc_key *k)
{
	struct proc_key *oldest = &s->prefetched[s->prefetch_next];
	struct proc *p;
	int err;

	/* As many as the BPF side sends (EXEC_NOTE_RATE). */
	if (proc__find(s, k))
		return 0;
	drop_prefetched(s, oldest);
	*oldest = *k;
	s->prefetch_next = (s->prefetch_next + 1) % PREFETCH_MAX;
	err = track(s, k, false);
	p = proc__find(s, k);
	if (p)
		p->prefetched = true;
	return err;
}

int syms__refresh(struct syms *s, const struct proc_key *k)
{
	struct proc *p = proc__find(s, k);

	if (!p)
		return syms__track(s, k);
	if (p->gone || p->superseded || exec_known_after(s, k))
		return 0;
	/*
	 * A new process is often seen in its loader, before its libraries are
	 * mapped, and may live a few milliseconds: read again at once, a few
	 * times; then 10 ms apart, then at most once a second.
	 */
	if (now_ms() - p->read_ms < (p->rereads < 4 ? 0 : p->rereads < 16 ? 10 : 1000)) {
		p->reread = true;	/* syms__tick() reads them */
		return 0;
	}
	p->reread = false;
	p->rereads++;
	/*
	 * The old mappings go: what was unmapped since cannot be told from
	 * what moved, and the new maps hold every library still there.
	 */
	free(p->vmas);
	p->vmas = NULL;
	p->nvmas = 0;
	read_maps(s, p);
	place_for_jit(s, p);
	return p->gone ? -ESRCH : 0;
}

void syms__tick(struct syms *s)
{
	for (int i = 0; i < BUCKETS; i++)
		for (struct proc *p = s->procs[i]; p; p = p->next)
			if (p->reread)
				syms__refresh(s, &p->key);
	if (s->observer.tick)
		s->observer.tick(s->observer.ctx);
}

const struct vma *proc__vma(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nvmas;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < p->vmas[mid].start)
			hi = mid;
		else if (addr >= p->vmas[mid].end)
			lo = mid + 1;
		else
			return &p->vmas[mid];
	}
	return NULL;
}

/* Its /tmp/perf-PID.map, read the first time an address needs it. */
void proc__load_jit(struct syms *s, struct proc *p)
{
	int err;

	p->jit_tried = true;
	/*
	 * Placed when its stack was first seen, while it lived. If not, only
	 * while its pid is still its own: another process's root and pid
	 * would lead to that process's map.
	 */
	if (!p->placed && syms__alive(s, &p->key))
		proc__place(s, p);
	if (!p->root)
		return;
	err = perfmap__load(&p->jit, p->root->fd, p->nspid, p->uid);
	if (err == -EPERM || err == -EINVAL || err == -ELOOP) {
		pr_debug("pid %d: perf map not trusted: %s", p->key.tgid,
			 err == -EPERM ? "owned by another user" :
			 err == -ELOOP ? "a symbolic link" : "not a regular file");
		s->lost.jit_refused++;
	}
	s->lost.jit_cut += p->jit.truncated;
	s->held += p->jit.bytes;
}
