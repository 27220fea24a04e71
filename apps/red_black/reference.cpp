// apps/red_black/reference.cpp — the serial reference of the red-black
// Gauss-Seidel application, written out independently of the task kernels:
// a plain row-major grid, red points first, then black ones.
#include "apps/red_black/reference.hpp"

#include "apps/common/stencil_kernels.hpp"

namespace numaware::apps::red_black {

std::vector<double> reference(std::size_t n, unsigned iterations) {
    std::vector<double> u(n * n);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) u[r * n + c] = kernels::initial_value(r, c, n);
    for (unsigned t = 0; t < iterations; ++t)
        for (std::size_t colour = 0; colour < 2; ++colour)
            for (std::size_t r = 1; r + 1 < n; ++r)
                for (std::size_t c = 1; c + 1 < n; ++c)
                    if ((r + c) % 2 == colour)
                        u[r * n + c] = 0.25 * (((u[(r - 1) * n + c] + u[(r + 1) * n + c]) + u[r * n + c - 1]) +
                                               u[r * n + c + 1]);
    return u;
}

}  // namespace numaware::apps::red_black
