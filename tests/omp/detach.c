/* tests/omp/detach.c — the detach clause (OpenMP 5.0) and omp_fulfill_event:
 * a detached task completes when its body has ended and its event is
 * fulfilled, whichever comes last; until then its dependent tasks wait, and
 * so do taskwait, taskgroup and the barrier.
 *   (no argument)  fulfilled by the creator after the body, before the body
 *                  has started, and by another task; deterministic, the
 *                  suite compares the output with libgomp's at 1-4 threads;
 *   outside        fulfilled by a thread outside OpenMP after the creator
 *                  reached a taskgroup's end, a region's end and an if(0)
 *                  task's end, which must each wait for it; and a detached
 *                  task in a nested region of one thread, fulfilled by its
 *                  creator, between a task's children. GCC 12's
 *                  libgomp hangs or crashes there, so the suite runs this
 *                  part under the shim only and checks its lines. */
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* GCC 12 does not know that GOMP_task writes the event handle through the
 * pointer it passes (the handle variable's address), and warns that a
 * handle read after the task construct may be uninitialised. A task with
 * an empty body is dropped by GCC 12, detach clause and all: every
 * detached task here does something. */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

static void pause_ms(int ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

static int in_team(void) {
    int y = 0, z = 0, gate = 0, early = 0, w = 0;
    atomic_int fulfilled = 0, fulfilled_by_task = 0;
#pragma omp parallel
#pragma omp single
    {
        /* Fulfilled by the creator after the body (or before it, with one
         * thread): the successor runs after the fulfilment. */
        omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out : y) shared(y)
        y = 1;
#pragma omp task depend(in : y) shared(y, z, fulfilled)
        z = y + 10 * atomic_load(&fulfilled);
        pause_ms(20);
        atomic_store(&fulfilled, 1);
        omp_fulfill_event(ev);
#pragma omp taskwait
        printf("successor after the fulfilment: z = %d\n", z);

        /* Fulfilled before its body can start (it waits for a slow task). */
        omp_event_handle_t ev2;
#pragma omp task depend(out : gate) shared(gate)
        {
            pause_ms(20);
            gate = 1;
        }
#pragma omp task detach(ev2) depend(in : gate) shared(gate, early)
        early = gate;
        omp_fulfill_event(ev2);
#pragma omp taskwait
        printf("fulfilled before the body: body saw gate %d\n", early);

        /* Fulfilled by another task, late: the successor waits for it. */
        omp_event_handle_t ev3;
#pragma omp task detach(ev3) depend(out : w) shared(w)
        w = 1;
#pragma omp task firstprivate(ev3) shared(fulfilled_by_task)
        {
            pause_ms(20);
            atomic_store(&fulfilled_by_task, 1);
            omp_fulfill_event(ev3);
        }
#pragma omp task depend(in : w) shared(w, fulfilled_by_task)
        w = 100 * atomic_load(&fulfilled_by_task) + w;
    }
    printf("successor of a task fulfilled by another: w = %d\n", w);
    return 0;
}

/* A thread outside OpenMP that sets *flag and then fulfils the event, 20 ms on. */
struct later {
    omp_event_handle_t ev;
    atomic_int* flag;
};
static void* fulfil_later_main(void* p) {
    struct later* l = p;
    pause_ms(20);
    atomic_store(l->flag, 1);
    omp_fulfill_event(l->ev);
    return NULL;
}
static pthread_t fulfil_later(struct later* l) {
    pthread_t t;
    pthread_create(&t, NULL, fulfil_later_main, l);
    return t;
}

/* Waits until *ev is set, then as fulfil_later. */
struct watch {
    omp_event_handle_t* ev;
    atomic_int* flag;
};
static void* watch_main(void* p) {
    struct watch* w = p;
    while (__atomic_load_n((unsigned long*)w->ev, __ATOMIC_ACQUIRE) == 0) pause_ms(1);
    pause_ms(20);
    atomic_store(w->flag, 1);
    omp_fulfill_event(*w->ev);
    return NULL;
}

static int outside(int watch) {
    int y = 0;   /* written by the detached tasks */
    atomic_int group = 0, region = 0, undeferred = 0;
    struct later lg = {0, &group}, lr = {0, &region}, lu = {0, &undeferred};
    pthread_t tg = 0, tr = 0, tu = 0;
    int k_seen = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
        {
            omp_event_handle_t ev;
#pragma omp task detach(ev) shared(y)
            y = 1;
            lg.ev = ev;
            tg = fulfil_later(&lg);
        }
        printf("taskgroup ended after the fulfilment: %d\n", atomic_load(&group));
        omp_event_handle_t ev2;
#pragma omp task detach(ev2) shared(y)
        y = 2;
        lr.ev = ev2;
        tr = fulfil_later(&lr);
    }
    printf("region ended after the fulfilment: %d\n", atomic_load(&region));
    /* A nested region of one thread inside a task that has made
     * many children and makes more after it: the region's detached task is
     * deferred even in its team of one, so that region's implicit task
     * counts a child too. Afterwards the outer task's taskwait must still
     * wait for every one of its own children. */
    int nested_children = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int k = 0; k < 200; ++k) {
            if (k == 100) {
#pragma omp parallel num_threads(1)
                {
                    omp_event_handle_t ev4;
#pragma omp task detach(ev4) shared(nested_children)
                    {
#pragma omp atomic
                        nested_children += 1000;
                    }
                    omp_fulfill_event(ev4);
#pragma omp taskwait
                }
            }
#pragma omp task shared(nested_children)
            {
                if (k >= 150) pause_ms(1);
#pragma omp atomic
                nested_children++;
            }
        }
#pragma omp taskwait
#pragma omp atomic read
        k_seen = nested_children;
        printf("taskwait after a nested region's detached task: %d of 200 children and %d detached task done\n",
               k_seen % 1000, k_seen / 1000);
    }
    if (!watch) {
        /* The watcher's polling is the program's own (not instrumented), so
         * a sanitizer in the shim cannot see it synchronise. */
        printf("if(0) task: not run (a sanitizer cannot see its watcher synchronise)\n");
    } else {
#pragma omp parallel
#pragma omp single
        {
            /* The creator waits inside the construct, so a thread started
             * before it watches the handle variable that GOMP_task fills. */
            omp_event_handle_t ev3 = (omp_event_handle_t)0;
            struct watch w = {&ev3, &undeferred};
            pthread_create(&tu, NULL, watch_main, &w);
#pragma omp task detach(ev3) if (0) shared(y)
            y = 3;
            printf("if(0) task returned after the fulfilment: %d\n", atomic_load(&undeferred));
            pthread_join(tu, NULL);
        }
    }
    (void)lu;
    pthread_join(tg, NULL);
    pthread_join(tr, NULL);
    return y != (watch ? 3 : 2);   /* the last detached task's write */
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "outside") == 0) return outside(argc < 3 || strcmp(argv[2], "nowatch") != 0);
    return in_team();
}
