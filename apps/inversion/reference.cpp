// apps/inversion/reference.cpp — the serial reference of the tiled
// inversion: LAPACK's own Cholesky factorisation and inverse of the whole
// matrix.
#include "apps/inversion/reference.hpp"

#include <lapacke.h>

#include "apps/common/tiled_matrix.hpp"

namespace numaware::apps::inversion {

std::vector<double> reference(std::size_t n) {
    const int ni = li(n);
    std::vector<double> inv(n * n);
    for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t i = 0; i < n; ++i) inv[j * n + i] = entry(i, j, n);
    }
    check_lapack(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', ni, inv.data(), ni), "dpotrf", "inversion");
    check_lapack(LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', ni, inv.data(), ni), "dpotri", "inversion");
    return inv;
}

}  // namespace numaware::apps::inversion
