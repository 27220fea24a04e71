// capi/deprecated.cpp — the C names of numaware 0.1 that broke
// nw_<object>_<verb>, kept for one release.
//
// Each is a real exported function that forwards to its new name, so
// programs built against 0.1 keep linking and running; the headers mark
// them deprecated so new code is told the replacement. Delete this file
// (and the declarations after "The 0.1 names") in the next release.
#include "numaware/numaware.h"

extern "C" {

const char* nw_last_error(void) { return nw_error_message(); }

int nw_place(void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out) {
    return nw_range_place(addr, bytes, policy_spec, out);
}

int nw_place_verify(const void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out) {
    return nw_range_verify(addr, bytes, policy_spec, out);
}

int nw_place_migrate(void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out) {
    return nw_range_migrate(addr, bytes, policy_spec, out);
}

long nw_place_plan(const nw_machine_t* machine, const void* addr, size_t bytes, const char* policy_spec, int cpu,
                   int* page_nodes, size_t capacity) {
    return nw_range_plan(machine, addr, bytes, policy_spec, cpu, page_nodes, capacity);
}

int nw_place_process(const char* policy_spec) { return nw_thread_set_mempolicy(policy_spec); }

int nw_spawn(nw_runtime_t* rt, void (*fn)(void* arg), void* arg, const struct nw_dep* deps, size_t ndeps) {
    return nw_task_spawn(rt, fn, arg, deps, ndeps);
}

int nw_spawn_on(nw_runtime_t* rt, unsigned node, void (*fn)(void* arg), void* arg, const struct nw_dep* deps,
                size_t ndeps) {
    return nw_task_spawn_on(rt, node, fn, arg, deps, ndeps);
}

int nw_taskwait(nw_runtime_t* rt) { return nw_task_wait(rt); }

int nw_barrier(nw_runtime_t* rt) { return nw_runtime_barrier(rt); }

int nw_register_region(nw_runtime_t* rt, const void* addr, size_t bytes, unsigned node) {
    return nw_runtime_register_region(rt, addr, bytes, node);
}

}  // extern "C"
