// bench/tasks/problems.cpp — the benchmark problems: buffers, serial
// references, checksums, and the stencil tasks' work and dependencies.
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "bench_tasks.hpp"
#include "apps/common/stencil_kernels.hpp"

namespace bench::tasks {

namespace kernels = numaware::apps::kernels;

namespace {
std::atomic<bool> pin_peers{true};

// The CPUs this process may run on, in ascending order, read once.
const std::vector<unsigned>& allowed_cpus() {
    static const std::vector<unsigned> cpus = [] {
        std::vector<unsigned> out;
        cpu_set_t set;
        CPU_ZERO(&set);
        if (::sched_getaffinity(0, sizeof set, &set) == 0)
            for (unsigned c = 0; c < CPU_SETSIZE; ++c)
                if (CPU_ISSET(c, &set)) out.push_back(c);
        return out;
    }();
    return cpus;
}
}  // namespace

void set_peer_pinning(bool on) { pin_peers.store(on); }

PinGuard::PinGuard(unsigned index) {
    static_assert(sizeof(cpu_set_t) <= sizeof saved_);
    const std::vector<unsigned>& cpus = allowed_cpus();
    if (!pin_peers.load() || cpus.empty()) return;
    cpu_set_t old;
    if (::sched_getaffinity(0, sizeof old, &old) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[index % cpus.size()], &one);
    if (::sched_setaffinity(0, sizeof one, &one) != 0) return;
    std::memcpy(saved_, &old, sizeof old);
    pinned_ = true;
}

PinGuard::~PinGuard() {
    if (!pinned_) return;
    cpu_set_t old;
    std::memcpy(&old, saved_, sizeof old);
    ::sched_setaffinity(0, sizeof old, &old);
}

double grid_checksum(const double* grid, std::size_t cells) {
    double sum = 0;
    for (std::size_t k = 0; k < cells; ++k) sum += grid[k];
    return sum;
}

double wavefront_serial(double* grid, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) grid[i * n + j] = wavefront_at(grid, n, i, j);
    return grid_checksum(grid, n * n);
}

std::string_view to_string(Stencil s) { return s == Stencil::jacobi ? "jacobi" : "gauss-seidel"; }

namespace {
std::size_t page_bytes() {
    const long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
}
}  // namespace

void check(const StencilProblem& p) {
    if (p.n < 3) throw std::invalid_argument("--stencil-n must be at least 3, got " + std::to_string(p.n));
    if (p.block == 0 || p.n % p.block != 0)
        throw std::invalid_argument("--block must divide --stencil-n " + std::to_string(p.n) + ", got " +
                                    std::to_string(p.block));
    if (p.block_doubles() * sizeof(double) % page_bytes() != 0)
        throw std::invalid_argument("--block " + std::to_string(p.block) + " makes blocks of " +
                                    std::to_string(p.block_doubles() * sizeof(double)) +
                                    " bytes, not a multiple of the page size " + std::to_string(page_bytes()));
    if (p.iterations == 0) throw std::invalid_argument("--iterations must be at least 1, got 0");
}

StencilGrids::StencilGrids(const StencilProblem& p) : p_(p) {
    check(p);
    bytes_ = p.n * p.n * sizeof(double);
    const unsigned buffers = p.kind == Stencil::jacobi ? 2 : 1;
    for (unsigned k = 0; k < buffers; ++k) {
        void* m = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) throw std::runtime_error("cannot map " + std::to_string(bytes_) + " bytes: " + std::strerror(errno));
        (k == 0 ? a_ : b_) = static_cast<double*>(m);
    }
    reset();
}

StencilGrids::~StencilGrids() {
    if (a_) ::munmap(a_, bytes_);
    if (b_) ::munmap(b_, bytes_);
}

void StencilGrids::reset() {
    if (p_.kind == Stencil::jacobi) {
        kernels::jacobi_init_rows(a_, p_.n, 0, p_.n);
        kernels::jacobi_init_rows(b_, p_.n, 0, p_.n);
    } else {
        const std::size_t ts = p_.blocks_per_side();
        for (std::size_t ti = 0; ti < ts; ++ti)
            for (std::size_t tj = 0; tj < ts; ++tj) kernels::gs_init_tile(a_, ts, p_.block, ti, tj);
    }
}

const double* StencilGrids::result() const {
    return p_.kind == Stencil::jacobi && p_.iterations % 2 == 1 ? b_ : a_;
}

double StencilGrids::checksum() const { return grid_checksum(result(), p_.n * p_.n); }

void stencil_task(const StencilProblem& p, const StencilGrids& g, unsigned t, std::size_t b) {
    if (p.kind == Stencil::jacobi) {
        const double* src = g.buffer(t % 2);
        double* dst = g.buffer(1 - t % 2);
        kernels::jacobi_rows(src, dst, p.n, p.n, b * p.block, (b + 1) * p.block);
    } else {
        const std::size_t ts = p.blocks_per_side();
        kernels::gs_tile(g.buffer(0), ts, p.block, b / ts, b % ts);
    }
}

StencilDeps stencil_deps(const StencilProblem& p, const StencilGrids& g, unsigned t, std::size_t b) {
    StencilDeps d;
    d.bytes = p.block_doubles() * sizeof(double);
    const std::size_t bd = p.block_doubles();
    if (p.kind == Stencil::jacobi) {
        const double* src = g.buffer(t % 2);
        const std::size_t nb = p.blocks();
        if (b > 0) d.in[d.in_count++] = src + (b - 1) * bd;
        d.in[d.in_count++] = src + b * bd;
        if (b + 1 < nb) d.in[d.in_count++] = src + (b + 1) * bd;
        d.out = g.buffer(1 - t % 2) + b * bd;
    } else {
        const std::size_t ts = p.blocks_per_side();
        const std::size_t ti = b / ts, tj = b % ts;
        double* base = g.buffer(0);
        if (ti > 0) d.in[d.in_count++] = base + (b - ts) * bd;
        if (ti + 1 < ts) d.in[d.in_count++] = base + (b + ts) * bd;
        if (tj > 0) d.in[d.in_count++] = base + (b - 1) * bd;
        if (tj + 1 < ts) d.in[d.in_count++] = base + (b + 1) * bd;
        d.out = base + b * bd;
        d.out_is_inout = true;
    }
    return d;
}

double stencil_serial(const StencilProblem& p, StencilGrids& g) {
    g.reset();
    for (unsigned t = 0; t < p.iterations; ++t)
        for (std::size_t b = 0; b < p.blocks(); ++b) stencil_task(p, g, t, b);
    return g.checksum();
}

}  // namespace bench::tasks
