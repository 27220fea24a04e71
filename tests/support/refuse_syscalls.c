/* tests/support/refuse_syscalls.c CALLS PROGRAM [ARG...] — runs PROGRAM
 * where the system refuses the named system calls with EPERM, as a
 * sandbox's or a container's seccomp filter does (the filter is installed
 * here and inherited through exec). CALLS is a comma-separated list of
 * names below, or a group:
 *   numa-policy  mbind, set_mempolicy, get_mempolicy, move_pages,
 *                migrate_pages (and set_mempolicy_home_node where the
 *                headers have it): the NUMA memory-policy calls, which the
 *                default seccomp profiles of Docker and containerd refuse
 *                to a container without CAP_SYS_NICE (moby/moby#37241,
 *                containerd/containerd#7167)
 * Users: tests/omp/run_suite.sh (sched_setaffinity) and
 * tests/vm/restricted_check.sh (numa-policy). Bad input: one line on
 * stderr and status 2. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "no seccomp architecture constant for this machine"
#endif

struct call {
    const char* name;
    long nr;
};

static const struct call calls[] = {
    {"sched_setaffinity", SYS_sched_setaffinity},
    {"mbind", SYS_mbind},
    {"set_mempolicy", SYS_set_mempolicy},
    {"get_mempolicy", SYS_get_mempolicy},
    {"move_pages", SYS_move_pages},
    {"migrate_pages", SYS_migrate_pages},
#ifdef SYS_set_mempolicy_home_node
    {"set_mempolicy_home_node", SYS_set_mempolicy_home_node},
#endif
};
#define CALL_COUNT (sizeof calls / sizeof calls[0])
static const char* const numa_policy[] = {"mbind", "set_mempolicy", "get_mempolicy", "move_pages", "migrate_pages",
                                          "set_mempolicy_home_node"};

/* Marks the call named `name` (length len) refused; 0, or -1 if unknown. */
static int refuse(const char* name, size_t len, int* refused) {
    for (size_t i = 0; i < CALL_COUNT; ++i)
        if (strlen(calls[i].name) == len && strncmp(calls[i].name, name, len) == 0) {
            refused[i] = 1;
            return 0;
        }
    return -1;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: refuse_syscalls CALL[,CALL...] PROGRAM [ARG...]\n");
        return 2;
    }
    int refused[CALL_COUNT] = {0};
    for (const char* p = argv[1]; *p != '\0';) {
        const char* end = strchr(p, ',');
        const size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len == strlen("numa-policy") && strncmp(p, "numa-policy", len) == 0) {
            for (size_t i = 0; i < sizeof numa_policy / sizeof numa_policy[0]; ++i)
                (void)refuse(numa_policy[i], strlen(numa_policy[i]), refused);   /* home_node: where known */
        } else if (refuse(p, len, refused) != 0) {
            fprintf(stderr, "refuse_syscalls: unknown system call '%.*s' (known: numa-policy", (int)len, p);
            for (size_t i = 0; i < CALL_COUNT; ++i) fprintf(stderr, ", %s", calls[i].name);
            fprintf(stderr, ")\n");
            return 2;
        }
        p += len;
        if (*p == ',') ++p;
    }
    /* Load the architecture (anything foreign: allowed), then the number;
     * each refused number returns EPERM, the rest are allowed. */
    struct sock_filter filter[5 + 2 * CALL_COUNT];
    unsigned short k = 0;
    filter[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    filter[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0);
    filter[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    filter[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (size_t i = 0; i < CALL_COUNT; ++i) {
        if (!refused[i]) continue;
        filter[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)calls[i].nr, 0, 1);
        filter[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    }
    filter[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {k, filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("refuse_syscalls: seccomp");
        return 2;
    }
    execvp(argv[2], argv + 2);
    perror("refuse_syscalls: exec");
    return 2;
}
