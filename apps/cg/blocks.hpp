// apps/cg/blocks.hpp — the blocked vectors of the conjugate-gradient
// application and the block kernels that both its tasks and its serial
// reference run (blocks.cpp), so the two perform the identical sequence of
// floating-point operations.
#pragma once

#include <cstddef>

namespace numaware::apps::cg {

// The geometry of the blocked vectors.
struct Grid {
    std::size_t n = 0;        // side
    std::size_t planes = 0;   // planes per block
    std::size_t blocks = 0;   // n / planes
    std::size_t plane = 0;    // n * n
    std::size_t count = 0;    // unknowns per block: planes * n * n
    std::size_t slot = 0;     // doubles per block slot (whole pages)

    std::size_t total() const { return blocks * slot; }
    std::size_t block_bytes() const { return count * sizeof(double); }
    // Plane z (global index) of a blocked vector.
    const double* plane_ptr(const double* v, std::size_t z) const {
        return v + (z / planes) * slot + (z % planes) * plane;
    }
};

// Sets x = 0, r = p = b = 1, q = 0 on block k and returns r . r.
double init_block(const Grid& g, std::size_t k, double* x, double* r, double* p, double* q);

// q[k] = A p on block k; returns p[k] . q[k]. Reads planes of p from the
// neighbouring blocks (the one below and the one above) only.
double spmv_block(const Grid& g, std::size_t k, const double* p, double* q);

// Sums the partial results parts[k * scalar_stride] (cg.hpp) in block order.
double reduce(const double* parts, std::size_t blocks);

// x += alpha p, r -= alpha q on block k; returns r[k] . r[k].
double update_block(const Grid& g, std::size_t k, double alpha, const double* p, const double* q, double* x,
                    double* r);

// p = r + beta p on block k.
void direction_block(const Grid& g, std::size_t k, double beta, const double* r, double* p);

// num / den, or 0 once the iteration has converged exactly (den == 0), so
// running past convergence keeps x instead of producing NaN.
double step_length(double num, double den);

}  // namespace numaware::apps::cg
