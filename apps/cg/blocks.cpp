// apps/cg/blocks.cpp — the block kernels of the conjugate-gradient
// application (blocks.hpp).
#include "apps/cg/blocks.hpp"

#include "apps/cg/cg.hpp"

namespace numaware::apps::cg {

// Sets x = 0, r = p = b = 1, q = 0 on block k and returns r . r.
double init_block(const Grid& g, std::size_t k, double* x, double* r, double* p, double* q) {
    double* xb = x + k * g.slot;
    double* rb = r + k * g.slot;
    double* pb = p + k * g.slot;
    double* qb = q + k * g.slot;
    double sum = 0;
    for (std::size_t i = 0; i < g.count; ++i) {
        xb[i] = 0;
        rb[i] = 1.0;
        pb[i] = 1.0;
        qb[i] = 0;
        sum += rb[i] * rb[i];
    }
    return sum;
}

// q[k] = A p on block k; returns p[k] . q[k]. Reads planes of p from the
// neighbouring blocks (the one below and the one above) only.
double spmv_block(const Grid& g, std::size_t k, const double* p, double* q) {
    const std::size_t n = g.n;
    double sum = 0;
    for (std::size_t lz = 0; lz < g.planes; ++lz) {
        const std::size_t z = k * g.planes + lz;
        const double* c = g.plane_ptr(p, z);
        const double* below = z > 0 ? g.plane_ptr(p, z - 1) : nullptr;
        const double* above = z + 1 < n ? g.plane_ptr(p, z + 1) : nullptr;
        double* qp = q + k * g.slot + lz * g.plane;
        for (std::size_t y = 0; y < n; ++y) {
            for (std::size_t x = 0; x < n; ++x) {
                const std::size_t i = y * n + x;
                double nb = 0;
                if (x > 0) nb += c[i - 1];
                if (x + 1 < n) nb += c[i + 1];
                if (y > 0) nb += c[i - n];
                if (y + 1 < n) nb += c[i + n];
                if (below) nb += below[i];
                if (above) nb += above[i];
                const double v = 6.0 * c[i] - nb;
                qp[i] = v;
                sum += c[i] * v;
            }
        }
    }
    return sum;
}

// Sums partial results in block order.
double reduce(const double* parts, std::size_t blocks) {
    double sum = 0;
    for (std::size_t k = 0; k < blocks; ++k) sum += parts[k * scalar_stride];
    return sum;
}

// x += alpha p, r -= alpha q on block k; returns r[k] . r[k].
double update_block(const Grid& g, std::size_t k, double alpha, const double* p, const double* q, double* x,
                    double* r) {
    const double* pb = p + k * g.slot;
    const double* qb = q + k * g.slot;
    double* xb = x + k * g.slot;
    double* rb = r + k * g.slot;
    double sum = 0;
    for (std::size_t i = 0; i < g.count; ++i) {
        xb[i] += alpha * pb[i];
        rb[i] -= alpha * qb[i];
        sum += rb[i] * rb[i];
    }
    return sum;
}

// p = r + beta p on block k.
void direction_block(const Grid& g, std::size_t k, double beta, const double* r, double* p) {
    const double* rb = r + k * g.slot;
    double* pb = p + k * g.slot;
    for (std::size_t i = 0; i < g.count; ++i) pb[i] = rb[i] + beta * pb[i];
}

// num / den, or 0 once the iteration has converged exactly (den == 0), so
// running past convergence keeps x instead of producing NaN.
double step_length(double num, double den) { return den != 0 ? num / den : 0.0; }

}  // namespace numaware::apps::cg
