// apps/qr/reference.cpp — the serial reference of the tiled QR: LAPACK's
// own unblocked-order factorisation of the whole matrix.
#include "apps/qr/reference.hpp"

#include <lapacke.h>

#include "apps/common/tiled_matrix.hpp"

namespace numaware::apps::qr {

std::vector<double> reference(std::size_t n) {
    std::vector<double> r(n * n), tau(n);
    for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t i = 0; i < n; ++i) r[j * n + i] = entry(i, j);
    }
    check_lapack(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, li(n), li(n), r.data(), li(n), tau.data()), "dgeqrf", "qr");
    return r;
}

}  // namespace numaware::apps::qr
