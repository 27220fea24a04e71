// os/hex.hpp — addresses and flag words in messages: "0x7f12a000".
//
// Here, in the lowest layer that prints them (the recording fake's call
// log), so that placement's errors and the CLI print them the same way.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

namespace numaware::os {

inline std::string hex(std::uintptr_t value) {
    char buf[2 + 2 * sizeof value + 1];
    std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, value);
    return buf;
}

}  // namespace numaware::os
