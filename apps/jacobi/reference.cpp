// apps/jacobi/reference.cpp — the serial reference of the Jacobi
// application, written out independently of the task kernels.
#include "apps/jacobi/reference.hpp"

#include "apps/common/stencil_kernels.hpp"

namespace numaware::apps::jacobi {

// whole-grid sweeps, written out independently of the
// kernel with the same expression order.
std::vector<double> reference(std::size_t n, unsigned iterations) {
    std::vector<double> a(n * n), b(n * n);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) a[r * n + c] = kernels::initial_value(r, c, n);
    b = a;
    for (unsigned t = 0; t < iterations; ++t) {
        for (std::size_t r = 1; r + 1 < n; ++r)
            for (std::size_t c = 1; c + 1 < n; ++c)
                b[r * n + c] =
                    0.25 * (((a[(r - 1) * n + c] + a[(r + 1) * n + c]) + a[r * n + c - 1]) + a[r * n + c + 1]);
        a.swap(b);
    }
    return a;
}

}  // namespace numaware::apps::jacobi
