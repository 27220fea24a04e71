// bench/stencil/bandwidth.cpp — `numaware_bench_stencil bandwidth`: the
// skeleton's 3-D 7-point and 2-D 5-point Jacobi against a STREAM-style
// copy and against plain OpenMP `parallel for` kernels, in one process,
// on the same pinned CPUs, implementations taking turns within each
// repetition so that load from elsewhere hits them alike.
//
// Traffic counting rule (issue 5): a double-buffered update moves 2 arrays
// of 8 bytes per interior cell with streaming stores (read in, write out)
// and 3 without (the written line is read first: write-allocate); the
// STREAM copy counts 2 arrays (read a, write c) whatever the stores.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <omp.h>
#include <sched.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/stencil.hpp"
#include "numaware/team.hpp"

namespace nwbench {
namespace {

using namespace numaware;
using namespace numaware::stencil;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---- pinning of the OpenMP threads -------------------------------------

// OpenMP thread t runs on cpus[t] (the CPU of the skeleton's rank t), set
// at the start of every parallel region; the main thread's own mask is put
// back after each region so it does not sit on rank 0's CPU while the
// skeleton runs.
class Pinning {
public:
    explicit Pinning(std::vector<unsigned> cpus) : cpus_(std::move(cpus)) {
        CPU_ZERO(&main_mask_);
        if (sched_getaffinity(0, sizeof main_mask_, &main_mask_) != 0)
            throw Error("affinity", fmt::format("sched_getaffinity failed: {}", std::strerror(errno)), errno);
    }
    int threads() const { return static_cast<int>(cpus_.size()); }
    // Called by every thread of a parallel region.
    void pin_self() const {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus_[static_cast<std::size_t>(omp_get_thread_num())], &set);
        (void)sched_setaffinity(0, sizeof set, &set);
    }
    void release_main() const { (void)sched_setaffinity(0, sizeof main_mask_, &main_mask_); }

private:
    std::vector<unsigned> cpus_;
    cpu_set_t main_mask_;
};

// ---- plain arrays (untouched until first touch) -------------------------

struct FreeDeleter {
    void operator()(double* p) const noexcept { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

Array allocate(std::size_t n) {
    const std::size_t bytes = (n * sizeof(double) + 4095) / 4096 * 4096;
    auto* p = static_cast<double*>(std::aligned_alloc(4096, bytes));
    if (p == nullptr) throw Error("memory", fmt::format("cannot allocate {} bytes", bytes), ENOMEM);
    return Array(p);
}

// The [lo, hi) of thread t under schedule(static) without a chunk size
// (libgomp: the first n % T threads get one element more).
std::pair<std::size_t, std::size_t> static_range(std::size_t n, std::size_t t, std::size_t threads) {
    const std::size_t q = n / threads, r = n % threads;
    const std::size_t lo = t * q + std::min(t, r);
    return {lo, lo + q + (t < r ? 1 : 0)};
}

// ---- STREAM-style copy ------------------------------------------------

struct CopyArrays {
    std::size_t n;
    Array a, b, c;
};

CopyArrays make_copy_arrays(const Pinning& pin, std::size_t n) {
    CopyArrays arr{n, allocate(n), allocate(n), allocate(n)};
    double* a = arr.a.get();
    double* b = arr.b.get();
    double* c = arr.c.get();
    const auto sn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel num_threads(pin.threads())
    {
        pin.pin_self();
#pragma omp for schedule(static)
        for (std::ptrdiff_t i = 0; i < sn; ++i) {
            a[i] = 1.0;
            b[i] = 2.0;
            c[i] = 0.0;
        }
    }
    pin.release_main();
    return arr;
}

// c[i] = a[i] with ordinary stores. The target is compiled with
// -fno-tree-loop-distribute-patterns so GCC keeps this loop instead of
// calling memcpy (glibc's memcpy switches to non-temporal stores for large
// copies); the memcpy variant is measured separately.
void copy_normal(const Pinning& pin, CopyArrays& arr) {
    const double* __restrict a = arr.a.get();
    double* __restrict c = arr.c.get();
    const auto sn = static_cast<std::ptrdiff_t>(arr.n);
#pragma omp parallel num_threads(pin.threads())
    {
        pin.pin_self();
#pragma omp for schedule(static)
        for (std::ptrdiff_t i = 0; i < sn; ++i) c[i] = a[i];
    }
    pin.release_main();
}

// Each thread copies its schedule(static) share with `copy_part`.
template <class CopyPart>
void copy_split(const Pinning& pin, CopyArrays& arr, CopyPart copy_part) {
    const double* a = arr.a.get();
    double* c = arr.c.get();
    const std::size_t n = arr.n;
#pragma omp parallel num_threads(pin.threads())
    {
        pin.pin_self();
        const auto [lo, hi] = static_range(n, static_cast<std::size_t>(omp_get_thread_num()),
                                           static_cast<std::size_t>(omp_get_num_threads()));
        copy_part(c + lo, a + lo, hi - lo);
    }
    pin.release_main();
}

// The same split, written with the skeleton's non-temporal stores.
void copy_streaming(const Pinning& pin, CopyArrays& arr) {
    copy_split(pin, arr, [](double* dst, const double* src, std::size_t n) {
        detail::stream_store(dst, src, n);
        detail::stream_fence();
    });
}

// The same split through glibc memcpy (for information).
void copy_memcpy(const Pinning& pin, CopyArrays& arr) {
    copy_split(pin, arr,
               [](double* dst, const double* src, std::size_t n) { std::memcpy(dst, src, n * sizeof(double)); });
}

// ---- plain OpenMP Jacobi peers -------------------------------------------
// Dense arrays (no padding), first touch in parallel with the sweep's own
// schedule(static) over the slab axis, ordinary stores; the arithmetic is
// Update7 / Update5 of common.hpp spelled out, same order.

struct OmpGrid {
    Shape shape;
    Array in, out;
};

OmpGrid make_omp_grid(const Pinning& pin, const Shape& s) {
    OmpGrid g{s, allocate(s.cells()), allocate(s.cells())};
    double* in = g.in.get();
    double* out = g.out.get();
    const auto slabs = static_cast<std::ptrdiff_t>(s.dims == 3 ? s.nz : s.ny);
    const std::size_t rows = s.dims == 3 ? s.ny : 1;
    const std::size_t slab = s.dims == 3 ? s.nx * s.ny : s.nx;
#pragma omp parallel num_threads(pin.threads())
    {
        pin.pin_self();
#pragma omp for schedule(static)
        for (std::ptrdiff_t k = 0; k < slabs; ++k) {
            const auto kk = static_cast<std::size_t>(k);
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t x = 0; x < s.nx; ++x) {
                    const std::size_t i = kk * slab + r * s.nx + x;
                    const double v = s.dims == 3 ? init_value(x, r, kk) : init_value(x, kk, 0);
                    in[i] = v;
                    out[i] = v;
                }
        }
    }
    pin.release_main();
    return g;
}

void omp_jacobi3(const Pinning& pin, OmpGrid& g) {
    const auto nx = static_cast<std::ptrdiff_t>(g.shape.nx);
    const auto ny = static_cast<std::ptrdiff_t>(g.shape.ny);
    const auto nz = static_cast<std::ptrdiff_t>(g.shape.nz);
    const std::ptrdiff_t sx = nx, sp = nx * ny;
    const double* src = g.in.get();
    double* dst = g.out.get();
#pragma omp parallel num_threads(pin.threads())
    {
        pin.pin_self();
#pragma omp for schedule(static)
        for (std::ptrdiff_t z = 1; z < nz - 1; ++z)
            for (std::ptrdiff_t y = 1; y < ny - 1; ++y) {
                const double* __restrict ip = src + z * sp + y * sx;
                double* __restrict op = dst + z * sp + y * sx;
                for (std::ptrdiff_t x = 1; x < nx - 1; ++x)
                    op[x] = (ip[x - 1] + ip[x + 1] + ip[x - sx] + ip[x + sx] + ip[x - sp] + ip[x + sp]) / 6.0;
            }
    }
    pin.release_main();
    std::swap(g.in, g.out);
}

void omp_jacobi2(const Pinning& pin, OmpGrid& g) {
    const auto nx = static_cast<std::ptrdiff_t>(g.shape.nx);
    const auto ny = static_cast<std::ptrdiff_t>(g.shape.ny);
    const std::ptrdiff_t sx = nx;
    const double* src = g.in.get();
    double* dst = g.out.get();
#pragma omp parallel num_threads(pin.threads())
    {
        pin.pin_self();
#pragma omp for schedule(static)
        for (std::ptrdiff_t y = 1; y < ny - 1; ++y) {
            const double* __restrict ip = src + y * sx;
            double* __restrict op = dst + y * sx;
            for (std::ptrdiff_t x = 1; x < nx - 1; ++x)
                op[x] = 0.25 * (ip[x - 1] + ip[x + 1] + ip[x - sx] + ip[x + sx]);
        }
    }
    pin.release_main();
    std::swap(g.in, g.out);
}

// The same OpenMP loops on the skeleton's own layout (rows padded to a
// cache line, slabs to whole pages): separates what the layout costs from
// what the skeleton's runtime costs.
struct PaddedGrid {
    Layout layout;
    Array in, out;
};

PaddedGrid make_padded_grid(const Pinning& pin, const Shape& s) {
    const Layout L = Layout::make(s);
    PaddedGrid g{L, allocate(L.bytes / sizeof(double)), allocate(L.bytes / sizeof(double))};
    double* in = g.in.get();
    double* out = g.out.get();
    const auto slabs = static_cast<std::ptrdiff_t>(L.slabs);
#pragma omp parallel num_threads(pin.threads())
    {
        pin.pin_self();
#pragma omp for schedule(static)
        for (std::ptrdiff_t k = 0; k < slabs; ++k) {
            const auto kk = static_cast<std::size_t>(k);
            for (std::size_t i = 0; i < L.slab_stride; ++i) in[kk * L.slab_stride + i] = out[kk * L.slab_stride + i] = 0;
            const std::size_t rows = s.dims == 3 ? s.ny : 1;
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t x = 0; x < s.nx; ++x) {
                    const std::size_t i = s.dims == 3 ? L.index(x, r, kk) : L.index(x, kk);
                    const double v = s.dims == 3 ? init_value(x, r, kk) : init_value(x, kk, 0);
                    in[i] = v;
                    out[i] = v;
                }
        }
    }
    pin.release_main();
    return g;
}

void omp_jacobi_padded(const Pinning& pin, PaddedGrid& g) {
    const Shape& s = g.layout.shape;
    const auto nx = static_cast<std::ptrdiff_t>(s.nx);
    const auto ny = static_cast<std::ptrdiff_t>(s.ny);
    const auto sx = static_cast<std::ptrdiff_t>(g.layout.row_stride);
    const auto sp = static_cast<std::ptrdiff_t>(g.layout.slab_stride);
    const double* src = g.in.get();
    double* dst = g.out.get();
    if (s.dims == 3) {
        const auto nz = static_cast<std::ptrdiff_t>(s.nz);
#pragma omp parallel num_threads(pin.threads())
        {
            pin.pin_self();
#pragma omp for schedule(static)
            for (std::ptrdiff_t z = 1; z < nz - 1; ++z)
                for (std::ptrdiff_t y = 1; y < ny - 1; ++y) {
                    const double* __restrict ip = src + z * sp + y * sx;
                    double* __restrict op = dst + z * sp + y * sx;
                    for (std::ptrdiff_t x = 1; x < nx - 1; ++x)
                        op[x] = (ip[x - 1] + ip[x + 1] + ip[x - sx] + ip[x + sx] + ip[x - sp] + ip[x + sp]) / 6.0;
                }
        }
    } else {
#pragma omp parallel num_threads(pin.threads())
        {
            pin.pin_self();
#pragma omp for schedule(static)
            for (std::ptrdiff_t y = 1; y < ny - 1; ++y) {
                const double* __restrict ip = src + y * sp;
                double* __restrict op = dst + y * sp;
                for (std::ptrdiff_t x = 1; x < nx - 1; ++x)
                    op[x] = 0.25 * (ip[x - 1] + ip[x + 1] + ip[x - sp] + ip[x + sp]);
            }
        }
    }
    pin.release_main();
    std::swap(g.in, g.out);
}

double omp_at(const OmpGrid& g, std::size_t x, std::size_t y, std::size_t z) {
    return g.in[z * g.shape.nx * g.shape.ny + y * g.shape.nx + x];
}

// ---- figures ------------------------------------------------------------

struct Figure {
    std::string name;       // "skeleton 3-D 7-point (streaming)"
    std::string group;      // "copy", "3d", "2d"
    std::string impl;       // "stream-copy", "skeleton", "openmp"
    std::string stores;     // "normal", "streaming", "memcpy"
    unsigned arrays = 2;    // counted per update / element
    std::size_t updates_per_sweep = 0;   // interior cells (copy: elements)
    std::vector<double> seconds_per_sweep;   // one per rep
    std::vector<double> wall_per_sweep;      // skeleton: wall time around the call, per sweep
    double best() const {
        return seconds_per_sweep.empty() ? 0 : *std::min_element(seconds_per_sweep.begin(), seconds_per_sweep.end());
    }
    double bytes_per_sweep() const { return static_cast<double>(updates_per_sweep) * arrays * 8.0; }
    double gbs() const { return best() > 0 ? bytes_per_sweep() / best() / 1e9 : 0; }
    double ups() const { return best() > 0 ? static_cast<double>(updates_per_sweep) / best() : 0; }
};

template <class Fn>
void time_reps(Figure& f, std::size_t sweeps, Fn&& one_sweep) {
    const auto t0 = Clock::now();
    for (std::size_t s = 0; s < sweeps; ++s) one_sweep();
    f.seconds_per_sweep.push_back(seconds_since(t0) / static_cast<double>(sweeps));
}

template <class F>
void time_skeleton(Figure& f, Skeleton& sk, std::size_t sweeps, const F& update) {
    const auto t0 = Clock::now();
    const Report r = sk.jacobi(sweeps, update);
    f.wall_per_sweep.push_back(seconds_since(t0) / static_cast<double>(sweeps));
    f.seconds_per_sweep.push_back(r.seconds_per_sweep);
}

// Lets libgomp's spinning workers go to sleep before the next
// implementation starts on the same CPUs.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

std::size_t interior(const Shape& s) {
    return (s.nx - 2) * (s.ny - 2) * (s.dims == 3 ? s.nz - 2 : 1);
}

Options skeleton_options(bool streaming, bool balancing_off) {
    Options o;
    o.placement = PagePlacement::stencil_aware;
    o.distribution = Distribution::static_equal;
    o.streaming_stores = streaming;
    o.balancing_off = balancing_off;
    return o;
}

// One sweep of the skeleton and one of the OpenMP peer on a small grid
// must agree bit for bit. Returns the number of differing cells.
template <class F, class OmpSweep>
std::size_t check_same_arithmetic(Team& team, const Pinning& pin, const Shape& s, const Neighbourhood& nb,
                                  const F& update, OmpSweep omp_sweep, bool balancing_off) {
    std::size_t differ = 0;
    for (bool streaming : {true, false}) {
        Skeleton sk{team, s, nb, init_value, skeleton_options(streaming, balancing_off)};
        (void)sk.jacobi(1, update);
        OmpGrid g = make_omp_grid(pin, s);
        omp_sweep(pin, g);
        for (std::size_t z = 0; z < s.nz; ++z)
            for (std::size_t y = 0; y < s.ny; ++y)
                for (std::size_t x = 0; x < s.nx; ++x)
                    if (!(sk.at(x, y, z) == omp_at(g, x, y, z))) ++differ;
    }
    return differ;
}

}  // namespace

int bandwidth_command(const BandwidthArgs& a) {
    if (a.reps == 0) throw Error("--reps", "must be at least 1, got 0");
    if (a.sweeps == 0) throw Error("--sweeps", "must be at least 1, got 0");
    if (a.size3 < 3) throw Error("--size3", fmt::format("must be at least 3, got {}", a.size3));
    if (a.size2 < 3) throw Error("--size2", fmt::format("must be at least 3, got {}", a.size2));
    const Machine machine = Machine::from_spec(a.machine);
    TeamMapping mapping;
    mapping.kind = parse_mapping_kind(a.mapping, "--mapping");
    mapping.threads = a.threads != 0 ? a.threads : static_cast<unsigned>(machine.cpu_count());
    Team team{machine, mapping};
    std::vector<unsigned> cpus;
    for (const RankPlace& r : team.layout().ranks) cpus.push_back(r.cpu);
    omp_set_dynamic(0);
    const Pinning pin(cpus);
    const bool balancing_off = !a.no_balancing_off;
    const std::string load_start = read_loadavg();
    const auto t_start = Clock::now();

    // ---- the same arithmetic ----
    const std::size_t differ3 = check_same_arithmetic(team, pin, Shape::d3(40, 36, 34), Neighbourhood::star(3),
                                                      Update7{}, omp_jacobi3, balancing_off);
    const std::size_t differ2 = check_same_arithmetic(team, pin, Shape::d2(300, 130), Neighbourhood::star(2),
                                                      Update5{}, omp_jacobi2, balancing_off);
    // The padded-layout OpenMP loops against the dense ones, one sweep.
    std::size_t differ_padded = 0;
    for (const Shape& sh : {Shape::d3(40, 36, 34), Shape::d2(300, 130)}) {
        OmpGrid dense = make_omp_grid(pin, sh);
        PaddedGrid padded = make_padded_grid(pin, sh);
        if (sh.dims == 3) omp_jacobi3(pin, dense);
        else omp_jacobi2(pin, dense);
        omp_jacobi_padded(pin, padded);
        for (std::size_t z = 0; z < sh.nz; ++z)
            for (std::size_t y = 0; y < sh.ny; ++y)
                for (std::size_t x = 0; x < sh.nx; ++x)
                    if (!(omp_at(dense, x, y, z) == padded.in[padded.layout.index(x, y, z)])) ++differ_padded;
    }
    const bool checked = differ3 == 0 && differ2 == 0 && differ_padded == 0;
    if (!a.json) {
        if (checked)
            fmt::print("checked: one sweep of the skeleton (streaming and not) equals one sweep of the OpenMP peer, "
                       "bit for bit (3-D 40x36x34 7-point, 2-D 300x130 5-point)\n");
        else
            fmt::print("CHECK FAILED: skeleton and OpenMP peer differ in {} cells (3-D) and {} cells (2-D); "
                       "padded and dense OpenMP loops in {}\n",
                       differ3, differ2, differ_padded);
        std::fflush(stdout);
    }

    const Shape s3 = Shape::d3(a.size3, a.size3, a.size3);
    const Shape s2 = Shape::d2(a.size2, a.size2);
    const std::size_t copy_n = std::max(s3.cells(), s2.cells());
    std::vector<Figure> figs;
    auto add = [&](std::string name, std::string group, std::string impl, std::string stores, unsigned arrays,
                   std::size_t updates) -> std::size_t {
        figs.push_back(Figure{std::move(name), std::move(group), std::move(impl), std::move(stores), arrays, updates,
                              {}, {}});
        return figs.size() - 1;
    };
    const std::size_t f_copy = add("STREAM copy, normal stores", "copy", "stream-copy", "normal", 2, copy_n);
    const std::size_t f_copy_nt = add("STREAM copy, streaming stores", "copy", "stream-copy", "streaming", 2, copy_n);
    const std::size_t f_copy_mc = add("copy through glibc memcpy", "copy", "stream-copy", "memcpy", 2, copy_n);
    const std::size_t f_s3 = add("skeleton 3-D 7-point, streaming", "3d", "skeleton", "streaming", 2, interior(s3));
    const std::size_t f_s3n = add("skeleton 3-D 7-point, normal stores", "3d", "skeleton", "normal", 3, interior(s3));
    const std::size_t f_o3 = add("OpenMP 3-D 7-point, normal stores", "3d", "openmp", "normal", 3, interior(s3));
    const std::size_t f_o3p =
        add("OpenMP 3-D 7-point, skeleton's layout", "3d", "openmp-padded", "normal", 3, interior(s3));
    const std::size_t f_s2 = add("skeleton 2-D 5-point, streaming", "2d", "skeleton", "streaming", 2, interior(s2));
    const std::size_t f_s2n = add("skeleton 2-D 5-point, normal stores", "2d", "skeleton", "normal", 3, interior(s2));
    const std::size_t f_o2 = add("OpenMP 2-D 5-point, normal stores", "2d", "openmp", "normal", 3, interior(s2));
    const std::size_t f_o2p =
        add("OpenMP 2-D 5-point, skeleton's layout", "2d", "openmp-padded", "normal", 3, interior(s2));

    CopyArrays copy = make_copy_arrays(pin, copy_n);
    auto copies = [&]() {
        time_reps(figs[f_copy], a.sweeps, [&] { copy_normal(pin, copy); });
        settle();
        time_reps(figs[f_copy_nt], a.sweeps, [&] { copy_streaming(pin, copy); });
        settle();
        time_reps(figs[f_copy_mc], a.sweeps, [&] { copy_memcpy(pin, copy); });
        settle();
    };
    // Warm-up.
    copy_normal(pin, copy);
    copy_streaming(pin, copy);
    copy_memcpy(pin, copy);
    settle();

    // ---- one group per grid: the skeleton (streaming and not), the dense
    // OpenMP loop and the OpenMP loop on the skeleton's layout, taking turns
    // with the copies in every repetition ----
    auto group = [&](const Shape& shape, const Neighbourhood& nb, const auto& update, auto omp_sweep,
                     std::size_t f_s, std::size_t f_sn, std::size_t f_o, std::size_t f_op) {
        Skeleton sk{team, shape, nb, init_value, skeleton_options(true, balancing_off)};
        Skeleton skn{team, shape, nb, init_value, skeleton_options(false, balancing_off)};
        OmpGrid og = make_omp_grid(pin, shape);
        PaddedGrid pg = make_padded_grid(pin, shape);
        (void)sk.jacobi(1, update);   // warm-up
        (void)skn.jacobi(1, update);
        omp_sweep(pin, og);
        omp_jacobi_padded(pin, pg);
        settle();
        for (unsigned rep = 0; rep < a.reps; ++rep) {
            copies();
            time_skeleton(figs[f_s], sk, a.sweeps, update);
            time_skeleton(figs[f_sn], skn, a.sweeps, update);
            time_reps(figs[f_o], a.sweeps, [&] { omp_sweep(pin, og); });
            settle();
            time_reps(figs[f_op], a.sweeps, [&] { omp_jacobi_padded(pin, pg); });
            settle();
        }
    };
    group(s3, Neighbourhood::star(3), Update7{}, omp_jacobi3, f_s3, f_s3n, f_o3, f_o3p);
    group(s2, Neighbourhood::star(2), Update5{}, omp_jacobi2, f_s2, f_s2n, f_o2, f_o2p);
    const double total_s = seconds_since(t_start);
    const std::string load_end = read_loadavg();

    // ---- ratios ----
    const double copy_gbs = figs[f_copy].gbs();
    struct Ratio {
        std::string name;
        double value;
    };
    std::vector<Ratio> ratios;
    for (std::size_t s : {f_s3, f_s3n, f_s2, f_s2n}) {
        const bool d3 = figs[s].group == "3d";
        const std::size_t peer = d3 ? f_o3 : f_o2;
        const std::size_t padded = d3 ? f_o3p : f_o2p;
        ratios.push_back({figs[s].name + " GB/s / STREAM copy (normal stores) GB/s", figs[s].gbs() / copy_gbs});
        ratios.push_back({figs[s].name + " / OpenMP (OpenMP s/sweep / skeleton s/sweep)",
                          figs[peer].best() / figs[s].best()});
        ratios.push_back({figs[s].name + " / OpenMP on the skeleton's layout", figs[padded].best() / figs[s].best()});
    }

    if (a.json || !a.json_file.empty()) {
        nlohmann::json results = nlohmann::json::array();
        for (const Figure& f : figs) {
            nlohmann::json j{{"name", f.name},
                             {"group", f.group},
                             {"implementation", f.impl},
                             {"stores", f.stores},
                             {"arrays_counted", f.arrays},
                             {"updates_per_sweep", f.updates_per_sweep},
                             {"bytes_per_sweep", f.bytes_per_sweep()},
                             {"seconds_per_sweep", f.best()},
                             {"updates_per_second", f.ups()},
                             {"gbs", f.gbs()},
                             {"all_seconds_per_sweep", f.seconds_per_sweep}};
            if (!f.wall_per_sweep.empty()) j["wall_seconds_per_sweep"] = f.wall_per_sweep;
            results.push_back(std::move(j));
        }
        nlohmann::json r = nlohmann::json::object();
        r["skeleton_3d_streaming_vs_copy"] = figs[f_s3].gbs() / copy_gbs;
        r["skeleton_3d_normal_vs_copy"] = figs[f_s3n].gbs() / copy_gbs;
        r["skeleton_2d_streaming_vs_copy"] = figs[f_s2].gbs() / copy_gbs;
        r["skeleton_2d_normal_vs_copy"] = figs[f_s2n].gbs() / copy_gbs;
        r["skeleton_3d_streaming_vs_openmp"] = figs[f_o3].best() / figs[f_s3].best();
        r["skeleton_3d_normal_vs_openmp"] = figs[f_o3].best() / figs[f_s3n].best();
        r["skeleton_2d_streaming_vs_openmp"] = figs[f_o2].best() / figs[f_s2].best();
        r["skeleton_2d_normal_vs_openmp"] = figs[f_o2].best() / figs[f_s2n].best();
        r["skeleton_3d_normal_vs_openmp_same_layout"] = figs[f_o3p].best() / figs[f_s3n].best();
        r["skeleton_2d_normal_vs_openmp_same_layout"] = figs[f_o2p].best() / figs[f_s2n].best();
        nlohmann::json doc{{"machine", machine.name},
                           {"cpu_model", cpu_model()},
                           {"date", utc_now()},
                           {"threads", mapping.threads},
                           {"cpus", cpus},
                           {"load", load_start},
                           {"load_end", load_end},
                           {"thp", thp_setting()},
                           {"reps", a.reps},
                           {"sweeps", a.sweeps},
                           {"size3", a.size3},
                           {"size2", a.size2},
                           {"copy_elements", copy_n},
                           {"checked", checked},
                           {"seconds_total", total_s},
                           {"counting",
                            "GB/s = arrays_counted x 8 B x updates per sweep / best s per sweep; double-buffered "
                            "updates count 2 arrays with streaming stores, 3 with normal stores; copy counts 2"},
                           {"timing",
                            "best of reps, each rep = sweeps sweeps (copies) after one warm-up; skeleton times are "
                            "Report::seconds_per_sweep, wall_seconds_per_sweep adds the call around it"},
                           {"results", std::move(results)},
                           {"ratios", std::move(r)}};
        if (!a.json_file.empty()) {
            std::FILE* f = std::fopen(a.json_file.c_str(), "w");
            if (f == nullptr)
                throw Error("--json-file", fmt::format("cannot write '{}': {}", a.json_file, std::strerror(errno)),
                            errno);
            fmt::print(f, "{}\n", doc.dump(2));
            std::fclose(f);
        }
        if (a.json) fmt::print("{}\n", doc.dump(2));
    }
    if (!a.json) {
        fmt::print("\nmachine: {} ({}), {} threads on CPUs {}, load {} -> {}, THP {}\n", machine.name, cpu_model(),
                   mapping.threads, format_cpu_list(cpus), load_start, load_end, thp_setting());
        fmt::print("best of {} reps x {} sweeps; 3-D {} ({:.0f} MB per array), 2-D {} ({:.0f} MB per array), copy "
                   "{} doubles per array\n\n",
                   a.reps, a.sweeps, s3.to_string(), static_cast<double>(s3.cells()) * 8 / 1e6, s2.to_string(),
                   static_cast<double>(s2.cells()) * 8 / 1e6, copy_n);
        fmt::print("{:<38} {:>11} {:>9} {:>7} {:>7}\n", "kernel", "s/sweep", "Mupd/s", "arrays", "GB/s");
        for (const Figure& f : figs)
            fmt::print("{:<38} {:>11.4e} {:>9.1f} {:>7} {:>7.2f}\n", f.name, f.best(),
                       f.impl == "stream-copy" ? 0.0 : f.ups() / 1e6, f.arrays, f.gbs());
        fmt::print("\n");
        for (const Ratio& r : ratios) fmt::print("{:<92} {:>6.3f}\n", r.name, r.value);
        fmt::print("\ntotal {:.1f} s\n", total_s);
    }
    return checked ? 0 : 1;
}

}  // namespace nwbench
