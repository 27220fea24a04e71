// capi/balancing.cpp — C wrappers over numaware/balancing.hpp.
#include <limits>
#include <string>

#include "capi/capi_util.hpp"
#include "numaware/balancing.hpp"
#include "numaware/c/balancing.h"

using numaware::BalancingState;
using numaware::Error;
using numaware::capi::guarded;
using numaware::capi::require;

extern "C" {

int nw_balancing_get(int* state) {
    return guarded([&] {
        require(state, "state");
        *state = static_cast<int>(numaware::balancing_state());
        return 0;
    });
}

int nw_balancing_set(int state) {
    return guarded([&] {
        if (state < NW_BALANCING_OFF || state > NW_BALANCING_NORMAL_AND_MEMORY_TIERING)
            throw Error("state", std::to_string(state) + " is not a NUMA balancing state (expected 0-3: off, "
                                                         "normal, memory-tiering, normal+memory-tiering)");
        numaware::set_balancing_state(static_cast<BalancingState>(state));
        return 0;
    });
}

int nw_balancing_exempt_ranges(pid_t pid, uintptr_t* starts, int* bound, size_t capacity) {
    return guarded([&] {
        if (capacity != 0) require(starts, "starts");
        const auto ranges = numaware::balancing_exempt_ranges(pid);
        if (ranges.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
            throw Error("exempt ranges", "too many to count in an int", EOVERFLOW);
        for (std::size_t i = 0; i < ranges.size() && i < capacity; ++i) {
            starts[i] = ranges[i].address;
            if (bound != nullptr) bound[i] = ranges[i].bound ? 1 : 0;
        }
        return static_cast<int>(ranges.size());
    });
}

}  // extern "C"
