// apps/nstream/reference.cpp — NStream's serial reference.
#include "apps/nstream/reference.hpp"

namespace numaware::apps::nstream {

StreamArrays reference(std::size_t n, unsigned iterations) {
    StreamArrays r{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
    init_block(r.a.data(), r.b.data(), r.c.data(), 0, n);
    for (unsigned t = 0; t < iterations; ++t) triad(r.a.data(), r.b.data(), r.c.data(), 0, n);
    return r;
}

}  // namespace numaware::apps::nstream
