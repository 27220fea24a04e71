// apps/integral_histogram/reference.cpp — the serial reference of the
// integral histogram: one pass over the whole image with the
// inclusion-exclusion recurrence, independent of the tiled scans.
#include "apps/integral_histogram/reference.hpp"

namespace numaware::apps::integral_histogram {

std::vector<std::uint32_t> reference(std::size_t n, std::size_t bins) {
    const std::size_t B = bins;
    std::vector<std::uint32_t> ref(n * n * B);
    for (std::size_t y = 0; y < n; ++y) {
        for (std::size_t x = 0; x < n; ++x) {
            std::uint32_t* cell = &ref[(y * n + x) * B];
            const std::uint32_t* up = y > 0 ? &ref[((y - 1) * n + x) * B] : nullptr;
            const std::uint32_t* left = x > 0 ? &ref[(y * n + x - 1) * B] : nullptr;
            const std::uint32_t* diag = (y > 0 && x > 0) ? &ref[((y - 1) * n + x - 1) * B] : nullptr;
            for (std::size_t b = 0; b < B; ++b) {
                cell[b] = (up ? up[b] : 0) + (left ? left[b] : 0) - (diag ? diag[b] : 0);
            }
            ++cell[bin_of(pixel(y, x), B)];
        }
    }
    return ref;
}

}  // namespace numaware::apps::integral_histogram
