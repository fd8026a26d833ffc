/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The keys stack tools count by, shared by their BPF programs and user space. */
#ifndef BPFSCOPE_STACK_KEY_H
#define BPFSCOPE_STACK_KEY_H

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

#define STACK_MAX_DEPTH 127	/* the kernel's PERF_MAX_STACK_DEPTH */

/* What a stack field holds when it is not a key of the stacks map. */
#define STACK_NONE 0	/* not taken (-U, -K), or none to take (a kernel thread's user stack) */
#define STACK_LOST 1	/* taken, but the stacks map was full */

/* A stack, leaf first, ended by a 0 when shorter than STACK_MAX_DEPTH. */
struct stack_trace {
	__u64 ips[STACK_MAX_DEPTH];
};

/*
 * A process as its symbols need it: a pid is reused, and an exec replaces
 * the code behind the same pid. The three together name one program image.
 */
struct proc_key {
	__u32 tgid;
	__u32 exec_id;		/* the execs it has made (self_exec_id, low bits) */
	__u64 start_ns;		/* since boot: /proc/PID/stat's starttime, in ns */
};

/* What the BPF side tells user space of a process, through the new_pids ring buffer. */
enum proc_note_kind {
	PROC_SEEN,		/* in a count for the first time: read its maps while it lives */
	PROC_MAPS_CHANGED,	/* code where none was mapped when they were read: read them again */
	PROC_EXEC,		/* just exec'd: read its maps ahead of its first sample */
	PROC_RUNTIME_FRAME,	/* in a stack: a runtime's frame (@value, @data), to name while it lives */
	PROC_BINARY_WANTED,	/* a walk reached binary @value, whose rows wait to be asked for */
	PROC_EXITED,		/* its last thread exited: the unwinder's rows for it may go */
};

/*
 * Processes read at their exec, a second, after a burst. Each read is
 * some 0.1 ms of the tool's CPU, most of it the kernel making the new
 * process's /proc files and printing its stat and maps: at 100 a second
 * that was over 1% of a CPU beside a host's steady churn, for processes
 * most of which no stack shows. A burst (a test suite, a cron job) is read
 * whole; a host that execs hundreds a second (a build) has 25 of them a
 * second read. The BPF side sends no more notes than that
 * (stack_on_exec()), so that those execs do not wake user space either.
 * The rest are read when a stack first shows them (PROC_SEEN): their
 * first samples walked by frame pointers, and one gone by then
 * [unknown]; counted, and said.
 */
#define EXEC_NOTE_RATE	25
#define EXEC_NOTE_BURST	250

/* The counts of notes_lost, per CPU. */
enum notes_lost_kind {
	NOTES_LOST_FULL,	/* the ring had no room */
	NOTES_LOST_RATE,	/* exec notes past EXEC_NOTE_RATE: not sent */
	NOTES_LOST_KINDS,
};

struct proc_note {
	struct proc_key proc;
	__u32 kind;		/* enum proc_note_kind */
	__u32 pad;
	__u64 value;
	__u64 data;		/* a runtime frame's data slot (RUNTIME_DATA), 0 if none */
};

/* What a thread was doing in a count of profile --wall (0 elsewhere). */
enum wall_state {
	WALL_NONE,
	WALL_RUNNING,		/* on a CPU: a sample */
	WALL_RUNNABLE,		/* preempted, waiting for a CPU */
	WALL_SLEEPING,		/* S, and the kernel's idle waits (D that counts no load) */
	WALL_UNINTERRUPTIBLE,	/* D: disk I/O, some locks, vfork */
	WALL_STOPPED,		/* T, t: stopped or traced */
	WALL_OTHER,		/* any other state the kernel has */
	WALL_SHORT,		/* periods off CPU shorter than --min-block, stacks not kept */
	WALL_STATES,
};

/* Above any system call number an architecture has: larger ones are not named. */
#define SYSCALL_MAX 1024

struct stack_key {
	struct proc_key proc;
	__u32 tid;
	__u16 state;		/* enum wall_state */
	__u16 syscall;		/* --wall, off CPU: the system call it was in, its number + 1; 0 none */
	__u64 user_stack;	/* a key of the stacks map, or STACK_NONE / STACK_LOST */
	__u64 kernel_stack;
	char comm[TASK_COMM_LEN];
};

#endif
