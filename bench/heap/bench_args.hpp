// bench/heap/bench_args.hpp — argument checks shared by the heap benchmarks.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>

namespace bench {

// A positive integer no larger than `max`; otherwise `fail` (which does not
// return) is called with a message naming the flag, the limit and the text.
template <class Fail>
unsigned long long parse_positive(std::string_view flag, const char* text, unsigned long long max, Fail fail) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v == 0 || v > max)
        fail(std::string(flag) + " must be an integer in 1.." + std::to_string(max) + ", got '" + text + "'");
    return v;
}

}  // namespace bench
