// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The flame graph: merge stacks into a tree, lay it out, write SVG with zoom and search. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "flamegraph.h"
#include "stackset.h"

#define WIDTH 1200
#define FRAME_H 16
#define PAD_TOP 60
#define PAD_BOTTOM 30
#define PAD_SIDE 10

struct node {
	const char *name;
	enum frame_kind kind;
	uint64_t value;
	struct node *parent;
	struct node *child, *next;	/* first child, next sibling */
};

/*
 * Every node of the tree, hashed by (parent, name, kind): a node with
 * thousands of children (a system-wide profile's process names, a
 * dispatcher's callees) must not be searched child by child.
 */
struct tree {
	struct node **slot;
	size_t cap, n;
};

static size_t node_hash(const struct node *parent, const char *name, enum frame_kind kind)
{
	uint64_t h = (uintptr_t)parent * 0x9e3779b97f4a7c15ULL;

	h ^= (uintptr_t)name * 0xc2b2ae3d27d4eb4fULL;
	h ^= (uint64_t)kind * 0x165667b19e3779f9ULL;
	return h ^ (h >> 29);
}

static bool tree_grow(struct tree *t)
{
	size_t cap = t->cap ? t->cap * 2 : 4096;
	struct node **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return false;
	for (size_t i = 0; i < t->cap; i++) {
		struct node *n = t->slot[i];
		size_t k;

		if (!n)
			continue;
		for (k = node_hash(n->parent, n->name, n->kind) & (cap - 1); slot[k];
		     k = (k + 1) & (cap - 1))
			;
		slot[k] = n;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return true;
}

/* Frame names are interned by the stack set: equal names are equal pointers. */
static struct node *child_of(struct tree *t, struct node *parent, const struct frame *f)
{
	struct node *c;
	size_t k;

	if ((t->n + 1) * 2 > t->cap && !tree_grow(t))
		return NULL;
	for (k = node_hash(parent, f->name, f->kind) & (t->cap - 1); (c = t->slot[k]);
	     k = (k + 1) & (t->cap - 1))
		if (c->parent == parent && c->name == f->name && c->kind == f->kind)
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = f->name;
	c->kind = f->kind;
	c->parent = parent;
	c->next = parent->child;
	parent->child = c;
	t->slot[k] = c;
	t->n++;
	return c;
}

static void free_tree(struct node *n)
{
	while (n) {
		struct node *next = n->next;

		free_tree(n->child);
		free(n);
		n = next;
	}
}

static int depth_of(const struct node *n)
{
	int d = 0;

	for (const struct node *c = n->child; c; c = c->next) {
		int cd = depth_of(c);

		if (cd > d)
			d = cd;
	}
	return d + 1;
}

/* Children alphabetically, as flamegraph.pl does: the x axis is not time. */
static int cmp_nodes(const void *a, const void *b)
{
	return strcmp((*(struct node *const *)a)->name, (*(struct node *const *)b)->name);
}

static void sort_children(struct node *n)
{
	struct node **v;
	size_t k = 0;

	for (struct node *c = n->child; c; c = c->next)
		k++;
	if (k > 1 && (v = malloc(k * sizeof(*v)))) {
		k = 0;
		for (struct node *c = n->child; c; c = c->next)
			v[k++] = c;
		qsort(v, k, sizeof(*v), cmp_nodes);
		for (size_t i = 0; i < k; i++)
			v[i]->next = i + 1 < k ? v[i + 1] : NULL;
		n->child = v[0];
		free(v);
	}
	for (struct node *c = n->child; c; c = c->next)
		sort_children(c);
}

/* Text in SVG: UTF-8 that XML accepts, with its markup characters as entities. */
static void xml_text(FILE *f, const char *s)
{
	escape__print(f, s, ESCAPE_XML);
}

/*
 * Red for user code, orange for the kernel, green for JIT, aqua for inlined
 * calls, grey for the rest (flamegraph.pl's habit); Python's functions blue,
 * containers and cgroups slate.
 * A wall-clock profile's states: on CPU red, runnable yellow, sleeping
 * blue, uninterruptible purple, the rest grey.
 */
static void colour(const struct node *n, char *buf, size_t size)
{
	uint32_t h = 2166136261u;

	for (const char *p = n->name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	switch (n->kind) {
	case FRAME_KERNEL:
		snprintf(buf, size, "rgb(%u,%u,%u)", 220 + h % 35, 120 + (h >> 8) % 60, 30 + (h >> 16) % 30);
		break;
	case FRAME_JIT:
		snprintf(buf, size, "rgb(%u,%u,%u)", 60 + h % 50, 180 + (h >> 8) % 60, 60 + (h >> 16) % 50);
		break;
	case FRAME_INLINE:
		snprintf(buf, size, "rgb(%u,%u,%u)", 40 + h % 50, 180 + (h >> 8) % 50, 190 + (h >> 16) % 50);
		break;
	case FRAME_PYTHON:
		snprintf(buf, size, "rgb(%u,%u,%u)", 90 + h % 40, 110 + (h >> 8) % 50, 210 + (h >> 16) % 45);
		break;
	case FRAME_JS:
		/* V8's yellow, less red than the user frames' orange. */
		snprintf(buf, size, "rgb(%u,%u,%u)", 200 + h % 40, 190 + (h >> 8) % 40, 40 + (h >> 16) % 40);
		break;
	case FRAME_JAVA:
		/* FlameGraph's java palette: green. */
		snprintf(buf, size, "rgb(%u,%u,%u)", 50 + h % 60, 180 + (h >> 8) % 50, 50 + (h >> 16) % 60);
		break;
	case FRAME_PHP:
		/* PHP's elephant: a grey-violet. */
		snprintf(buf, size, "rgb(%u,%u,%u)", 120 + h % 40, 120 + (h >> 8) % 30, 180 + (h >> 16) % 40);
		break;
	case FRAME_PERL:
		/* Perl's onion: a blue-teal. */
		snprintf(buf, size, "rgb(%u,%u,%u)", 40 + h % 40, 150 + (h >> 8) % 40, 170 + (h >> 16) % 40);
		break;
	case FRAME_RUBY:
		/* Ruby's red, softened. */
		snprintf(buf, size, "rgb(%u,%u,%u)", 190 + h % 50, 70 + (h >> 8) % 40, 80 + (h >> 16) % 40);
		break;
	case FRAME_STATE:
		if (!strcmp(n->name, "[running]"))
			snprintf(buf, size, "rgb(230,60,50)");
		else if (!strcmp(n->name, "[runnable]"))
			snprintf(buf, size, "rgb(235,200,40)");
		else if (!strcmp(n->name, "[sleeping]"))
			snprintf(buf, size, "rgb(90,140,230)");
		else if (!strcmp(n->name, "[uninterruptible]"))
			snprintf(buf, size, "rgb(160,90,210)");
		else
			snprintf(buf, size, "rgb(180,180,180)");
		break;
	case FRAME_SYSCALL:
		snprintf(buf, size, "rgb(200,110,60)");
		break;
	case FRAME_CONTAINER:
		snprintf(buf, size, "rgb(%u,%u,%u)", 120 + h % 30, 160 + (h >> 8) % 30, 160 + (h >> 16) % 30);
		break;
	case FRAME_USER:
		/* Less green than the kernel's orange, so the two kinds stay apart. */
		snprintf(buf, size, "rgb(%u,%u,%u)", 205 + h % 50, 50 + (h >> 8) % 60, 40 + (h >> 16) % 40);
		break;
	default:
		snprintf(buf, size, "rgb(%u,%u,%u)", 170 + h % 30, 170 + h % 30, 170 + h % 30);
	}
}

static void emit(FILE *f, const struct node *n, double x, int depth, int height, double scale,
		 uint64_t total, const char *unit)
{
	double w = n->value * scale, cx = x;
	char fill[32];

	colour(n, fill, sizeof(fill));
	/* data-i: the script knows the title's " (inlined)" is ours, not the name's. */
	fprintf(f, "<g class=\"f\" data-v=\"%llu\"%s><title>", (unsigned long long)n->value,
		n->kind == FRAME_INLINE ? " data-i=\"1\"" : "");
	xml_text(f, n->name);
	if (n->kind == FRAME_INLINE)
		fputs(" (inlined)", f);
	fprintf(f, " (%llu %s, %.2f%%)</title><rect x=\"%.3f\" y=\"%d\" width=\"%.3f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\"/><text x=\"%.3f\" y=\"%d\">",
		(unsigned long long)n->value, unit, total ? 100.0 * n->value / total : 0, x,
		height - PAD_BOTTOM - (depth + 1) * FRAME_H, w, FRAME_H - 1, fill, x + 3,
		height - PAD_BOTTOM - depth * FRAME_H - 4);
	/* Names that do not fit are cut, with "..": about 7 px a character. */
	if (w > 21) {
		size_t fit = (w - 6) / 7, len = strlen(n->name);

		if (len <= fit) {
			xml_text(f, n->name);
		} else if (fit > 2) {
			char *cut = strndup(n->name, fit - 2);

			if (cut) {
				xml_text(f, cut);
				fputs("..", f);
				free(cut);
			}
		}
	}
	fputs("</text></g>\n", f);
	for (const struct node *c = n->child; c; c = c->next) {
		/* Frames under 0.1 px cannot be seen or clicked: they only bloat the file. */
		if (c->value * scale >= 0.1)
			emit(f, c, cx, depth + 1, height, scale, total, unit);
		cx += c->value * scale;
	}
}

/*
 * Zoom on click, reset, and a search box: small, and ours. Frames are in
 * the file in depth-first order, so each one's parent is the nearest
 * earlier frame on a lower row: one pass finds them all, and zoom and
 * search work on the tree, in time linear in the frames. A zoom keeps the
 * clicked frame's ancestors (dimmed, the width of the graph, so that a
 * click on one zooms part of the way back out) and its descendants,
 * scaled; it hides the rest. Search says what share of all samples the
 * matching frames cover, each sample once however many of its frames match.
 */
static const char script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"var W = %d, X0 = %d, frames = [], matched = document.getElementById('matched');\n"
"function init() {\n"
"  var gs = document.getElementsByClassName('f'), up = [];\n"
"  for (var i = 0; i < gs.length; i++) {\n"
"    var r = gs[i].getElementsByTagName('rect')[0], t = gs[i].getElementsByTagName('text')[0];\n"
"    var name = gs[i].getElementsByTagName('title')[0].textContent.replace(/ \\([^(]*\\)$/, '');\n"
"    if (gs[i].hasAttribute('data-i')) name = name.replace(/ \\(inlined\\)$/, '');\n"
"    var fr = {g: gs[i], r: r, t: t, x: +r.getAttribute('x'), w: +r.getAttribute('width'),\n"
"              y: +r.getAttribute('y'), v: +gs[i].getAttribute('data-v'), name: name};\n"
"    while (up.length && up[up.length - 1].y <= fr.y) up.pop();\n"
"    fr.parent = up.length ? up[up.length - 1] : null;\n"
"    up.push(fr);\n"
"    frames.push(fr);\n"
"    gs[i].onclick = zoom.bind(null, fr);\n"
"  }\n"
"}\n"
"function fit(fr, x, w, dim) {\n"
"  fr.r.setAttribute('x', x); fr.r.setAttribute('width', w); fr.t.setAttribute('x', x + 3);\n"
"  var n = Math.floor((w - 6) / 7);\n"
"  fr.t.textContent = w < 21 ? '' : fr.name.length <= n ? fr.name : fr.name.substr(0, n - 2) + '..';\n"
"  fr.r.style.opacity = dim ? 0.5 : 1;\n"
"  fr.g.style.display = w < 0.5 ? 'none' : '';\n"
"}\n"
"function zoom(z) {\n"
"  var scale = W / z.w;\n"
"  frames.forEach(function (fr) { fr.zoom = 0; });\n"
"  for (var a = z.parent; a; a = a.parent) a.zoom = 1;\n"
"  frames.forEach(function (fr) {\n"
"    if (fr == z || (fr.parent && fr.parent.zoom == 2)) fr.zoom = 2;\n"
"    if (fr.zoom == 1) fit(fr, X0, W, true);\n"
"    else if (fr.zoom == 2) fit(fr, X0 + (fr.x - z.x) * scale, fr.w * scale, false);\n"
"    else fr.g.style.display = 'none';\n"
"  });\n"
"}\n"
"function reset() { frames.forEach(function (fr) { fit(fr, fr.x, fr.w, false); }); }\n"
"function search() {\n"
"  var re = prompt('Search (regular expression)'), rx, hit = 0;\n"
"  if (re === null) return;\n"
"  try { rx = new RegExp(re); } catch (e) { rx = null; }\n"
"  frames.forEach(function (fr) {\n"
"    fr.hit = !!rx && re !== '' && rx.test(fr.name);\n"
"    fr.r.style.fill = fr.hit ? 'rgb(230,0,230)' : '';\n"
"    fr.under = !!fr.parent && (fr.parent.hit || fr.parent.under);\n"
"    if (fr.hit && !fr.under) hit += fr.v;\n"
"  });\n"
"  if (!rx) matched.textContent = 'Not a regular expression: ' + re;\n"
"  else if (re === '') matched.textContent = '';\n"
"  else matched.textContent = 'Matched: ' + (frames.length && frames[0].v ? (100 * hit / frames[0].v).toFixed(1) : '0.0') + '%%';\n"
"}\n"
"init();\n"
"]]></script>\n";

int flamegraph__write(const struct stackset *set, FILE *f, const struct flamegraph_opts *o)
{
	struct node root = { .name = "all", .kind = FRAME_UNKNOWN };
	struct tree tree = {};
	int depth, height;
	double scale;

	root.value = stackset__total(set);
	for (size_t i = 0; i < stackset__len(set); i++) {
		const struct stack *st = stackset__get(set, i);
		struct node *n = &root;

		for (size_t k = 0; k < st->n && n; k++) {
			n = child_of(&tree, n, stackset__frame(set, st->frames[k]));
			if (n)
				n->value += st->value;
		}
		if (!n) {
			free_tree(root.child);
			free(tree.slot);
			return -ENOMEM;
		}
	}
	free(tree.slot);
	sort_children(&root);
	depth = depth_of(&root);
	height = PAD_TOP + PAD_BOTTOM + depth * FRAME_H;
	scale = root.value ? (double)(WIDTH - 2 * PAD_SIDE) / root.value : 0;

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", WIDTH, height, WIDTH, height);
	fputs("<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	      ".f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
	      ".title { font-size: 17px; text-anchor: middle; }\n"
	      ".sub { font-size: 12px; text-anchor: middle; fill: #555; }\n"
	      ".ctl { cursor: pointer; fill: #3050a0; }</style>\n", f);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f2\"/>\n"
		"<text class=\"title\" x=\"%d\" y=\"24\">", WIDTH / 2);
	xml_text(f, o && o->title ? o->title : "Flame graph");
	fprintf(f, "</text>\n<text class=\"sub\" x=\"%d\" y=\"44\">", WIDTH / 2);
	xml_text(f, o && o->subtitle ? o->subtitle : "");
	fprintf(f, "</text>\n<text class=\"ctl\" x=\"%d\" y=\"24\" onclick=\"reset()\">Reset zoom</text>\n"
		"<text class=\"ctl\" x=\"%d\" y=\"24\" onclick=\"search()\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"></text>\n",
		PAD_SIDE, WIDTH - 60, WIDTH - 400, height - 10);
	emit(f, &root, PAD_SIDE, 0, height, scale, root.value, o && o->unit ? o->unit : "samples");
	fprintf(f, script, WIDTH - 2 * PAD_SIDE, PAD_SIDE);
	fputs("</svg>\n", f);
	free_tree(root.child);
	return ferror(f) ? -EIO : 0;
}
