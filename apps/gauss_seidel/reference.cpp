// apps/gauss_seidel/reference.cpp — the serial reference of the Gauss-Seidel
// application, written out independently of the task kernels.
#include "apps/gauss_seidel/reference.hpp"

#include "apps/common/stencil_kernels.hpp"

namespace numaware::apps::gauss_seidel {

// natural row-major Gauss-Seidel on a row-major grid.
std::vector<double> reference(std::size_t n, unsigned iterations) {
    std::vector<double> u(n * n);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) u[r * n + c] = kernels::initial_value(r, c, n);
    for (unsigned t = 0; t < iterations; ++t)
        for (std::size_t r = 1; r + 1 < n; ++r)
            for (std::size_t c = 1; c + 1 < n; ++c)
                u[r * n + c] =
                    0.25 * (((u[(r - 1) * n + c] + u[(r + 1) * n + c]) + u[r * n + c - 1]) + u[r * n + c + 1]);
    return u;
}

}  // namespace numaware::apps::gauss_seidel
