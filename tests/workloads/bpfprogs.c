// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test helper: prints the name of every BPF program loaded in the kernel,
 * one per line, so tests can tell that a tool left nothing behind where
 * bpftool is not at hand (the kernel-matrix VMs).
 * usage: bpfprogs [-v]   -- -v adds run counts and recursion misses
 *                           (with kernel.bpf_stats_enabled=1)
 */
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int main(int argc, char **argv)
{
	int verbose = argc > 1 && !strcmp(argv[1], "-v");
	union bpf_attr attr;
	__u32 id = 0;

	for (;;) {
		struct bpf_prog_info info;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &attr))
			return 0;	/* ENOENT: past the last one */
		id = attr.next_id;

		memset(&attr, 0, sizeof(attr));
		attr.prog_id = id;
		fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr);
		if (fd < 0)
			continue;	/* unloaded since */

		memset(&info, 0, sizeof(info));
		memset(&attr, 0, sizeof(attr));
		attr.info.bpf_fd = fd;
		attr.info.info_len = sizeof(info);
		attr.info.info = (__u64)(unsigned long)&info;
		if (!sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
			if (verbose)
				printf("%s runs %llu misses %llu\n", info.name,
				       (unsigned long long)info.run_cnt,
				       (unsigned long long)info.recursion_misses);
			else
				printf("%s\n", info.name);
		}
		close(fd);
	}
}
