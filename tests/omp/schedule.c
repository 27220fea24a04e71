/* run-sched-var: what omp_get_schedule reports after OMP_SCHEDULE and
 * after omp_set_schedule, and which thread runs each iteration of a
 * schedule(runtime) loop where the schedule fixes it (static, static with
 * a chunk, auto). The suite runs it under libgomp and the shim, with the
 * default environment and under several OMP_SCHEDULE values, and compares
 * the output byte for byte. */
#include <omp.h>
#include <stdio.h>

static void show(const char* what) {
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    printf("%s: kind %d%s chunk %d\n", what, (int)kind & 0x7fffffff, ((unsigned)kind & 0x80000000u) ? " monotonic" : "",
           chunk);
}

/* Iterations of a runtime-scheduled loop, by thread, where the schedule
 * decides them (dynamic and guided do not). */
static void owners(const char* what) {
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    const int k = (int)kind & 0x7fffffff;
    if (k != omp_sched_static && k != omp_sched_auto) return;
    int owner[40];
#pragma omp parallel for schedule(runtime)
    for (int i = 0; i < 40; ++i) owner[i] = omp_get_thread_num();
    printf("%s: owners", what);
    for (int i = 0; i < 40; ++i) printf(" %d", owner[i]);
    printf("\n");
}

int main(void) {
    show("environment");
    owners("environment");
    const struct {
        omp_sched_t kind;
        int chunk;
    } sets[] = {{omp_sched_dynamic, 0}, {omp_sched_guided, -3}, {omp_sched_static, 0}, {omp_sched_static, 3},
                {omp_sched_auto, 5}, {omp_sched_dynamic, 7}, {(omp_sched_t)(omp_sched_static | omp_sched_monotonic), 2}};
    for (unsigned i = 0; i < sizeof sets / sizeof sets[0]; ++i) {
        char what[64];
        snprintf(what, sizeof what, "set(%d, %d)", (int)sets[i].kind, sets[i].chunk);
        omp_set_schedule(sets[i].kind, sets[i].chunk);
        show(what);
        owners(what);
    }
    return 0;
}
