// numaware/stencil.hpp — the stencil skeleton (the `skeletons` layer).
//
// A user gives the grid's shape, the neighbourhood and the update function;
// the skeleton owns the data layout, the page placement, the threads and
// the schedule:
//
//     numaware::Team team{machine, {.threads = 8, .kind = numaware::MappingKind::scatter}};
//     using namespace numaware::stencil;
//     Skeleton sk{team, Shape::d3(258, 258, 258), Neighbourhood::star(3),
//                 [](std::size_t x, std::size_t y, std::size_t z) { return x == 0 ? 1.0 : 0.0; },
//                 {.placement = PagePlacement::stencil_aware}};
//     Report r = sk.jacobi(100, [](const Access& a) {
//         return (a(-1, 0, 0) + a(1, 0, 0) + a(0, -1, 0) + a(0, 1, 0) + a(0, 0, -1) + a(0, 0, 1)) / 6.0;
//     });
//     std::puts(r.summary().c_str());
//
// Geometry. A grid of nx × ny (× nz) doubles, boundary included: cells
// within the neighbourhood's radius of an edge are fixed (Dirichlet) and
// only interior cells are updated. The outermost axis (y in 2-D, z in 3-D)
// is cut into *slabs* (a row in 2-D, a plane in 3-D); each thread updates a
// contiguous block of slabs. Slab strides are padded so that every block
// boundary falls on a page boundary (see Layout::make), so a block's pages
// belong to its thread alone and only halo slabs are shared.
//
// Decisions (layout, partition, weights, traffic accounting) are pure
// functions below; the Skeleton carries them out through the placement and
// threads layers and reports what the kernel says it did.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "numaware/team.hpp"

namespace numaware {
namespace os {
class Os;
}
}  // namespace numaware

namespace numaware::stencil {

// =====================================================================
// Geometry (pure)
// =====================================================================

// One neighbour, relative to the updated cell. dz is 0 in 2-D.
struct Offset {
    int dx = 0;
    int dy = 0;
    int dz = 0;
    bool operator==(const Offset&) const = default;
};

// The cells an update may read. For a variable neighbourhood this is the
// bound: the update chooses among these cells from the data.
class Neighbourhood {
public:
    // dims is 2 or 3; offsets non-empty, each |d| <= 8, dz == 0 in 2-D,
    // no duplicates. Throws Error("neighbourhood", ...) otherwise.
    Neighbourhood(unsigned dims, std::vector<Offset> offsets, std::string name = "custom");

    // Centre plus the 2·dims·radius cells on the axes: 5-point (2-D), 7-point (3-D).
    static Neighbourhood star(unsigned dims, unsigned radius = 1);
    // Every cell of the (2·radius+1)^dims cube: 9-point (2-D), 27-point (3-D).
    static Neighbourhood box(unsigned dims, unsigned radius = 1);
    // "5-point", "9-point", "7-point", "27-point", "star:D:R", "box:D:R".
    // Throws Error(field, ...) naming the text otherwise.
    static Neighbourhood parse(std::string_view text, std::string_view field = "neighbourhood");

    unsigned dims() const { return dims_; }
    const std::vector<Offset>& offsets() const { return offsets_; }
    const std::string& name() const { return name_; }   // "5-point", "27-point", "box:2:3", "custom"
    unsigned radius_x() const { return rx_; }
    unsigned radius_y() const { return ry_; }
    unsigned radius_z() const { return rz_; }
    // Radius along the slab axis: radius_y() in 2-D, radius_z() in 3-D.
    unsigned radius_slab() const { return dims_ == 3 ? rz_ : ry_; }
    unsigned radius() const;   // the largest of the three

private:
    unsigned dims_;
    std::vector<Offset> offsets_;
    std::string name_;
    unsigned rx_ = 0, ry_ = 0, rz_ = 0;
};

// Extents in cells, boundary included.
struct Shape {
    unsigned dims = 2;
    std::size_t nx = 0, ny = 0, nz = 1;
    static Shape d2(std::size_t nx, std::size_t ny) { return {2, nx, ny, 1}; }
    static Shape d3(std::size_t nx, std::size_t ny, std::size_t nz) { return {3, nx, ny, nz}; }
    std::size_t cells() const { return nx * ny * nz; }
    std::string to_string() const;   // "1026x1026" or "258x258x258"
    bool operator==(const Shape&) const = default;
};

// Memory layout of one grid array (doubles).
//
// Padding rule: rows are padded to a multiple of 8 doubles (one cache line).
// If a slab (row in 2-D, plane in 3-D) is at least a page, its stride is
// padded to a whole number of pages and granule = 1. Otherwise the slab
// stride is padded to the next power of two number of bytes (which divides
// the page) and granule = page_size / slab bytes. Block boundaries are
// multiples of `granule` slabs, hence page-aligned.
struct Layout {
    Shape shape;
    std::size_t page_size = 4096;
    std::size_t row_stride = 0;    // elements from (x, y, z) to (x, y + 1, z)
    std::size_t slab_stride = 0;   // elements from one slab to the next
    std::size_t slabs = 0;         // ny (2-D) or nz (3-D)
    std::size_t granule = 1;       // slabs per page-aligned boundary unit
    std::size_t bytes = 0;         // slabs · slab_stride · 8, rounded up to a page

    // Throws Error("grid", ...) for zero extents, dims other than 2 or 3,
    // nz != 1 in 2-D, or a page size that is not a power of two >= 64.
    static Layout make(const Shape& shape, std::size_t page_size = 4096);

    std::size_t index(std::size_t x, std::size_t y, std::size_t z = 0) const {
        return shape.dims == 3 ? z * slab_stride + y * row_stride + x : y * slab_stride + x;
    }
    std::size_t pages() const { return bytes / page_size; }
    std::size_t padding_bytes() const { return bytes - shape.cells() * sizeof(double); }
};

// Checks that the grid is larger than the stencil needs: every extent
// (the ones the neighbourhood's dims use) must be at least 2·radius + 1
// along that axis. Throws Error("grid", "nx=2 is smaller than the 5-point
// stencil needs (at least 3)") and the like; also when dims differ.
void check_grid(const Shape& shape, const Neighbourhood& nb);

// A half-open range of slabs.
struct Block {
    std::size_t lo = 0;
    std::size_t hi = 0;
    std::size_t size() const { return hi - lo; }
    bool operator==(const Block&) const = default;
};

// Which slabs each thread updates and which slabs' pages it owns. `work`
// covers the interior slabs [halo, slabs - halo) in rank order, without
// gaps; `owned` is the same cut extended to the grid's edges (rank 0 also
// owns the low boundary slabs, the last rank the high ones). Every cut
// between ranks is a multiple of layout.granule, except that a rank may be
// empty (lo == hi) when there are fewer granules than ranks.
struct Partition {
    std::vector<Block> work;
    std::vector<Block> owned;
    std::vector<double> weights;   // the weights the cut was made from (1 each for equal)
};

// Equal blocks: cut r at halo + round(r · interior / threads), rounded to
// the nearest granule multiple. Throws Error("threads", "9 threads but the
// grid has only 8 interior rows") when threads exceed the interior slabs,
// Error("threads", ...) for 0.
Partition partition_equal(const Layout& layout, unsigned halo, unsigned threads);
// Blocks proportional to weights (same rounding). Throws
// Error("weights[i]", "must be positive and finite, got X") and the
// threads errors above (threads = weights.size()).
Partition partition_weighted(const Layout& layout, unsigned halo, std::span<const double> weights);

// ---- the NUMA-aware weights ----
//
// A thread whose neighbour block lives on another node reads its halo at a
// cost ratio rho = (time per remote byte) / (time per local byte). Rule
// (remote_cost below): the machine's bandwidth matrix if present,
// bw[home][home] / bw[reader][home]; else its latency matrix,
// lat[reader][home] / lat[home][home]; else the SLIT distances,
// d[reader][home] / d[home][home]. Its time per sweep is then modelled as
//     T_t = n_t · S + sum over remote neighbours (rho - 1) · H_t
// with n_t its slabs, S the bytes one slab update moves (read + write of a
// slab) and H_t its remote halo bytes under the equal cut. Equalising T_t
// with sum n_t = N gives n_t = (N·S + sum_u X_u) / (threads · S) - X_t / S
// with X_t = sum (rho - 1) · H_t; weight_t = n_t / (N / threads),
// clamped below at one granule.
struct CostRatio {
    double ratio = 1.0;
    std::string source;   // "bandwidth 25.0/12.5 GB/s", "latency 160/80 ns", "SLIT 21/10"
};
CostRatio remote_cost(const Machine& machine, unsigned reader_node, unsigned home_node);

struct WeightPlan {
    std::vector<double> weights;           // one per rank, mean 1
    std::vector<double> cost_ratio;        // the largest rho among the rank's remote neighbours (1 if none)
    std::vector<std::size_t> halo_bytes;   // remote halo bytes per sweep under the equal cut
    std::string rule;                      // one sentence: how the weights were derived
};
// rank_nodes: the node of each rank's CPU (team layout order); a rank's
// block is taken to be on its node or, for a node without memory (or whose
// memory is outside the cpuset), on the nearest node with memory
// (Machine::memory_node_near), so such a rank reads all of it remotely.
// remote_cost_override
// > 0 replaces rho for every remote neighbour (Error("remote_cost", ...) if
// negative or not finite).
WeightPlan numa_weights(const Layout& layout, const Neighbourhood& nb, const std::vector<unsigned>& rank_nodes,
                        const Machine& machine, double remote_cost_override = 0);

// ---- traffic accounting (pure) ----
//
// What one rank moves in one sweep, from the real page locations.
// Reads are the distinct cells its updates read (the union of the
// neighbourhood over its work block: each byte counted once per sweep);
// writes are its work block's interior cells. A byte is remote when its
// page is on another node than the rank's; pages whose node is unknown
// (-1: absent) are counted in unknown_read_bytes, not as remote.
struct Traffic {
    std::size_t read_bytes = 0;
    std::size_t remote_read_bytes = 0;
    std::size_t unknown_read_bytes = 0;
    std::size_t write_bytes = 0;
    std::size_t remote_write_bytes = 0;
    std::size_t halo_pages = 0;           // pages read that lie outside the rank's owned block
    std::size_t remote_halo_pages = 0;    // of those, on another node
    std::size_t block_pages = 0;          // pages of the owned block
    std::size_t block_pages_on_node = 0;  // of those, on the rank's node
    Traffic& operator+=(const Traffic& o);
    bool operator==(const Traffic&) const = default;
};
// page_nodes_read / page_nodes_written: node of every page of the array
// read / written (layout.pages() entries each; the same span for in-place
// kinds).
Traffic account(const Layout& layout, const Neighbourhood& nb, Block work, Block owned, unsigned node,
                std::span<const int> page_nodes_read, std::span<const int> page_nodes_written);

// =====================================================================
// Modes
// =====================================================================

enum class Kind { jacobi, gauss_seidel, red_black, variable, multigrid, butterfly };
enum class PagePlacement {
    serial_first_touch,     // rank 0 initialises everything (the common mistake)
    parallel_first_touch,   // each rank initialises its owned block
    interleave,             // pages round robin over every node with memory
    stencil_aware,          // each owned block bound to its rank's node
    explicit_plan,          // Options::explicit_policy, applied to every array
};
enum class Distribution {
    static_equal,           // partition_equal
    dynamic,                // OpenMP schedule(dynamic, chunk) over slabs
    guided,                 // OpenMP schedule(guided, chunk) over slabs
    numa_weighted,          // partition_weighted(numa_weights(...)) or Options::weights; pages follow this cut
};

// Names: "jacobi", "gauss-seidel", "red-black", "variable", "multigrid",
// "butterfly"; "serial-first-touch", "parallel-first-touch", "interleave",
// "stencil-aware", "explicit"; "static", "dynamic", "guided", "numa-weighted".
// parse_* throw Error(field, ...) listing the accepted names.
std::string_view to_string(Kind kind);
std::string_view to_string(PagePlacement placement);
std::string_view to_string(Distribution distribution);
Kind parse_kind(std::string_view text, std::string_view field = "kind");
PagePlacement parse_placement(std::string_view text, std::string_view field = "placement");
Distribution parse_distribution(std::string_view text, std::string_view field = "distribution");

// =====================================================================
// Report
// =====================================================================

struct RankReport {
    unsigned rank = 0;
    unsigned cpu = 0;
    unsigned node = 0;
    Block work;                 // static distributions: its block; dynamic/guided: empty
    Block owned;
    double weight = 1.0;
    double busy_seconds = 0;    // time in updates over the whole run (barrier waits excluded)
    std::size_t slabs_updated = 0;   // over the whole run
    Traffic traffic;            // per sweep (averaged over the sweeps; exact for static distributions)
};

struct PlacementReport {
    std::string mode;            // to_string(PagePlacement)
    std::string realisation;     // what was done, in words
    std::size_t pages = 0;       // pages of all arrays
    std::size_t pages_as_intended = 0;   // pages on the node the mode intends (kernel's answer)
    std::map<unsigned, std::size_t> pages_per_node;
    std::size_t pages_unknown = 0;       // absent or unreadable
    bool verified = false;       // the kernel was asked
    std::string summary;         // one line
};

struct BalancingReport {
    bool available = false;      // the kernel has automatic NUMA balancing
    std::string before;          // state at start ("normal", "off", ...; "" if unavailable)
    bool switched_off = false;   // the skeleton turned it off for the run
    bool restored = false;       // and put `before` back afterwards
    std::string note;            // said once when not permitted / not available
};

struct Report {
    std::string kind;            // to_string(Kind)
    std::string neighbourhood;   // Neighbourhood::name()
    std::string placement;       // to_string(PagePlacement)
    std::string distribution;    // to_string(Distribution)
    Shape shape;
    unsigned threads = 0;
    std::size_t sweeps = 0;
    double seconds = 0;               // wall time of the sweeps (placement excluded)
    double seconds_per_sweep = 0;
    std::size_t updates_per_sweep = 0;
    double updates_per_second = 0;
    // Bytes moved: the traffic model, arrays_counted × interior cells × 8
    // per sweep (2 for double-buffered kinds with streaming stores, 3 when
    // rows are written through the cache, 2 for in-place kinds).
    unsigned arrays_counted = 0;
    std::size_t bytes_per_sweep = 0;
    double bandwidth_gbs = 0;         // bytes_per_sweep / seconds_per_sweep / 1e9
    // Sums over ranks of Traffic, per sweep, from the real page locations.
    std::size_t read_bytes_per_sweep = 0;
    std::size_t remote_read_bytes_per_sweep = 0;
    std::size_t remote_write_bytes_per_sweep = 0;
    std::size_t halo_pages = 0;
    std::size_t remote_halo_pages = 0;
    std::string weight_rule;          // numa_weighted: WeightPlan::rule or "given"
    std::vector<RankReport> ranks;
    PlacementReport placement_report;
    BalancingReport balancing;

    // JSON object with exactly these member names (nested objects for
    // shape {dims,nx,ny,nz}, ranks[] {…, work:[lo,hi], owned:[lo,hi],
    // traffic{…}}, placement_report{…, pages_per_node:{"0":n}},
    // balancing{…}).
    std::string to_json() const;
    // Two or three lines for people.
    std::string summary() const;
};

// Weights from a measured run (static or weighted distribution): each
// rank's slabs per busy second, scaled to mean 1. Throws Error("report",
// ...) when a rank has no slabs or no busy time.
std::vector<double> calibrate_weights(const Report& measured);

// =====================================================================
// The skeleton
// =====================================================================

struct Options {
    PagePlacement placement = PagePlacement::stencil_aware;
    // explicit_plan: the policy applied to every array (a page_map must
    // have layout.pages() entries). Required for explicit_plan, refused otherwise.
    std::optional<PlacementPolicy> explicit_policy{};
    Distribution distribution = Distribution::static_equal;
    // dynamic / guided: smallest chunk in slabs (0: one granule); rounded up to granules.
    std::size_t chunk = 0;
    // numa_weighted: one positive weight per rank overrides the model.
    std::vector<double> weights{};
    // numa_weighted: > 0 overrides the remote/local cost ratio of the model.
    double remote_cost = 0;
    // Switch automatic NUMA balancing off for each run and restore it after.
    bool balancing_off = true;
    // Double-buffered kinds write whole rows with non-temporal (streaming)
    // stores, which saves the read-for-ownership of the written array. Off
    // by default: on the machine we measure on (BENCHMARKS.md, "Stencil
    // skeleton") rows computed into a buffer and streamed out ran slower
    // than ordinary stores, although a plain streaming copy ran faster.
    bool streaming_stores = false;
    // Ask the kernel where every page is after placement (move_pages).
    bool verify_placement = true;
    // Gauss-Seidel tile width along the tile axis (x in 2-D, y in 3-D); 0 = auto.
    std::size_t tile = 0;
    // Called on rank 0's thread after each sweep, while the others wait.
    std::function<void(std::size_t sweep)> on_sweep{};
    // The os layer (nullptr: the real kernel). Tests pass a recording fake.
    os::Os* os = nullptr;
};

// Initial value of a cell (boundary cells keep theirs).
using InitFn = std::function<double(std::size_t x, std::size_t y, std::size_t z)>;

// What an update function sees: the cell being updated and its
// neighbours, by offset. a(dx, dy[, dz]) must stay within the
// neighbourhood given to the skeleton.
class Access {
public:
    Access(const double* p, std::ptrdiff_t row_stride, std::ptrdiff_t slab_stride, std::size_t x, std::size_t y,
           std::size_t z) noexcept
        : p_(p), sx_(row_stride), sp_(slab_stride), x_(x), y_(y), z_(z) {}
    double operator()(int dx, int dy, int dz = 0) const noexcept { return p_[dx + dy * sx_ + dz * sp_]; }
    double centre() const noexcept { return p_[0]; }
    std::size_t x() const noexcept { return x_; }
    std::size_t y() const noexcept { return y_; }
    std::size_t z() const noexcept { return z_; }

private:
    const double* p_;
    std::ptrdiff_t sx_, sp_;
    std::size_t x_, y_, z_;
};

namespace detail {
// One piece of a sweep, as the engine hands it to the update loop: slabs
// [slab_lo, slab_hi), and along the tile axis (y in 3-D, x in 2-D) cells
// [tile_lo, tile_hi) intersected with the interior. colour -1 = every
// cell, 0 = cells with (x+y+z) even, 1 = odd.
struct Piece {
    const Layout* layout = nullptr;
    const double* in = nullptr;
    double* out = nullptr;
    std::size_t slab_lo = 0, slab_hi = 0;
    std::size_t tile_lo = 0, tile_hi = 0;
    unsigned rx = 0, ry = 0, rz = 0;
    int colour = -1;
    bool stream = false;   // in != out: write rows with non-temporal stores
};
using PieceFn = void (*)(const void* update, const Piece& piece);

// Copies n doubles to dst with non-temporal stores (scalar stores for the
// unaligned head and the tail). stream_fence() orders them (sfence).
void stream_store(double* dst, const double* src, std::size_t n) noexcept;
void stream_fence() noexcept;

template <class F>
void run_piece(const void* update, const Piece& s) {
    const F& f = *static_cast<const F*>(update);
    const Layout& L = *s.layout;
    const auto sx = static_cast<std::ptrdiff_t>(L.row_stride);
    const auto sp = static_cast<std::ptrdiff_t>(L.slab_stride);
    const std::size_t nx = L.shape.nx;
    const bool d3 = L.shape.dims == 3;
    const std::size_t rows_lo = d3 ? std::max<std::size_t>(s.tile_lo, s.ry) : 0;
    const std::size_t rows_hi = d3 ? std::min<std::size_t>(s.tile_hi, L.shape.ny - s.ry) : 1;
    const std::size_t x_lo = d3 ? s.rx : std::max<std::size_t>(s.tile_lo, s.rx);
    const std::size_t x_hi = d3 ? nx - s.rx : std::min<std::size_t>(s.tile_hi, nx - s.rx);
    if (x_lo >= x_hi) return;
    constexpr std::size_t kBuf = 256;
    alignas(64) double buf[kBuf];
    for (std::size_t slab = s.slab_lo; slab < s.slab_hi; ++slab) {
        for (std::size_t row = rows_lo; row < rows_hi; ++row) {
            const std::size_t y = d3 ? row : slab;
            const std::size_t z = d3 ? slab : 0;
            const std::size_t base = d3 ? slab * L.slab_stride + row * L.row_stride : slab * L.slab_stride;
            const double* in = s.in + base;
            double* out = s.out + base;
            if (s.colour >= 0) {
                std::size_t x = x_lo;
                if (((x + y + z) & 1U) != static_cast<unsigned>(s.colour)) ++x;
                for (; x < x_hi; x += 2) out[x] = f(Access{in + x, sx, sp, x, y, z});
            } else if (s.in == s.out) {
                // In place (Gauss-Seidel): strictly in order.
                for (std::size_t x = x_lo; x < x_hi; ++x) out[x] = f(Access{in + x, sx, sp, x, y, z});
            } else if (s.stream && !d3 && (s.tile_lo > s.rx || s.tile_hi < nx - s.rx)) {
                // A partial 2-D row: through the cache.
                for (std::size_t x = x_lo; x < x_hi; ++x) out[x] = f(Access{in + x, sx, sp, x, y, z});
            } else if (s.stream) {
                // The whole padded row, in whole cache lines, with streaming
                // stores only (a line written partly by ordinary stores would
                // be read first). The boundary cells are fixed and equal in
                // both arrays, so they and the padding are copied from `in`.
                // Rows start on a cache line (Layout pads them to 8 doubles).
                const std::size_t row_len = L.row_stride;
                for (std::size_t x0 = 0; x0 < row_len; x0 += kBuf) {
                    const std::size_t n = std::min(kBuf, row_len - x0);
                    const std::size_t lo = std::clamp(x_lo, x0, x0 + n);
                    const std::size_t hi = std::clamp(x_hi, lo, x0 + n);
                    for (std::size_t x = x0; x < lo; ++x) buf[x - x0] = in[x];
                    for (std::size_t x = lo; x < hi; ++x) buf[x - x0] = f(Access{in + x, sx, sp, x, y, z});
                    for (std::size_t x = hi; x < x0 + n; ++x) buf[x - x0] = in[x];
                    stream_store(out + x0, buf, n);
                }
            } else {
                const double* __restrict ip = in;
                double* __restrict op = out;
                for (std::size_t x = x_lo; x < x_hi; ++x) op[x] = f(Access{ip + x, sx, sp, x, y, z});
            }
        }
    }
}
}  // namespace detail

class Skeleton {
public:
    // Checks the input (check_grid; the team's size against the interior
    // slabs; Options consistency: explicit_policy iff explicit_plan, weights
    // count and sign, chunk), allocates two arrays, places them as the mode
    // says, initialises every cell with init on the placing threads, and —
    // with verify_placement — asks the kernel where every page went.
    // Throws Error naming the input; a failed constructor releases
    // everything it made and changes no policy of other memory.
    Skeleton(Team& team, const Shape& shape, const Neighbourhood& nb, const InitFn& init, Options options = {});
    ~Skeleton();
    Skeleton(const Skeleton&) = delete;
    Skeleton& operator=(const Skeleton&) = delete;

    // Double-buffered sweeps; after each sweep the arrays swap.
    template <class F>
    Report jacobi(std::size_t sweeps, const F& update) {
        return run(Kind::jacobi, sweeps, &update, &detail::run_piece<F>);
    }
    // The same, for updates whose reads depend on the data; the
    // neighbourhood given at construction is their bound (a box of radius R
    // for "anything within R"), and traffic is accounted over that bound.
    template <class F>
    Report variable(std::size_t sweeps, const F& update) {
        return run(Kind::variable, sweeps, &update, &detail::run_piece<F>);
    }
    // In place, in lexicographic order (x fastest, then y, then z), exactly
    // as a serial loop would: a wavefront over tiles. Rank t starts tile j
    // of a sweep once rank t-1 has finished tile j+1 (so t-1 sees old values
    // below it and t sees new values above it). Static distributions only.
    template <class F>
    Report gauss_seidel(std::size_t sweeps, const F& update) {
        return run(Kind::gauss_seidel, sweeps, &update, &detail::run_piece<F>);
    }
    // In place: all cells with (x+y+z) even, a barrier, then all odd ones.
    template <class F>
    Report red_black(std::size_t sweeps, const F& update) {
        return run(Kind::red_black, sweeps, &update, &detail::run_piece<F>);
    }

    // The current value of a cell (the array the last sweep wrote).
    double at(std::size_t x, std::size_t y, std::size_t z = 0) const;
    const Layout& layout() const;
    const Neighbourhood& neighbourhood() const;
    // The static cut (work and owned blocks): equal, or weighted for
    // numa_weighted (then the pages follow the weighted cut too).
    const Partition& partition() const;
    const PlacementReport& placement() const;     // from the constructor
    // The kernel's node of every page of the current array (move_pages now).
    std::vector<int> page_nodes() const;

private:
    Report run(Kind kind, std::size_t sweeps, const void* update, detail::PieceFn piece);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// =====================================================================
// Multigrid V-cycle (like NAS MG) and butterfly phases (like an FFT)
// =====================================================================

struct MultigridOptions {
    unsigned levels = 0;        // 0: as many as halve down to 3 interior cells per axis
    unsigned pre_smooth = 1;    // damped-Jacobi sweeps before restriction
    unsigned post_smooth = 1;   // and after prolongation
    double omega = 2.0 / 3.0;   // Jacobi damping
};

// Solves -Laplace(u) = f (7-point in 3-D, 5-point in 2-D, h = 1) with
// u = 0 on the boundary, by V-cycles: on each level, pre-smooth, residual,
// full-weighting restriction to the coarser grid, recurse, trilinear
// (bilinear) prolongation and correction, post-smooth. Fine extents must
// be 2^k + 1 per axis (Error("grid", ...) otherwise). Every level's arrays
// are placed with the same mode and cut the same way (a coarse slab's
// rank is the rank of the fine slab it comes from), so restriction and
// prolongation stay on the node.
class Multigrid {
public:
    Multigrid(Team& team, const Shape& finest, const InitFn& rhs, Options options = {},
              MultigridOptions mg = {});
    ~Multigrid();
    Multigrid(const Multigrid&) = delete;
    Multigrid& operator=(const Multigrid&) = delete;

    Report vcycles(std::size_t cycles);   // kind "multigrid"; sweeps = cycles
    double at(std::size_t x, std::size_t y, std::size_t z = 0) const;   // u on the finest level
    double residual_norm() const;         // max-norm of f + Laplace(u) on the finest interior
    unsigned levels() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Butterfly phases over n = 2^k doubles: in phase p (0 ≤ p < k) every
// element i is replaced by f(v[i], v[i ^ (1 << p)], i, p), double-buffered,
// with a barrier between phases. The partner distance doubles each phase,
// so the halo changes: phases whose distance is below a block stay on the
// node, the others read whole remote blocks. Blocks are page-aligned
// (n ≥ 512 · threads, Error("n", ...) otherwise, and a power of two).
class Butterfly {
public:
    Butterfly(Team& team, std::size_t n, const std::function<double(std::size_t)>& init, Options options = {});
    ~Butterfly();
    Butterfly(const Butterfly&) = delete;
    Butterfly& operator=(const Butterfly&) = delete;

    using Fn = std::function<double(double self, double partner, std::size_t i, unsigned phase)>;
    // Runs all k phases once (a "sweep" is one phase in the report).
    Report run(const Fn& f);
    double at(std::size_t i) const;
    std::size_t size() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace numaware::stencil
