/* tests/omp/allocators.c — the OpenMP memory allocators (OpenMP 5.0):
 * predefined and user-made allocators, alignment, pools with each
 * fallback, calloc, realloc, the default allocator, invalid traits, the
 * partition trait, and the `allocate` clause (GOMP_alloc/GOMP_free).
 * Deterministic: the suite compares the output with libgomp's. With the
 * argument "pinned" (the shim only: GCC 12's libgomp refuses pinned
 * allocators) it checks that a pinned block is locked in memory; with
 * "placement" (in the emulated NUMA guests) that the partition trait puts
 * pages where it says, asking the kernel (move_pages) for every page. */
#define _GNU_SOURCE
#include <errno.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int aligned(const void* p, size_t a) { return ((uintptr_t)p % a) == 0; }

static int filled(const unsigned char* p, size_t n, unsigned char v) {
    for (size_t i = 0; i < n; ++i)
        if (p[i] != v) return 0;
    return 1;
}

static long locked_kib(void) {
    FILE* f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmLck: %ld kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

static int pinned(void) {
    const omp_alloctrait_t t[] = {{omp_atk_pinned, omp_atv_true}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 2, t);
    if (a == omp_null_allocator) return printf("pinned: no allocator\n"), 1;
    const long before = locked_kib();
    char* p = omp_alloc(256 * 1024, a);
    if (!p) return printf("pinned: no block (RLIMIT_MEMLOCK?)\n"), 1;
    memset(p, 1, 256 * 1024);
    const long during = locked_kib();
    omp_free(p, a);
    const long after = locked_kib();
    omp_destroy_allocator(a);
    printf("pinned: locked %ld kB more while live, %ld kB after\n", during - before >= 256 ? 256L : during - before,
           after - before);
    return !(during - before >= 256 && after == before);
}

/* The node of each page of [p, p + bytes), or the kernel's negative status
 * (-ENOENT: not present); every entry -1000 - errno when the query itself
 * failed. A page the caller has written can read as not present for a
 * moment (the kernel migrating or collapsing it holds no page table entry
 * for it then), so such a page is touched again and asked again, up to
 * five times, 10 ms apart: a page still absent, or on another node, stays
 * what it is. */
static void page_nodes(void* p, size_t bytes, int* nodes, int* count) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t first = (uintptr_t)p / page * page;
    const int n = (int)(((uintptr_t)p + bytes - first + page - 1) / page);
    void* pages[4096];
    for (int i = 0; i < n && i < 4096; ++i) pages[i] = (void*)(first + (uintptr_t)i * page);
    *count = n < 4096 ? n : 4096;
    for (int attempt = 0;; ++attempt) {
        if (syscall(SYS_move_pages, 0, (unsigned long)*count, pages, NULL, nodes, 0) != 0) {
            const int e = errno;
            for (int i = 0; i < *count; ++i) nodes[i] = -1000 - e;
            return;
        }
        int absent = 0;
        for (int i = 0; i < *count; ++i)
            if (nodes[i] == -ENOENT) {
                /* Inside [p, p + bytes): the first and last pages may hold
                 * other data, so touch a byte of the block itself. */
                volatile char* b = (volatile char*)(i == 0 ? (uintptr_t)p : (uintptr_t)pages[i]);
                *b = *b;
                ++absent;
            }
        if (absent == 0 || attempt == 4) return;
        usleep(10000);
    }
}

static int my_node(void) {
    unsigned cpu = 0, node = 0;
    return syscall(SYS_getcpu, &cpu, &node, NULL) == 0 ? (int)node : -1;
}

/* Every page of a block allocated and touched by each thread of the team
 * on the calling thread's node (nearest, and the environment's first touch). */
static int on_own_node(omp_allocator_handle_t a, const char* name) {
    int bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        const size_t bytes = 256 * 1024;
        char* p = omp_alloc(bytes, a);
        const int node = my_node();
        if (!p) {
            bad = 1;
        } else {
            memset(p, 1, bytes);
            int nodes[4096], n = 0;
            page_nodes(p, bytes, nodes, &n);
            for (int i = 0; i < n; ++i)
                if (nodes[i] != node) {
#pragma omp critical
                    printf("@@ allocplace %s: thread %d on node %d has page %d of %d on node %d\n", name,
                           omp_get_thread_num(), node, i, n, nodes[i]);
                    bad = 1;
                    break;
                }
            omp_free(p, a);
        }
    }
    return bad == 0;
}

static int placement(void) {
    int ok = 1;
    const omp_uintptr_t kinds[] = {omp_atv_nearest, omp_atv_environment, omp_atv_interleaved, omp_atv_blocked};
    const char* names[] = {"nearest", "environment", "interleaved", "blocked"};
    omp_allocator_handle_t a[4];
    for (int k = 0; k < 4; ++k) {
        const omp_alloctrait_t t[] = {{omp_atk_partition, kinds[k]}, {omp_atk_fallback, omp_atv_null_fb}};
        a[k] = omp_init_allocator(omp_default_mem_space, 2, t);
    }
    for (int k = 0; k < 2; ++k) {
        const int good = on_own_node(a[k], names[k]);
        printf("@@ allocplace %s: every thread's pages on its own node: %s\n", names[k], good ? "yes" : "no");
        ok &= good;
    }
    /* 256 pages: interleaved round robin (each page on another node than
     * the one before, the nodes used equally), blocked in contiguous runs
     * (the node changes as often as there are nodes, less one). */
    for (int k = 2; k < 4; ++k) {
        const size_t bytes = 256 * (size_t)sysconf(_SC_PAGESIZE);
        char* p = omp_alloc(bytes, a[k]);
        if (!p) {
            printf("@@ allocplace %s: no block\n", names[k]);
            ok = 0;
            continue;
        }
        memset(p, 1, bytes);
        int nodes[4096], n = 0, used[64] = {0}, changes = 0, distinct = 0, absent = 0;
        page_nodes(p, bytes, nodes, &n);
        for (int i = 0; i < n; ++i) {
            if (nodes[i] < 0 || nodes[i] >= 64) {
                ++absent;
                continue;
            }
            distinct += used[nodes[i]]++ == 0;
            changes += i > 0 && nodes[i] != nodes[i - 1];
        }
        int lo = n, hi = 0;
        for (int d = 0; d < 64; ++d)
            if (used[d]) {
                lo = used[d] < lo ? used[d] : lo;
                hi = used[d] > hi ? used[d] : hi;
            }
        const int good = absent == 0 && distinct >= 2 &&
                         (k == 2 ? changes == n - 1 && hi - lo <= 1 : changes == distinct - 1 && hi - lo <= 2);
        printf("@@ allocplace %s: %d pages on %d nodes, %d node changes, %d to %d pages a node: %s\n", names[k], n,
               distinct, changes, lo, hi, good ? "as planned" : "NOT as planned");
        ok &= good;
        omp_free(p, a[k]);
    }
    for (int k = 0; k < 4; ++k) omp_destroy_allocator(a[k]);
    return !ok;
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "pinned") == 0) return pinned();
    if (argc > 1 && strcmp(argv[1], "placement") == 0) return placement();

    /* Predefined allocators, every one usable (high_bw falls back to default memory without HBM). */
    const omp_allocator_handle_t predefined[] = {omp_default_mem_alloc, omp_large_cap_mem_alloc, omp_const_mem_alloc,
                                                 omp_high_bw_mem_alloc, omp_low_lat_mem_alloc, omp_cgroup_mem_alloc,
                                                 omp_pteam_mem_alloc,  omp_thread_mem_alloc};
    int usable = 0;
    for (int i = 0; i < 8; ++i) {
        unsigned char* p = omp_alloc(1000, predefined[i]);
        if (p) {
            memset(p, 7, 1000);
            usable += filled(p, 1000, 7) && aligned(p, 8);
            omp_free(p, predefined[i]);
        }
    }
    printf("predefined allocators usable: %d of 8\n", usable);
    printf("zero bytes: %s\n", omp_alloc(0, omp_default_mem_alloc) == NULL ? "NULL" : "a block");

    void* big = omp_aligned_alloc(4096, 10000, omp_default_mem_alloc);
    printf("aligned_alloc(4096): %d\n", big != NULL && aligned(big, 4096));
    omp_free(big, omp_default_mem_alloc);

    /* A user-made allocator: alignment, and as the default allocator. */
    const omp_alloctrait_t align128[] = {{omp_atk_alignment, 128}};
    omp_allocator_handle_t a128 = omp_init_allocator(omp_default_mem_space, 1, align128);
    printf("alignment-128 allocator made: %d\n", a128 != omp_null_allocator);
    int all_aligned = 1;
    for (int i = 1; i < 50; ++i) {
        void* p = omp_alloc((size_t)i * 13, a128);
        all_aligned &= p != NULL && aligned(p, 128);
        omp_free(p, a128);
    }
    printf("its blocks aligned to 128: %d\n", all_aligned);
    const omp_allocator_handle_t before = omp_get_default_allocator();
    omp_set_default_allocator(a128);
    void* d = omp_alloc(24, omp_null_allocator);
    printf("default allocator was omp_default_mem_alloc: %d, is now the new one: %d, serves null: %d\n",
           before == omp_default_mem_alloc, omp_get_default_allocator() == a128, d != NULL && aligned(d, 128));
    omp_free(d, omp_null_allocator);
    omp_set_default_allocator(omp_default_mem_alloc);

    /* Refused traits: the null allocator. */
    const omp_alloctrait_t bad_align[] = {{omp_atk_alignment, 48}};
    printf("alignment 48 refused: %d\n", omp_init_allocator(omp_default_mem_space, 1, bad_align) == omp_null_allocator);

    /* A pool of 4096 bytes with each fallback. */
    const omp_alloctrait_t pool_null[] = {{omp_atk_pool_size, 4096}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t pn = omp_init_allocator(omp_default_mem_space, 2, pool_null);
    void* x = omp_alloc(3000, pn);
    void* y = omp_alloc(3000, pn);
    printf("pool 4096, null_fb: first 3000 %s, second %s", x ? "ok" : "NULL", y ? "ok" : "NULL");
    omp_free(x, pn);
    y = omp_alloc(3000, pn);
    printf(", after a free %s\n", y ? "ok" : "NULL");
    omp_free(y, pn);
    const omp_alloctrait_t pool_default[] = {{omp_atk_pool_size, 1024}};
    omp_allocator_handle_t pd = omp_init_allocator(omp_default_mem_space, 1, pool_default);
    void* z = omp_alloc(2000, pd);
    printf("pool 1024, default_mem_fb: 2000 bytes %s\n", z ? "ok" : "NULL");
    omp_free(z, pd);
    const omp_alloctrait_t pool_fb[] = {{omp_atk_pool_size, 1},
                                        {omp_atk_fallback, omp_atv_allocator_fb},
                                        {omp_atk_fb_data, (omp_uintptr_t)a128}};
    omp_allocator_handle_t pf = omp_init_allocator(omp_default_mem_space, 3, pool_fb);
    void* w = omp_alloc(100, pf);
    printf("pool 1, allocator_fb to the aligned one: %d\n", w != NULL && aligned(w, 128));
    omp_free(w, pf);

    /* calloc and realloc. */
    unsigned char* c = omp_calloc(1000, 3, omp_default_mem_alloc);
    printf("calloc zeroed: %d\n", c != NULL && filled(c, 3000, 0));
    memset(c, 9, 3000);
    c = omp_realloc(c, 100000, omp_default_mem_alloc, omp_default_mem_alloc);
    printf("realloc kept the contents: %d\n", c != NULL && filled(c, 3000, 9));
    c = omp_realloc(c, 10, a128, omp_default_mem_alloc);
    printf("realloc to another allocator: %d\n", c != NULL && filled(c, 10, 9) && aligned(c, 128));
    printf("realloc to 0 bytes: %s\n", omp_realloc(c, 0, omp_null_allocator, a128) == NULL ? "NULL" : "a block");
    volatile size_t huge = SIZE_MAX / 2; /* n * size overflows */
    printf("calloc overflow: %s\n", omp_calloc(huge, 3, omp_default_mem_alloc) == NULL ? "NULL" : "a block");

    /* The partition trait, each value, in parallel. */
    const omp_uintptr_t parts[] = {omp_atv_environment, omp_atv_nearest, omp_atv_blocked, omp_atv_interleaved};
    for (int k = 0; k < 4; ++k) {
        const omp_alloctrait_t t[] = {{omp_atk_partition, parts[k]}};
        omp_allocator_handle_t pa = omp_init_allocator(omp_default_mem_space, 1, t);
        int ok = pa != omp_null_allocator;
#pragma omp parallel num_threads(2) reduction(&& : ok)
        {
            unsigned char* p = omp_alloc(1 << 20, pa);
            ok = p != NULL;
            if (p) {
                memset(p, 3, 1 << 20);
                ok = filled(p, 1 << 20, 3);
                omp_free(p, pa);
            }
        }
        omp_destroy_allocator(pa);
        printf("partition %d: %d\n", k, ok);
    }

    /* The allocate clause: private copies from an allocator. */
    int v = 5, good = 1;
#pragma omp parallel num_threads(2) firstprivate(v) allocate(a128 : v) reduction(&& : good)
    good = v == 5 && aligned(&v, 128);
    printf("allocate clause: %d\n", good);

    omp_destroy_allocator(pn);
    omp_destroy_allocator(pd);
    omp_destroy_allocator(pf);
    omp_destroy_allocator(a128);
    return 0;
}
