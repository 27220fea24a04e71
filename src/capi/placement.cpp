// capi/placement.cpp — the C face of placement: nw_range_place and friends
// wrap parse_policy, plan, apply, verify and migrate.
#include "numaware/c/placement.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "capi/capi_util.hpp"
#include "capi/machine_handle.hpp"
#include "numaware/placement.hpp"
#include "os/os.hpp"

namespace numaware::capi {
namespace {

const Machine& live_machine() {
    // Topology discovery through hwloc is slow; the machine does not change
    // under a running process.
    static const Machine machine = Machine::from_live();
    return machine;
}

void copy_text(char* dst, std::size_t size, const std::string& text) {
    const std::size_t n = std::min(size - 1, text.size());
    std::memcpy(dst, text.data(), n);
    dst[n] = '\0';
}

void fill(nw_place_report* out, const PlacementPlan& p, const PlacementResult& r) {
    if (out == nullptr) return;
    *out = nw_place_report{};
    out->pages = r.pages;
    out->matched = r.matched;
    out->mismatched = r.mismatches.size();
    out->unplaced = r.unplaced.size();
    out->undecided = p.undecided_pages;
    for (const auto& [node, n] : p.intent)
        if (node < NW_PLACE_MAX_NODES) out->intended[node] = n;
    for (const auto& [node, n] : r.actual)
        if (node < NW_PLACE_MAX_NODES) out->actual[node] = n;
    out->unit_bytes = p.unit_bytes;
    out->no_huge_pages = p.no_huge_pages ? 1 : 0;
    copy_text(out->granularity, sizeof out->granularity, p.granularity);
    copy_text(out->realisation, sizeof out->realisation, r.realisation);
}

PlacementPlan plan_for(const void* addr, std::size_t bytes, const char* spec, os::Os& os) {
    require(spec, "policy_spec");
    const Machine& m = live_machine();
    PlanOptions o = plan_options_for(os);
    const int cpu = os.current_cpu();
    if (cpu >= 0) o.thread_cpu = static_cast<unsigned>(cpu);
    return plan(parse_policy(spec, m), addr, bytes, m, o);
}

}  // namespace
}  // namespace numaware::capi

using namespace numaware;

extern "C" int nw_range_place(void* addr, size_t bytes, const char* policy_spec, nw_place_report* out) {
    return capi::guarded([&] {
        os::Os& os = os::linux_os();
        const PlacementPlan p = capi::plan_for(addr, bytes, policy_spec, os);
        const PlacementResult r = apply(addr, bytes, p, os);
        capi::fill(out, p, r);
        return r.ok() ? 0 : 1;
    });
}

extern "C" int nw_range_verify(const void* addr, size_t bytes, const char* policy_spec, nw_place_report* out) {
    return capi::guarded([&] {
        os::Os& os = os::linux_os();
        const PlacementPlan p = capi::plan_for(addr, bytes, policy_spec, os);
        const PlacementResult r = verify(addr, bytes, p, os);
        capi::fill(out, p, r);
        return r.ok() ? 0 : 1;
    });
}

extern "C" int nw_range_migrate(void* addr, size_t bytes, const char* policy_spec, nw_place_report* out) {
    return capi::guarded([&] {
        os::Os& os = os::linux_os();
        const PlacementPlan p = capi::plan_for(addr, bytes, policy_spec, os);
        const PlacementResult r = migrate(addr, bytes, p, os);
        capi::fill(out, p, r);
        return r.ok() ? 0 : 1;
    });
}

extern "C" int nw_range_forget(const void* addr, size_t bytes) {
    return capi::guarded([&] {
        if (bytes > 0) capi::require(addr, "addr");
        if (bytes > std::numeric_limits<std::uintptr_t>::max() - reinterpret_cast<std::uintptr_t>(addr))
            throw Error("bytes", std::to_string(bytes) + " bytes from the address wrap around the address space", EINVAL);
        forget_placement(addr, bytes);
        return 0;
    });
}

extern "C" long nw_range_plan(const nw_machine_t* machine, const void* addr, size_t bytes, const char* policy_spec,
                              int cpu, int* page_nodes, size_t capacity) {
    long pages = -1;
    const int rc = capi::guarded([&] {
        const Machine& m = capi::machine_of(machine);
        capi::require(policy_spec, "policy_spec");
        if (capacity > 0) capi::require(page_nodes, "page_nodes");
        PlanOptions o = plan_options_for(os::linux_os());
        if (cpu >= 0) o.thread_cpu = static_cast<unsigned>(cpu);
        const PlacementPlan p = plan(parse_policy(policy_spec, m), addr, bytes, m, o);
        std::copy_n(p.page_nodes.begin(), std::min(capacity, p.pages()), page_nodes);
        pages = static_cast<long>(std::min<std::size_t>(p.pages(), std::numeric_limits<long>::max()));
        return 0;
    });
    return rc < 0 ? -1 : pages;
}

extern "C" int nw_thread_set_mempolicy(const char* policy_spec) {
    return capi::guarded([&] {
        capi::require(policy_spec, "policy_spec");
        os::Os& os = os::linux_os();
        const Machine& m = capi::live_machine();
        PlanOptions o = plan_options_for(os);
        const int cpu = os.current_cpu();
        if (cpu >= 0) o.thread_cpu = static_cast<unsigned>(cpu);
        apply_process_policy(parse_policy(policy_spec, m), m, o, os);
        return 0;
    });
}
