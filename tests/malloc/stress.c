/* stress.c — the drop-in malloc under the patterns that break allocators
 * (issue 17), each checking its own results. Run under
 * LD_PRELOAD=libnumaware_malloc.so by stress_check.sh, which first proves
 * the library is mapped; every check prints one line, and the exit status
 * is the number of failed checks.
 *
 *   edges      malloc(0), malloc(SIZE_MAX), calloc and reallocarray
 *              overflow (NULL, ENOMEM, the block untouched), realloc(NULL, n),
 *              malloc_usable_size >= the request at sizes 1 B .. 8 MiB
 *   alignment  posix_memalign, aligned_alloc and memalign at every power of
 *              two from sizeof(void *) to 1 MiB, four sizes each; EINVAL for
 *              alignments that are not a power of two or below sizeof(void *)
 *   calloc     zeroed after the same sizes were dirtied and freed (1 B ..
 *              64 MiB)
 *   realloc    a storm across size classes (1 B .. 1 MiB) keeping contents
 *   larson     4 threads replacing random blocks of a shared table, each
 *              freed by whichever thread replaces it; contents verified
 *   neighbours two threads incrementing neighbouring 8-byte blocks
 *   fork       fork()s while two threads allocate; the children allocate
 *              and exit (a deadlock is a failure, after 10 s)
 *   exit       blocks of exited threads freed and reused by the main thread
 *   release    256 MiB in 1 MiB blocks freed: the resident set falls back
 *              after the decay period, and at once after malloc_trim(0)
 *
 * Built with STRESS_SHIM_PREFIXED (the asan and tsan presets), the same
 * checks call the shim compiled into this program, with its entry points
 * named nw_shim_malloc, ... (src/malloc/malloc_shim.cpp), since under a
 * sanitizer the sanitizer's malloc must stay in place. Every allocation,
 * free and block access of the checks, and the shim and engine beneath
 * them, is then instrumented.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef STRESS_SHIM_PREFIXED
void* nw_shim_malloc(size_t);
void nw_shim_free(void*);
void* nw_shim_calloc(size_t, size_t);
void* nw_shim_realloc(void*, size_t);
void* nw_shim_reallocarray(void*, size_t, size_t);
int nw_shim_posix_memalign(void**, size_t, size_t);
void* nw_shim_aligned_alloc(size_t, size_t);
void* nw_shim_memalign(size_t, size_t);
size_t nw_shim_malloc_usable_size(void*);
int nw_shim_malloc_trim(size_t);
#define malloc nw_shim_malloc
#define free nw_shim_free
#define calloc nw_shim_calloc
#define realloc nw_shim_realloc
#define reallocarray nw_shim_reallocarray
#define posix_memalign nw_shim_posix_memalign
#define aligned_alloc nw_shim_aligned_alloc
#define memalign nw_shim_memalign
#define malloc_usable_size nw_shim_malloc_usable_size
#define malloc_trim nw_shim_malloc_trim
#endif

static int failures;

#define CHECK(name, cond, ...)                                   \
    do {                                                         \
        if (!(cond)) {                                           \
            printf("FAIL %s: ", name);                           \
            printf(__VA_ARGS__);                                 \
            printf("\n");                                        \
            return 1;                                            \
        }                                                        \
    } while (0)

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(uint64_t* s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int edges(void) {
    void* z = malloc(0);
    void* z2 = malloc(0);
    CHECK("edges", z == NULL || z != z2, "two malloc(0) returned the same pointer %p", z);
    free(z);
    free(z2);
    /* Through a volatile, so that the compiler does not refuse the call. */
    volatile size_t huge = SIZE_MAX;
    errno = 0;
    CHECK("edges", malloc(huge) == NULL && errno == ENOMEM, "malloc(SIZE_MAX) did not fail with ENOMEM");
    errno = 0;
    CHECK("edges", calloc(huge / 2, 3) == NULL && errno == ENOMEM, "calloc overflow did not fail with ENOMEM");
    char* p = malloc(64);
    CHECK("edges", p != NULL, "malloc(64) failed");
    memset(p, 0x5a, 64);
    errno = 0;
    CHECK("edges", reallocarray(p, huge / 4, 8) == NULL && errno == ENOMEM,
          "reallocarray overflow did not fail with ENOMEM");
    for (int i = 0; i < 64; ++i) CHECK("edges", p[i] == 0x5a, "reallocarray's failure changed byte %d", i);
    free(p);
    p = realloc(NULL, 100);
    CHECK("edges", p != NULL && malloc_usable_size(p) >= 100, "realloc(NULL, 100) is not malloc(100)");
    free(p);
    for (size_t n = 1; n <= (size_t)8 << 20; n = n * 3 / 2 + 1) {
        p = malloc(n);
        CHECK("edges", p != NULL, "malloc(%zu) failed", n);
        CHECK("edges", malloc_usable_size(p) >= n, "malloc_usable_size %zu < %zu", malloc_usable_size(p), n);
        p[0] = 1;
        p[n - 1] = 2;
        free(p);
    }
    CHECK("edges", malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL) != 0");
    printf("ok edges\n");
    return 0;
}

static int alignment(void) {
    unsigned checked = 0;
    for (size_t a = sizeof(void*); a <= (size_t)1 << 20; a *= 2) {
        const size_t sizes[4] = {1, a - 1, a, 3 * a + 5};
        for (int k = 0; k < 4; ++k) {
            const size_t n = sizes[k] == 0 ? 1 : sizes[k];
            void* p = NULL;
            CHECK("alignment", posix_memalign(&p, a, n) == 0 && p != NULL, "posix_memalign(%zu, %zu) failed", a, n);
            CHECK("alignment", ((uintptr_t)p & (a - 1)) == 0, "posix_memalign(%zu) gave %p", a, p);
            CHECK("alignment", malloc_usable_size(p) >= n, "usable %zu < %zu", malloc_usable_size(p), n);
            memset(p, 0x33, n);
            free(p);
            p = aligned_alloc(a, (n + a - 1) / a * a);
            CHECK("alignment", p != NULL && ((uintptr_t)p & (a - 1)) == 0, "aligned_alloc(%zu) gave %p", a, p);
            free(p);
            p = memalign(a, n);
            CHECK("alignment", p != NULL && ((uintptr_t)p & (a - 1)) == 0, "memalign(%zu) gave %p", a, p);
            free(p);
            ++checked;
        }
    }
    void* p = NULL;
    CHECK("alignment", posix_memalign(&p, 24, 10) == EINVAL, "posix_memalign(24) did not return EINVAL");
    CHECK("alignment", posix_memalign(&p, sizeof(void*) / 2, 10) == EINVAL,
          "posix_memalign(sizeof(void *) / 2) did not return EINVAL");
    printf("ok alignment (%u alignment and size pairs, three functions each)\n", checked);
    return 0;
}

static int calloc_zero(void) {
    for (size_t n = 1; n <= (size_t)64 << 20; n *= 4) {
        for (int round = 0; round < 3; ++round) {
            unsigned char* d = malloc(n);
            CHECK("calloc", d != NULL, "malloc(%zu) failed", n);
            memset(d, 0xff, n);
            free(d);
            unsigned char* c = calloc(1, n);
            CHECK("calloc", c != NULL, "calloc(%zu) failed", n);
            for (size_t i = 0; i < n; i += (n > 4096 ? 61 : 1))
                CHECK("calloc", c[i] == 0, "calloc(%zu) byte %zu is %u", n, i, c[i]);
            CHECK("calloc", c[n - 1] == 0, "calloc(%zu) last byte is %u", n, c[n - 1]);
            free(c);
        }
    }
    printf("ok calloc\n");
    return 0;
}

static int realloc_storm(void) {
    uint64_t s = rng_state;
    size_t size = 16;
    unsigned char* p = malloc(size);
    CHECK("realloc", p != NULL, "malloc failed");
    for (size_t i = 0; i < size; ++i) p[i] = (unsigned char)(i * 7);
    for (int step = 0; step < 20000; ++step) {
        const size_t next = 1 + rng(&s) % (step % 100 == 0 ? ((size_t)1 << 20) : 4096);
        unsigned char* q = realloc(p, next);
        CHECK("realloc", q != NULL, "realloc to %zu failed", next);
        const size_t keep = size < next ? size : next;
        for (size_t i = 0; i < keep; i += (keep > 4096 ? 97 : 1))
            CHECK("realloc", q[i] == (unsigned char)(i * 7), "step %d: byte %zu lost (%zu -> %zu)", step, i, size, next);
        for (size_t i = keep; i < next; ++i) q[i] = (unsigned char)(i * 7);
        p = q;
        size = next;
    }
    free(p);
    printf("ok realloc (20000 steps)\n");
    return 0;
}

/* larson: a shared table; a replaced block is freed by the replacing thread. */
enum { slots = 4096, larson_threads = 4, larson_rounds = 200000 };
static _Atomic(uintptr_t) table[slots];
static atomic_int larson_bad;

static uintptr_t make_block(uint64_t* s) {
    const size_t n = 16 + rng(s) % 4081;   /* the signature, then at least 8 pattern bytes */
    unsigned char* b = malloc(n);
    if (b == NULL) return 0;
    memcpy(b, &n, sizeof n);   /* a signature the freer checks */
    memset(b + sizeof n, (int)(n & 0xff), n - sizeof n);
    return (uintptr_t)b;
}

static void* larson_thread(void* arg) {
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(uintptr_t)arg + 1;
    for (int i = 0; i < larson_rounds; ++i) {
        const uintptr_t fresh = make_block(&s);
        if (fresh == 0) {
            atomic_fetch_add(&larson_bad, 1);
            continue;
        }
        const uintptr_t old = atomic_exchange(&table[rng(&s) % slots], fresh);
        if (old == 0) continue;
        unsigned char* b = (unsigned char*)old;
        size_t n;
        memcpy(&n, b, sizeof n);
        if (n < 16 || n > 4096 || b[n - 1] != (unsigned char)(n & 0xff)) atomic_fetch_add(&larson_bad, 1);
        free(b);
    }
    return NULL;
}

static int larson(void) {
    pthread_t t[larson_threads];
    for (uintptr_t i = 0; i < larson_threads; ++i) pthread_create(&t[i], NULL, larson_thread, (void*)(i + 1));
    for (int i = 0; i < larson_threads; ++i) pthread_join(t[i], NULL);
    for (int i = 0; i < slots; ++i) free((void*)atomic_load(&table[i]));
    CHECK("larson", atomic_load(&larson_bad) == 0, "%d blocks were corrupted or not allocated",
          atomic_load(&larson_bad));
    printf("ok larson (%d threads x %d replacements, cross-thread frees)\n", larson_threads, larson_rounds);
    return 0;
}

static void* bump(void* arg) {
    volatile uint64_t* v = arg;
    for (int i = 0; i < 2000000; ++i) *v = *v + 1;
    return NULL;
}

static int neighbours(void) {
    uint64_t* a = malloc(8);
    uint64_t* b = malloc(8);
    CHECK("neighbours", a != NULL && b != NULL, "malloc(8) failed");
    *a = *b = 0;
    pthread_t ta, tb;
    pthread_create(&ta, NULL, bump, a);
    pthread_create(&tb, NULL, bump, b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK("neighbours", *a == 2000000 && *b == 2000000, "counts %lu and %lu", (unsigned long)*a, (unsigned long)*b);
    printf("ok neighbours (blocks %td bytes apart)\n", (char*)b - (char*)a);
    free(a);
    free(b);
    return 0;
}

static atomic_int stop_churn;
static void* churn(void* arg) {
    uint64_t s = (uint64_t)(uintptr_t)arg * 77 + 3;
    void* keep[64] = {0};
    while (!atomic_load(&stop_churn)) {
        const unsigned i = (unsigned)(rng(&s) % 64);
        free(keep[i]);
        keep[i] = malloc(1 + rng(&s) % 70000);
    }
    for (int i = 0; i < 64; ++i) free(keep[i]);
    return NULL;
}

static int fork_while_allocating(void) {
    pthread_t t[2];
    for (uintptr_t i = 0; i < 2; ++i) pthread_create(&t[i], NULL, churn, (void*)(i + 1));
    int bad = 0;
    for (int k = 0; k < 30; ++k) {
        const pid_t pid = fork();
        if (pid == 0) {
            alarm(10);   /* a deadlocked child dies of SIGALRM */
            for (int i = 0; i < 1000; ++i) free(malloc((size_t)(i * 37 % 9000) + 1));
            _exit(0);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++bad;
    }
    atomic_store(&stop_churn, 1);
    for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
    CHECK("fork", bad == 0, "%d of 30 children did not exit cleanly (deadlock or crash)", bad);
    printf("ok fork (30 children while 2 threads allocate)\n");
    return 0;
}

static void* leave_blocks(void* arg) {
    void** out = arg;
    for (int i = 0; i < 1000; ++i) {
        out[i] = malloc((size_t)(i % 200) * 16 + 8);
        if (out[i] != NULL) memset(out[i], i & 0xff, 8);
    }
    return NULL;
}

static int thread_exit(void) {
    static void* blocks[8][1000];
    for (int round = 0; round < 8; ++round) {
        pthread_t t;
        pthread_create(&t, NULL, leave_blocks, blocks[round]);
        pthread_join(t, NULL);
    }
    for (int round = 0; round < 8; ++round)
        for (int i = 0; i < 1000; ++i) {
            unsigned char* b = blocks[round][i];
            CHECK("exit", b != NULL && b[0] == (unsigned char)(i & 0xff), "block %d of exited thread %d", i, round);
            free(b);
        }
    for (int i = 0; i < 8000; ++i) free(malloc(64));
    printf("ok exit (8 threads' 8000 blocks freed after they exited)\n");
    return 0;
}

static long resident_kib(void) {
    FILE* f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f == NULL) return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int release(void) {
    enum { count = 256 };
    static void* b[count];
    /* What earlier checks left cached goes first, so the growth is this check's own. */
    malloc_trim(0);
    const long before = resident_kib();
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < count; ++i) {
            b[i] = malloc((size_t)1 << 20);
            CHECK("release", b[i] != NULL, "malloc(1 MiB) failed");
            memset(b[i], 1, (size_t)1 << 20);
        }
        const long peak = resident_kib();
        for (int i = 0; i < count; ++i) free(b[i]);
        CHECK("release", peak - before >= 200 * 1024, "round %d: the peak grew by %ld KiB only", round, peak - before);
        const char* how;
        if (round == 0) {
            /* Freed large blocks stay cached for the decay period (1 s); the
             * next large call after it gives them back. */
            usleep(1200 * 1000);
            void* volatile probe = malloc((size_t)1 << 20);   /* volatile: the pair is not optimised away */
            free(probe);
            how = "after the decay period";
        } else {
            CHECK("release", malloc_trim(0) == 1, "malloc_trim(0) released nothing after 256 MiB were freed");
            how = "after malloc_trim(0)";
        }
        const long after = resident_kib();
        CHECK("release", after - before <= 64 * 1024, "%ld KiB of 256 MiB freed are still resident %s", after - before,
              how);
        printf("ok release %s (resident %ld -> %ld -> %ld KiB)\n", how, before, peak, after);
    }
    return 0;
}

/* The library named by STRESS_EXPECT_LIBRARY must be mapped here: a run
 * that silently fell back to glibc's malloc fails. */
static int library_mapped(void) {
    const char* lib = getenv("STRESS_EXPECT_LIBRARY");
    if (lib == NULL) return 1;
    FILE* f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) found |= strstr(line, lib) != NULL;
    if (f != NULL) fclose(f);
    if (!found) printf("FAIL setup: %s is not mapped in this process\n", lib);
    return found;
}

int main(int argc, char** argv) {
    if (!library_mapped()) return 1;
    struct {
        const char* name;
        int (*run)(void);
    } checks[] = {{"edges", edges},       {"alignment", alignment},        {"calloc", calloc_zero},
                  {"realloc", realloc_storm}, {"larson", larson},           {"neighbours", neighbours},
                  {"fork", fork_while_allocating}, {"exit", thread_exit}, {"release", release}};
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; ++i) {
        int wanted = argc < 2;
        for (int a = 1; a < argc; ++a) wanted |= strcmp(argv[a], checks[i].name) == 0;
        if (wanted) failures += checks[i].run();
    }
    return failures;
}
