// apps/cg/reference.cpp — the serial reference of the conjugate-gradient
// application.
#include "apps/cg/reference.hpp"

#include <cmath>

#include "apps/cg/cg.hpp"

namespace numaware::apps::cg {

std::vector<double> reference(const Grid& g, unsigned iterations) {
    const std::size_t nb = g.blocks;
    std::vector<double> x(g.total()), r(g.total()), p(g.total()), q(g.total());
    std::vector<double> pq(nb * scalar_stride), rp(nb * scalar_stride);
    for (std::size_t k = 0; k < nb; ++k) {
        rp[k * scalar_stride] = init_block(g, k, x.data(), r.data(), p.data(), q.data());
    }
    double rr = reduce(rp.data(), nb);
    for (unsigned it = 0; it < iterations; ++it) {
        for (std::size_t k = 0; k < nb; ++k) pq[k * scalar_stride] = spmv_block(g, k, p.data(), q.data());
        const double alpha = step_length(rr, reduce(pq.data(), nb));
        for (std::size_t k = 0; k < nb; ++k) {
            rp[k * scalar_stride] = update_block(g, k, alpha, p.data(), q.data(), x.data(), r.data());
        }
        const double next = reduce(rp.data(), nb);
        const double beta = step_length(next, rr);
        rr = next;
        for (std::size_t k = 0; k < nb; ++k) direction_block(g, k, beta, r.data(), p.data());
    }
    return x;
}

double relative_residual(const Grid& g, const double* x) {
    std::vector<double> ax(g.total());
    double num = 0;
    for (std::size_t k = 0; k < g.blocks; ++k) {
        spmv_block(g, k, x, ax.data());
        for (std::size_t i = 0; i < g.count; ++i) {
            const double d = 1.0 - ax[k * g.slot + i];
            num += d * d;
        }
    }
    const double unknowns = static_cast<double>(g.n * g.n * g.n);
    return std::sqrt(num / unknowns);
}

}  // namespace numaware::apps::cg
