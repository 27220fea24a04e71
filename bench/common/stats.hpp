// bench/common/stats.hpp — the summary statistics every benchmark reports,
// in one place.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace numaware::bench {

// The median of `v`: the middle value, or the mean of the two middle ones
// for an even count; 0 for none.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 != 0 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace numaware::bench
