// numaware/mempolicy.hpp — the kernel's memory-policy modes, named once.
//
// The placement layer plans in these modes and the os layer passes them to
// mbind/set_mempolicy unchanged, so the values are linux/mempolicy.h's.
#pragma once

#include <string>

namespace numaware {

enum class MemoryPolicyMode : int {
    default_ = 0,
    preferred = 1,
    bind = 2,
    interleave = 3,
    local = 4,
    preferred_many = 5,
    weighted_interleave = 6,   // Linux 6.9 and later
};

// "bind", "preferred_many", "weighted_interleave"; "mode<N>" for a value
// outside the enum (a newer kernel's, read back by get_mempolicy).
std::string to_string(MemoryPolicyMode mode);

}  // namespace numaware
