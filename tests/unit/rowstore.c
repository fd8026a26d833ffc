// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Drives common/rowstore.c on a real array of maps of four chunks: where
 * ranges go (none of a chunk's size or less across two), free ranges
 * joined, chunks made and dropped, and rows read back through the outer
 * map as the BPF side finds them. Prints one line per check; exits 1 if
 * any failed. Needs root (BPF maps).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "rowstore.h"

static int failed;

static void check(int ok, const char *what, long long got, long long want)
{
	printf("%s %s: %lld (want %lld)\n", ok ? "ok" : "FAIL", what, got, want);
	failed |= !ok;
}

#define EXPECT(what, got, want)						\
	do {								\
		long long got_ = (got), want_ = (want);			\
									\
		check(got_ == want_, what, got_, want_);		\
	} while (0)

static struct unwind_row *rows_of(size_t n, __u32 tag)
{
	struct unwind_row *r = calloc(n, sizeof(*r));

	for (size_t i = 0; r && i < n; i++)
		r[i].pc = tag + i;
	return r;
}

/* Row @idx's pc as the BPF side reads it: the chunk through the outer map, then the row. */
static long long read_pc(int outer, __u32 idx)
{
	__u32 c = idx / UNWIND_CHUNK_ROWS, i = idx % UNWIND_CHUNK_ROWS, id;
	struct unwind_row r;
	int fd;

	if (bpf_map_lookup_elem(outer, &c, &id))
		return -1;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0 || bpf_map_lookup_elem(fd, &i, &r)) {
		if (fd >= 0)
			close(fd);
		return -2;
	}
	close(fd);
	return r.pc;
}

int main(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, inner_opts, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, outer_opts);
	int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tmpl", 4, sizeof(struct unwind_row),
				   UNWIND_CHUNK_ROWS, &inner_opts), outer;
	struct unwind_row *a = rows_of(40000, 1000000), *b = rows_of(40000, 2000000),
			  *c = rows_of(20000, 3000000), *big = rows_of(200000, 4000000);
	struct rowstore *rs;
	__u32 fa, fb, fc, fbig;

	if (inner < 0 || !a || !b || !c || !big) {
		fprintf(stderr, "rowstore: cannot make the template map: %s\n", strerror(errno));
		return 2;
	}
	outer_opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "outer", 4, 4, 4, &outer_opts);
	rs = outer >= 0 ? rowstore__new(outer, 4 * UNWIND_CHUNK_ROWS) : NULL;
	if (!rs) {
		fprintf(stderr, "rowstore: cannot make the store: %s\n", strerror(errno));
		return 2;
	}
	EXPECT("chunks made before any row", rowstore__chunks(rs), 0);
	EXPECT("add 40000", rowstore__add(rs, a, 40000, &fa), 0);
	EXPECT("its first row", fa, 0);
	EXPECT("add 40000 more", rowstore__add(rs, b, 40000, &fb), 0);
	EXPECT("its first row, in the next chunk rather than across two", fb, UNWIND_CHUNK_ROWS);
	EXPECT("add 20000", rowstore__add(rs, c, 20000, &fc), 0);
	EXPECT("its first row, in the first chunk's rest", fc, 40000);
	EXPECT("chunks made", rowstore__chunks(rs), 2);
	EXPECT("rows held", rowstore__used(rs), 100000);
	EXPECT("room: the longest free range", rowstore__room(rs), 4 * UNWIND_CHUNK_ROWS - fb - 40000);
	EXPECT("row 0 read through the outer map", read_pc(outer, 0), 1000000);
	EXPECT("row 59999", read_pc(outer, 59999), 3000000 + 19999);
	EXPECT("row 65536 + 39999", read_pc(outer, UNWIND_CHUNK_ROWS + 39999), 2000000 + 39999);
	EXPECT("add more than the rest", rowstore__add(rs, big, 200000, &fbig), -E2BIG);
	EXPECT("more than there is room for, refused alike",
	       rowstore__add(rs, big, 5 * UNWIND_CHUNK_ROWS, &fbig), -E2BIG);

	rowstore__release(rs, fa, 40000);
	rowstore__release(rs, fc, 20000);
	EXPECT("chunks kept until trimmed", rowstore__chunks(rs), 2);
	EXPECT("trim: the first chunk, empty, dropped", rowstore__trim(rs), 1);
	EXPECT("its row gone from the outer map", read_pc(outer, 0), -1);
	EXPECT("the other chunk's rows stay", read_pc(outer, UNWIND_CHUNK_ROWS), 2000000);
	EXPECT("room: the first chunk's ranges joined, not longer than the rest",
	       rowstore__room(rs), 3 * UNWIND_CHUNK_ROWS - 40000);
	rowstore__release(rs, fb, 40000);
	EXPECT("every range given back: one free range", rowstore__room(rs), 4 * UNWIND_CHUNK_ROWS);
	EXPECT("rows held", rowstore__used(rs), 0);
	EXPECT("add 200000, across chunks", rowstore__add(rs, big, 200000, &fbig), 0);
	EXPECT("its first row", fbig, 0);
	EXPECT("chunks made for it", rowstore__chunks(rs), 4);
	EXPECT("its row 65535", read_pc(outer, 65535), 4000000 + 65535);
	EXPECT("its row 65536, in the next chunk", read_pc(outer, 65536), 4000000 + 65536);
	EXPECT("its last row", read_pc(outer, 199999), 4000000 + 199999);
	rowstore__free(rs);
	EXPECT("no chunk left in the outer map", read_pc(outer, 65536), -1);
	return failed;
}
