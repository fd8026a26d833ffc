// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Prometheus exposition of a histogram tool: series kept since start, served by libmicrohttpd. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "escape.h"
#include "lazylib.h"
#include "prom.h"
#include "report.h"
#include "tool.h"

/* A scraper gets this much of the server, however it behaves. */
#define MAX_CONNECTIONS		16
#define MAX_PER_CLIENT		8
#define CONNECTION_TIMEOUT_S	10
#define REQUEST_MEMORY		(16 * 1024)
/*
 * libmicrohttpd's timeout is for idleness only: a client that sends a byte
 * every few seconds keeps its connection for ever, and 16 of them keep
 * every scraper out. So a request must also arrive whole, and its answer
 * leave, within this long of the connection's start or of the answer
 * before; past it, the connection is cut.
 */
#define REQUEST_DEADLINE_S	10

/*
 * Histogram buckets: log2 slot i holds values below 2^(i+1) units (the
 * kernel truncates to whole units), so that is its "le". Buckets stop at
 * 2^36 ns (68.7 s) in every unit; slower calls are in +Inf only.
 */
#define TOP_NS (1ULL << 36)

enum kind { HISTOGRAM, COUNTER };

struct series {
	char *labels;		/* as exposed, without braces: pid="42",comm="nginx" */
	struct hist h;		/* HISTOGRAM, in the family's unit */
	uint64_t value;		/* COUNTER */
};

struct family {
	char *name;		/* bpfscope_runqlat_wait_seconds */
	char *help;
	enum kind kind;
	uint64_t unit_ns;
	struct series *series;	/* at most @limit, then "other" */
	unsigned int limit;
	size_t n;
	size_t *slots;		/* open addressing over @series, by labels; SIZE_MAX empty */
	size_t nslots;
	struct series *other;	/* label sets folded away... */
	uint64_t folded;	/* ...and how many times one was */
};

#define MAX_FAMILIES 16

/* A connection's deadline (REQUEST_DEADLINE_S), libmicrohttpd's socket context. */
struct conn {
	int fd;
	long long deadline_ms;		/* CLOCK_MONOTONIC */
	bool cut;
	struct conn *prev, *next;
};

/*
 * The watchdog that cuts connections past their deadline. It shuts their
 * sockets down rather than closing them: libmicrohttpd's thread then sees
 * the end of the stream and closes the connection itself, and the
 * descriptor cannot be another file's by then, since a connection leaves
 * the list (NOTIFY_CLOSED, under the lock) before its socket is closed.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool running, stop;
	struct conn *head;
	uint64_t cut;
} watch = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct {
	pthread_mutex_t lock;
	struct MHD_Daemon *daemon;
	unsigned int max_series;
	struct family families[MAX_FAMILIES];
	int nfamilies;
} prom = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* libmicrohttpd's functions, through a table: the library is loaded by prom__start(). */
static struct microhttpd {
	struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port,
					   MHD_AcceptPolicyCallback apc, void *apc_cls,
					   MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop_daemon)(struct MHD_Daemon *daemon);
	const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *daemon,
						       enum MHD_DaemonInfoType type, ...);
	const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *c,
							       enum MHD_ConnectionInfoType type,
							       ...);
	struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
							     enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_response_header)(struct MHD_Response *r, const char *header,
					       const char *content);
	enum MHD_Result (*queue_response)(struct MHD_Connection *c, unsigned int status,
					  struct MHD_Response *r);
	void (*destroy_response)(struct MHD_Response *r);
} mhd;

/* Static and cross builds link the library, built from its source (scripts/microhttpd). */
#ifdef BPFSCOPE_MHD_LINKED
#define MHD_SYM LAZYSYM_LINKED
#else
#define MHD_SYM LAZYSYM_LOADED
#endif

static const struct lazysym mhd_syms[] = {
	MHD_SYM(struct microhttpd, start_daemon, MHD_start_daemon),
	MHD_SYM(struct microhttpd, stop_daemon, MHD_stop_daemon),
	MHD_SYM(struct microhttpd, get_daemon_info, MHD_get_daemon_info),
	MHD_SYM(struct microhttpd, get_connection_info, MHD_get_connection_info),
	MHD_SYM(struct microhttpd, create_response_from_buffer, MHD_create_response_from_buffer),
	MHD_SYM(struct microhttpd, add_response_header, MHD_add_response_header),
	MHD_SYM(struct microhttpd, queue_response, MHD_queue_response),
	MHD_SYM(struct microhttpd, destroy_response, MHD_destroy_response),
};

/* Its soname since 0.9.38 (2014). */
static struct lazylib microhttpd = {
	.soname = "libmicrohttpd.so.12",
	.syms = mhd_syms,
	.nsyms = sizeof(mhd_syms) / sizeof(mhd_syms[0]),
	.table = &mhd,
};

bool prom__active(void)
{
	return prom.daemon != NULL;
}

/* Label values are names other users chose: escaped as text, then for the format. */
/* A label value, escaped, valid UTF-8 however it is cut (at 16 KiB). */
static void put_value(FILE *f, const char *s)
{
	char buf[4 * 4096 + 1];

	escape__format(buf, sizeof(buf), s, ESCAPE_PROM);
	fputs(buf, f);
}

static char *format_labels(const struct label *labels, int n, bool other)
{
	char *s = NULL;
	size_t len;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "", labels[i].key);
		if (other)
			fputs("[other]", f);
		else if (labels[i].str)
			put_value(f, labels[i].str);
		else
			fprintf(f, "%lld", labels[i].num);
		fputc('"', f);
	}
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/*
 * The family @metric, with room for @limit label sets (past them, one
 * [other] series adds up the rest).
 */
/* Reasons a tool counts losses by: fewer than this. */
#define PROM_LOST_REASONS 32

static struct family *family_get(const char *metric, const char *help, enum kind kind,
				 unsigned int limit)
{
	char name[128];

	snprintf(name, sizeof(name), "bpfscope_%s_%s", tool_name, metric);
	for (int i = 0; i < prom.nfamilies; i++)
		if (!strcmp(prom.families[i].name, name))
			return &prom.families[i];
	if (prom.nfamilies == MAX_FAMILIES)
		return NULL;

	struct family *fam = &prom.families[prom.nfamilies];
	size_t nslots = 16;

	while (nslots < 2 * (size_t)limit)
		nslots *= 2;
	*fam = (struct family){ .kind = kind, .nslots = nslots, .limit = limit };
	fam->name = strdup(name);
	fam->help = strdup(help);
	fam->series = calloc(limit, sizeof(*fam->series));
	fam->slots = malloc(nslots * sizeof(*fam->slots));
	if (!fam->name || !fam->help || !fam->series || !fam->slots) {
		free(fam->name);
		free(fam->help);
		free(fam->series);
		free(fam->slots);
		return NULL;
	}
	memset(fam->slots, 0xff, nslots * sizeof(*fam->slots));
	prom.nfamilies++;
	return fam;
}

/* The series of @labels, created if there is room, else the folded one; NULL without memory. */
static struct series *series_get(struct family *fam, const struct label *labels, int n)
{
	char *key = format_labels(labels, n, false);
	size_t i;

	if (!key)
		return NULL;
	for (i = hash_str(key) & (fam->nslots - 1); fam->slots[i] != SIZE_MAX;
	     i = (i + 1) & (fam->nslots - 1)) {
		if (!strcmp(fam->series[fam->slots[i]].labels, key)) {
			free(key);
			return &fam->series[fam->slots[i]];
		}
	}
	if (fam->n < fam->limit) {
		fam->slots[i] = fam->n;
		fam->series[fam->n].labels = key;
		return &fam->series[fam->n++];
	}
	free(key);
	fam->folded++;
	if (!fam->other) {
		fam->other = calloc(1, sizeof(*fam->other));
		if (fam->other)
			fam->other->labels = format_labels(labels, n, true);
		if (fam->other && !fam->other->labels) {
			free(fam->other);
			fam->other = NULL;
		}
	}
	return fam->other;
}

static uint64_t unit_ns(const char *unit)
{
	return !strcmp(unit, "msecs") ? 1000000 : !strcmp(unit, "usecs") ? 1000 : 1;
}

void prom__add_hist(const char *metric, const char *help, const struct label *labels,
		    int nlabels, const struct hist *h, const char *unit)
{
	struct family *fam;
	struct series *s;

	pthread_mutex_lock(&prom.lock);
	fam = family_get(metric, help, HISTOGRAM, prom.max_series);
	if (fam && !fam->unit_ns)
		fam->unit_ns = unit_ns(unit);
	s = fam ? series_get(fam, labels, nlabels) : NULL;
	if (s) {
		for (int i = 0; i < HIST_SLOTS; i++)
			s->h.slots[i] += h->slots[i];
		s->h.sum += h->sum;
	}
	pthread_mutex_unlock(&prom.lock);
}

void prom__add_counter(const char *metric, const char *help, const struct label *labels,
		       int nlabels, uint64_t delta)
{
	struct family *fam;
	struct series *s;

	pthread_mutex_lock(&prom.lock);
	fam = family_get(metric, help, COUNTER, prom.max_series);
	s = fam ? series_get(fam, labels, nlabels) : NULL;
	if (s)
		s->value += delta;
	pthread_mutex_unlock(&prom.lock);
}

void prom__lost(const char *reason, uint64_t total)
{
	struct label l = { "reason", reason };
	struct family *fam;
	struct series *s;

	pthread_mutex_lock(&prom.lock);
	/*
	 * A tool's few reasons, never folded: in [other], each would set its
	 * total in turn, and the counter would go back and forth.
	 */
	fam = family_get("lost_total", "Events the BPF programs could not count since start, by reason",
			 COUNTER, PROM_LOST_REASONS);
	s = fam ? series_get(fam, &l, 1) : NULL;
	if (s)
		s->value = total;
	pthread_mutex_unlock(&prom.lock);
}

static void put_series_hist(FILE *f, const struct family *fam, const struct series *s)
{
	double scale = fam->unit_ns / 1e9;
	const char *sep = *s->labels ? "," : "", *open = *s->labels ? "{" : "";
	const char *close = *s->labels ? "}" : "";
	uint64_t cum = 0, total = 0;

	for (int i = 0; i < HIST_SLOTS; i++)
		total += s->h.slots[i];
	for (int i = 0; i < HIST_SLOTS - 1; i++) {
		uint64_t le = 2ULL << i;

		if (le > TOP_NS / fam->unit_ns)
			break;
		cum += s->h.slots[i];
		fprintf(f, "%s_bucket{%s%sle=\"%.9g\"} %llu\n", fam->name, s->labels, sep,
			le * scale, (unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", fam->name, s->labels, sep,
		(unsigned long long)total);
	fprintf(f, "%s_sum%s%s%s %.9g\n", fam->name, open, s->labels, close, s->h.sum * scale);
	fprintf(f, "%s_count%s%s%s %llu\n", fam->name, open, s->labels, close,
		(unsigned long long)total);
}

static void put_series(FILE *f, const struct family *fam, const struct series *s)
{
	if (fam->kind == HISTOGRAM)
		put_series_hist(f, fam, s);
	else
		fprintf(f, "%s%s%s%s %llu\n", fam->name, *s->labels ? "{" : "", s->labels,
			*s->labels ? "}" : "", (unsigned long long)s->value);
}

static void render(FILE *f)
{
	pthread_mutex_lock(&prom.lock);
	for (int i = 0; i < prom.nfamilies; i++) {
		const struct family *fam = &prom.families[i];

		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam->name, fam->help, fam->name,
			fam->kind == HISTOGRAM ? "histogram" : "counter");
		for (size_t k = 0; k < fam->n; k++)
			put_series(f, fam, &fam->series[k]);
		if (fam->other)
			put_series(f, fam, fam->other);
	}
	fprintf(f, "# HELP bpfscope_%s_folded_total Label sets added to a metric's [other] series "
		"(once per collection) because it had --prometheus-series (%u) already\n"
		"# TYPE bpfscope_%s_folded_total counter\n", tool_name, prom.max_series, tool_name);
	/* The lost counters' few reasons are never folded. */
	for (int i = 0; i < prom.nfamilies; i++)
		if (!strstr(prom.families[i].name, "_lost_total"))
			fprintf(f, "bpfscope_%s_folded_total{metric=\"%s\"} %llu\n", tool_name,
				prom.families[i].name,
				(unsigned long long)prom.families[i].folded);
	pthread_mutex_unlock(&prom.lock);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, char *body,
			     size_t len, const char *type)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
	char *body = strdup(text);

	return body ? reply(c, status, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)cls, (void)version, (void)upload, (void)upload_size, (void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
	if (!strcmp(url, "/"))
		return reply_text(c, MHD_HTTP_OK, "bpfscope: metrics at /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: metrics are at /metrics\n");

	f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	render(f);
	if (fclose(f)) {
		free(body);
		return MHD_NO;
	}
	return reply(c, MHD_HTTP_OK, body, len, "text/plain; version=0.0.4; charset=utf-8");
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* libmicrohttpd's thread: a connection accepted (its deadline starts), or gone. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *info;
	struct conn *k = *socket_context;

	(void)cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		info = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		k = info ? calloc(1, sizeof(*k)) : NULL;
		if (!k)
			return;	/* idle timeout only: as without the watchdog */
		k->fd = info->connect_fd;
		k->deadline_ms = mono_ms() + REQUEST_DEADLINE_S * 1000LL;
		pthread_mutex_lock(&watch.lock);
		k->next = watch.head;
		if (watch.head)
			watch.head->prev = k;
		watch.head = k;
		pthread_mutex_unlock(&watch.lock);
		*socket_context = k;
		return;
	}
	if (!k)
		return;
	pthread_mutex_lock(&watch.lock);
	if (k->prev)
		k->prev->next = k->next;
	else
		watch.head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&watch.lock);
	free(k);
	*socket_context = NULL;
}

/* libmicrohttpd's thread: an answer left (or a request failed); the next request's time starts. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	const union MHD_ConnectionInfo *info =
		mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = info ? info->socket_context : NULL;

	(void)cls, (void)con_cls, (void)code;
	if (!k)
		return;
	pthread_mutex_lock(&watch.lock);
	k->deadline_ms = mono_ms() + REQUEST_DEADLINE_S * 1000LL;
	pthread_mutex_unlock(&watch.lock);
}

static void *watchdog(void *arg)
{
	struct timespec until;
	long long now, next;

	(void)arg;
	pthread_mutex_lock(&watch.lock);
	while (!watch.stop) {
		now = mono_ms();
		next = now + REQUEST_DEADLINE_S * 1000LL;
		for (struct conn *k = watch.head; k; k = k->next) {
			if (k->cut)
				continue;
			if (k->deadline_ms <= now) {
				shutdown(k->fd, SHUT_RDWR);
				k->cut = true;
				watch.cut++;
			} else if (k->deadline_ms < next) {
				next = k->deadline_ms;
			}
		}
		/* A new connection's deadline is later than any it could wait for. */
		until = (struct timespec){ .tv_sec = next / 1000, .tv_nsec = next % 1000 * 1000000 };
		pthread_cond_timedwait(&watch.wake, &watch.lock, &until);
	}
	pthread_mutex_unlock(&watch.lock);
	return NULL;
}

static int watchdog_start(void)
{
	pthread_condattr_t attr;
	int err;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	err = pthread_cond_init(&watch.wake, &attr);
	pthread_condattr_destroy(&attr);
	if (err)
		return -err;
	watch.stop = false;
	err = pthread_create(&watch.thread, NULL, watchdog, NULL);
	if (err) {
		pthread_cond_destroy(&watch.wake);
		return -err;
	}
	watch.running = true;
	return 0;
}

static void watchdog_stop(void)
{
	if (!watch.running)
		return;
	pthread_mutex_lock(&watch.lock);
	watch.stop = true;
	pthread_cond_signal(&watch.wake);
	pthread_mutex_unlock(&watch.lock);
	pthread_join(watch.thread, NULL);
	pthread_cond_destroy(&watch.wake);
	watch.running = false;
}

/* "[ADDR:]PORT", "[::1]:PORT" for IPv6; 127.0.0.1 without ADDR. */
static int parse_listen(const char *listen, struct sockaddr_storage *ss, bool *v6)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	const char *colon = strrchr(listen, ':'), *port_s = colon ? colon + 1 : listen;
	char addr[64] = "127.0.0.1", *end;
	unsigned long port;

	errno = 0;
	port = strtoul(port_s, &end, 10);
	if (!*port_s || *end || errno || port > 65535 || *port_s == '-' || *port_s == '+')
		return -EINVAL;
	if (colon) {
		size_t n = colon - listen;

		if (n >= sizeof(addr) || !n)
			return -EINVAL;
		memcpy(addr, listen, n);
		addr[n] = '\0';
	}
	memset(ss, 0, sizeof(*ss));
	*v6 = addr[0] == '[';
	if (*v6) {
		size_t n = strlen(addr);

		if (n < 3 || addr[n - 1] != ']')
			return -EINVAL;
		addr[n - 1] = '\0';
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return inet_pton(AF_INET6, addr + 1, &in6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	return inet_pton(AF_INET, addr, &in->sin_addr) == 1 ? 0 : -EINVAL;
}

bool prom__valid_listen(const char *listen)
{
	struct sockaddr_storage ss;
	bool v6;

	return !parse_listen(listen, &ss, &v6);
}

int prom__start(const char *listen, unsigned int max_series)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	sigset_t stop, old;
	char host[INET6_ADDRSTRLEN] = "";
	bool v6;
	int err;

	if (parse_listen(listen, &ss, &v6))
		return -EINVAL;	/* cli__parse() said so */
	if (lazylib__load(&microhttpd)) {
		pr_err("--prometheus: cannot load %s (%s): install libmicrohttpd12",
		       microhttpd.soname, lazylib__why(&microhttpd));
		return -ENOENT;
	}
	prom.max_series = max_series;
	/* The stop signals are the main thread's, never the server's. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	err = watchdog_start();
	if (err) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pr_err("--prometheus: cannot start a thread: %s", strerror(-err));
		return err;
	}
	prom.daemon = mhd.start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL_LINUX_ONLY |
			(v6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, handle, NULL,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)MAX_PER_CLIENT,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONNECTION_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
		MHD_OPTION_END);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!prom.daemon) {
		watchdog_stop();
		pr_err("--prometheus: cannot listen on %s: %s", listen,
		       err ? strerror(err) : "libmicrohttpd refused");
		return err ? -err : -EINVAL;
	}
	info = mhd.get_daemon_info(prom.daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (v6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	printf("Serving Prometheus metrics at http://%s%s%s:%u/metrics\n", v6 ? "[" : "", host,
	       v6 ? "]" : "", info ? info->port : ntohs(((struct sockaddr_in *)&ss)->sin_port));
	fflush(stdout);
	return 0;
}

unsigned int prom__port(void)
{
	const union MHD_DaemonInfo *info;

	info = prom.daemon ? mhd.get_daemon_info(prom.daemon, MHD_DAEMON_INFO_BIND_PORT) : NULL;
	return info ? info->port : 0;
}

void prom__stop(void)
{
	if (!prom.daemon)
		return;
	/* Its connections close (NOTIFY_CLOSED) before the watchdog goes. */
	mhd.stop_daemon(prom.daemon);
	prom.daemon = NULL;
	watchdog_stop();
	if (watch.cut)
		pr_debug("--prometheus: %llu connections cut, past %d s for a request",
			 (unsigned long long)watch.cut, REQUEST_DEADLINE_S);
	for (int i = 0; i < prom.nfamilies; i++) {
		struct family *fam = &prom.families[i];

		for (size_t k = 0; k < fam->n; k++)
			free(fam->series[k].labels);
		if (fam->other)
			free(fam->other->labels);
		free(fam->other);
		free(fam->series);
		free(fam->slots);
		free(fam->name);
		free(fam->help);
	}
	prom.nfamilies = 0;
}
