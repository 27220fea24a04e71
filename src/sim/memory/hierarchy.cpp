// sim/memory/hierarchy.cpp — MemorySim: cores replaying access streams
// through private L1D and L2, a shared L3 per socket and NUMA DRAM.
//
// Timing (a throughput model, not a cycle-accurate core):
//  * A core issues its accesses in program order. Between two accesses it
//    retires `gap` + 1 instructions at core_ipc per cycle. An access whose
//    address depends on the previous one (a chase) waits for that one's
//    data.
//  * Reorder window: an access cannot issue until every access more than
//    rob_window instructions older has its data (in-order retirement).
//    Stores do not hold retirement (a store buffer), but their misses
//    occupy MSHRs and bandwidth like loads (read for ownership).
//  * MSHRs: at most l1.mshrs misses of one core outstanding, and l3.mshrs
//    DRAM requests of one socket (demand and prefetch).
//  * Load-to-use latency of the level that answers (the cache figures are
//    load-to-use totals); a line still in flight answers when it arrives.
//    DRAM: the L3 latency, then the home controller and, for a remote
//    home, the link, each a server of line_bytes / bandwidth ns per line
//    (each line in the first idle stretch at or after its time: Server),
//    then latency_ns[socket][home].
//  * Fills go into every level on the way (no inclusion enforced; an L3
//    eviction does not invalidate private copies). Dirty evictions go one
//    level down; a dirty L3 eviction is a writeback that takes the home's
//    controller (and link) time.
//  * Coherence, write-invalidate: a store to a line that other caches may
//    hold removes their copies (a directory of possible holders per line),
//    so their next read misses. The store itself is not delayed (the store
//    buffer hides the invalidation); data modified in another cache is read
//    as any other miss is: from the socket's L3 if it holds a copy, else
//    from the home's DRAM.
//  * A phase run by more than one core ends with the team's barrier
//    (libgomp's: a shared counter taken line by line, then a release that
//    every waiter reads; barrier() below).
//  * Cores advance in global time order, a few accesses at a time (the one
//    furthest behind goes next), so shared queues see requests close to
//    the order they would have on the machine.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <queue>
#include <unordered_map>

#include <fmt/core.h>

#include "numaware/error.hpp"
#include "numaware/memory_sim.hpp"
#include "sim/memory/cache.hpp"
#include "sim/memory/directory.hpp"
#include "sim/memory/page_table.hpp"
#include "sim/memory/prefetchers.hpp"

namespace numaware::sim::memory {

using detail::Cache;
using detail::CacheLine;
using detail::Directory;
using detail::LineRef;
using detail::line_dirty;
using detail::line_prefetched;
using detail::Prediction;
using detail::Target;

namespace {

// Accesses a core takes from its stream at a time: small, so that the
// buffers of 16 or more cores stay in the host's caches.
constexpr std::size_t stream_batch = 256;

// Done times of requests in flight, earliest first: a ring kept in
// ascending order. Requests mostly finish in the order they were made, so
// a new one usually goes at the back (its place is found from there), and
// the earliest leaves from the front.
class Inflight {
public:
    explicit Inflight(std::size_t cap = 0) : cap_(cap) {
        std::size_t n = 1;
        while (n < cap + 1) n *= 2;
        ring_.resize(n);
        mask_ = n - 1;
    }
    // Whether all `cap` entries are still in flight at t (those done by t
    // leave first; nothing to look at while there is room).
    bool full_at(double t) {
        if (size_ < cap_) return false;
        while (size_ != 0 && ring_[head_] <= t) pop();
        return size_ >= cap_;
    }
    double earliest() const { return ring_[head_]; }
    void pop() {
        head_ = (head_ + 1) & mask_;
        --size_;
    }
    void push(double done) {
        if (size_ == ring_.size()) grow();
        std::size_t i = size_;
        for (; i > 0; --i) {
            const double before = ring_[(head_ + i - 1) & mask_];
            if (before <= done) break;
            ring_[(head_ + i) & mask_] = before;
        }
        ring_[(head_ + i) & mask_] = done;
        ++size_;
    }

private:
    void grow() {
        std::vector<double> bigger(2 * ring_.size());
        for (std::size_t i = 0; i < size_; ++i) bigger[i] = ring_[(head_ + i) & mask_];
        ring_.swap(bigger);
        mask_ = ring_.size() - 1;
        head_ = 0;
    }
    std::size_t cap_;
    std::vector<double> ring_;   // a power of two entries
    std::size_t mask_ = 0, head_ = 0, size_ = 0;
};

// Page number -> node position (-1: never touched).
using PageHomes = detail::PageTable<int>;

struct RobEntry {
    std::uint64_t instr;
    double done;
};

struct Core {
    std::uint32_t index = 0;   // in MemorySim::Impl::cores
    unsigned cpu = 0;
    unsigned socket = 0;   // node position
    Cache l1, l2;
    detail::Tlb tlb;
    std::vector<std::unique_ptr<detail::Prefetcher>> l1_prefetchers, l2_prefetchers;
    // The L1's only prefetcher when it is a stride one (stride, NASP,
    // multilevel): called directly, not through the vector.
    detail::StridePrefetcher* l1_stride = nullptr;
    Inflight mshr, l1_queue, l2_queue;
    std::vector<RobEntry> rob;   // ring of a power of two entries
    std::size_t rob_mask = 0;    // rob.size() - 1
    std::size_t rob_head = 0, rob_size = 0;
    double now = 0;
    double last_done = 0;
    double end = 0;
    // The homes of the pages the core used or predicted lately (a page's
    // home never changes once set): its accesses take turns among a few
    // streams' pages, which one remembered page misses, and a stride
    // prefetcher's predictions of one access are mostly those of the one
    // before, one page each for a stride of a page or more (a transpose).
    // Direct-mapped by a hash of the page number, so that pages a power of
    // two apart do not take one slot.
    static constexpr unsigned home_memo_bits = 8;
    struct KnownHome {
        std::uint64_t page_plus_1 = 0;   // 0: empty
        int home = -1;
    };
    std::array<KnownHome, std::size_t{1} << home_memo_bits> known_homes{};
    KnownHome& known_home_slot(std::uint64_t page) {
        return known_homes[static_cast<std::size_t>((page * 0x9E3779B97F4A7C15ull) >> (64 - home_memo_bits))];
    }
    std::uint64_t instr = 0;
    // The stream of the running phase, and its accesses at hand: `len` from
    // `next` (in the stream's buffer or in `buf`), `pos` of them replayed.
    AccessStream* stream = nullptr;
    std::vector<Access> buf;
    const Access* next = nullptr;
    std::size_t pos = 0, len = 0;
    bool active = false;
};

// A memory controller or a link: one line at a time, ns_per_line each.
// Requests do not come in time order: a core may be a little ahead of
// another (the turns below), and a request that waited for an MSHR asks
// for a time to come. Each takes the first idle stretch long enough at or
// after its time, so that a request for later never holds up one for
// sooner (a single "next free" time did: the link sat idle until the later
// one's turn). Requests in time order are served first come, first served,
// as by a next-free time. Busy stretches that end before `floor` (no
// request comes before it) are dropped.
class Server {
public:
    explicit Server(double ns_per_line = 0) : ns_(ns_per_line) {}
    // When a line asked for at t starts.
    double take(double t, double floor) {
        // The usual case: nothing booked at or after t.
        if (head_ == busy_.size() || busy_.back().end <= t) {
            if (head_ != busy_.size() && busy_.back().end == t) busy_.back().end = t + ns_;
            else append(Stretch{t, t + ns_}, floor);
            return t;
        }
        return fit(t, floor);
    }

private:
    struct Stretch {
        double start, end;
    };
    // The first idle stretch at or after t, something being booked after t.
    [[gnu::noinline]] double fit(double t, double floor) {
        while (busy_[head_].end <= floor) ++head_;   // the last one ends after t >= floor
        double s = t;
        std::size_t i = head_;
        while (busy_[i].end <= s) ++i;
        for (; i < busy_.size() && busy_[i].start < s + ns_; ++i) s = std::max(s, busy_[i].end);
        // [s, s + ns) lies between busy_[i - 1] and busy_[i]: joined to
        // either that it touches.
        const double e = s + ns_;
        const bool after = i > head_ && busy_[i - 1].end == s, before = i < busy_.size() && busy_[i].start == e;
        const auto at = [&](std::size_t k) { return busy_.begin() + static_cast<std::ptrdiff_t>(k); };
        if (after && before) {
            busy_[i - 1].end = busy_[i].end;
            busy_.erase(at(i));
        } else if (after) {
            busy_[i - 1].end = e;
        } else if (before) {
            busy_[i].start = s;
        } else {
            busy_.insert(at(i), Stretch{s, e});
        }
        return s;
    }
    // A stretch after the others, the ones that end before `floor`
    // dropped (from the front, a few at a time).
    [[gnu::noinline]] void append(Stretch x, double floor) {
        while (head_ < busy_.size() && busy_[head_].end <= floor) ++head_;
        if (head_ > 32 && head_ * 2 > busy_.size()) {
            busy_.erase(busy_.begin(), busy_.begin() + static_cast<std::ptrdiff_t>(head_));
            head_ = 0;
        }
        busy_.push_back(x);
    }
    double ns_;
    std::vector<Stretch> busy_;   // from head_ on: in time order, apart
    std::size_t head_ = 0;
};

struct Socket {
    Cache l3;
    Inflight mshr, l3_queue;
};

}  // namespace

struct MemorySim::Impl {
    HierarchyPreset p;
    PrefetchSpec spec;
    PageMapping mapping;
    std::vector<Core> cores;
    std::vector<Socket> sockets;
    std::unordered_map<unsigned, std::size_t> core_of_cpu;
    PageHomes homes{-1};
    Directory directory;
    std::vector<Server> memory;              // per node: its controller
    std::vector<std::vector<Server>> link;   // [reader][home]
    double time_floor = 0;                   // no request comes before it (run())
    std::vector<std::vector<double>> lat;
    double cyc = 0.5;
    double l1_ns = 0, l2_ns = 0, l3_ns = 0;
    unsigned line_shift = 6, page_shift = 12;
    std::uint64_t line_offset_mask = 63;
    double clock = 0;              // the end of the last phase
    int barrier_line_socket = -1;  // where the barrier's counter line was left (none yet)
    MemoryReport r;
    MemoryReport phase;           // the last run's counters alone
    std::uint64_t replayed = 0;   // every access, counted phases or not
    std::vector<Prediction> preds;

    Impl(HierarchyPreset preset, PrefetchSpec prefetch, PageMapping m)
        : p(std::move(preset)), spec(std::move(prefetch)), mapping(std::move(m)) {
        p.validate();
        const std::size_t n = p.sockets();
        if (mapping.kind == PageMapping::Kind::bind && mapping.node >= n)
            throw Error("mapping", fmt::format("bind:{}: the preset has nodes 0..{}", mapping.node, n - 1));
        if (mapping.kind != PageMapping::Kind::first_touch && mapping.kind != PageMapping::Kind::interleave &&
            mapping.kind != PageMapping::Kind::bind)
            throw Error("mapping", fmt::format("'{}' depends on the team: run_workload resolves it (MemorySim takes "
                                               "first-touch, interleave or bind:N)",
                                               mapping.text));
        cyc = p.cycle_ns();
        l1_ns = p.l1.latency_cycles * cyc;
        l2_ns = p.l2.latency_cycles * cyc;
        l3_ns = p.l3.latency_cycles * cyc;
        for (std::size_t k = 0; k < retire_ns.size(); ++k) retire_ns[k] = retiring_ns(k);
        rob_slack_ns = retiring_ns(p.rob_window) / 2;
        while ((1u << line_shift) < p.line_bytes) ++line_shift;
        line_offset_mask = p.line_bytes - 1;
        while ((1u << page_shift) < p.page_bytes) ++page_shift;
        directory = Directory(page_shift - line_shift);
        lat = p.timed.latency_ns;
        link.assign(n, {});
        for (std::size_t a = 0; a < n; ++a) {
            memory.emplace_back(p.line_bytes / p.timed.memory_gbps[a]);
            for (std::size_t b = 0; b < n; ++b) link[a].emplace_back(a != b ? p.line_bytes / p.timed.link_gbps[a][b] : 0.0);
        }
        const unsigned far_queue = spec.far_degree > spec.l1_degree ? spec.far_degree - spec.l1_degree + 4 : 4;
        for (std::size_t s = 0; s < n; ++s) {
            Socket so;
            so.l3 = Cache(p.l3.bytes, p.l3.ways, p.line_bytes);
            so.mshr = Inflight(p.l3.mshrs);
            so.l3_queue = Inflight(static_cast<std::size_t>(far_queue) * p.l3_slices);
            sockets.push_back(std::move(so));
        }
        for (std::size_t s = 0; s < n; ++s) {
            for (unsigned cpu : p.timed.machine.nodes[s].cpus) {
                Core c;
                c.cpu = cpu;
                c.socket = static_cast<unsigned>(s);
                c.l1 = Cache(p.l1.bytes, p.l1.ways, p.line_bytes);
                c.l2 = Cache(p.l2.bytes, p.l2.ways, p.line_bytes);
                c.tlb = detail::Tlb(p.tlb_entries);
                for (auto& pf : detail::make_prefetchers(spec, p.page_bytes / p.line_bytes))
                    (pf->level() == detail::Level::l1 ? c.l1_prefetchers : c.l2_prefetchers).push_back(std::move(pf));
                if (c.l1_prefetchers.size() == 1)
                    c.l1_stride = dynamic_cast<detail::StridePrefetcher*>(c.l1_prefetchers.front().get());
                c.mshr = Inflight(p.l1.mshrs);
                // Each prefetch queue: the largest degree its level sees + 8.
                c.l1_queue = Inflight(spec.l1_degree + 8);
                c.l2_queue = Inflight(spec.l2_degree + 8);
                std::size_t ring = 1;
                while (ring < p.rob_window) ring *= 2;
                c.rob.resize(ring);   // every access is an instruction: at most rob_window in the window
                c.rob_mask = ring - 1;
                c.index = static_cast<std::uint32_t>(cores.size());
                core_of_cpu[cpu] = cores.size();
                cores.push_back(std::move(c));
            }
        }
        r.preset = p.name;
        r.prefetch = spec.text.empty() ? "none" : spec.text;
        r.mapping = mapping.text;
    }

    // ---- pages ------------------------------------------------------------
    // The page's home, or -1 while it has none: the core's memo first.
    int known_home(std::uint64_t page, Core& c) {
        Core::KnownHome& k = c.known_home_slot(page);
        if (k.page_plus_1 == page + 1) return k.home;
        const int h = homes.find(page);
        if (h >= 0) k = Core::KnownHome{page + 1, h};
        return h;
    }
    int home_for_demand(std::uint64_t page, Core& c) {
        int h = known_home(page, c);
        if (h < 0) {
            switch (mapping.kind) {
                case PageMapping::Kind::first_touch: h = static_cast<int>(c.socket); break;
                case PageMapping::Kind::bind: h = static_cast<int>(mapping.node); break;
                case PageMapping::Kind::interleave:   // by page number, as Linux's MPOL_INTERLEAVE does by page offset
                    h = static_cast<int>(page % sockets.size());
                    break;
                default: h = static_cast<int>(c.socket); break;   // refused by the constructor
            }
            homes.set(page, h);
            c.known_home_slot(page) = Core::KnownHome{page + 1, h};
        }
        return h;
    }

    // ---- DRAM -------------------------------------------------------------
    // A line read from `home` for `socket`, requested at t (after the L3).
    double dram_read(unsigned socket, unsigned home, double t) {
        Socket& so = sockets[socket];
        if (so.mshr.full_at(t)) {
            t = std::max(t, so.mshr.earliest());
            so.mshr.pop();
        }
        double start = memory[home].take(t, time_floor);
        if (home != socket) {
            start = link[socket][home].take(start, time_floor);
            r.dram_remote_bytes += p.line_bytes;
        } else {
            r.dram_local_bytes += p.line_bytes;
        }
        const double done = start + lat[socket][home];
        so.mshr.push(done);
        r.l3.fill_bytes += p.line_bytes;
        return done;
    }
    void writeback(unsigned socket, std::uint64_t line, double t) {
        const int h = homes.find(line >> (page_shift - line_shift));
        const unsigned home = h >= 0 ? static_cast<unsigned>(h) : socket;
        const double start = memory[home].take(t, time_floor);
        // The data flows from `socket` to `home`: the other direction of the
        // path a read from `home` takes, indexed [reader][home].
        if (home != socket) link[home][socket].take(start, time_floor);
        r.writeback_bytes += p.line_bytes;
    }

    // ---- fills and evictions ----------------------------------------------
    void evicted(const CacheLine& old) {
        if (old.tag != 0 && (old.flags & line_prefetched) != 0) ++r.prefetch_counts.unused_evicted;
    }
    void fill_l3(unsigned socket, std::uint64_t line, double ready, std::uint8_t flags, double t) {
        Directory::Entry& e = directory.at(line);
        e.sockets |= Directory::socket_bit(socket);
        // A copy on another socket: the owner's next store must find it.
        if (e.owner >= 0 && cores[static_cast<std::size_t>(e.owner)].socket != socket) release(e, line);
        const CacheLine old = sockets[socket].l3.insert(line, ready, flags);
        evicted(old);
        if (old.tag != 0 && (old.flags & line_dirty) != 0) writeback(socket, old.line(), t);
    }
    void fill_l2(Core& c, std::uint64_t line, double ready, std::uint8_t flags, double t) {
        Directory::Entry& e = directory.at(line);
        e.cores |= Directory::core_bit(c.index);
        if (e.owner >= 0 && static_cast<std::uint32_t>(e.owner) != c.index) release(e, line);
        const CacheLine old = c.l2.insert(line, ready, flags);
        r.l2.fill_bytes += p.line_bytes;
        evicted(old);
        if (old.tag != 0 && (old.flags & line_dirty) != 0) {
            Socket& so = sockets[c.socket];
            if (const LineRef x = so.l3.find(old.line())) x.flags() |= line_dirty;
            else fill_l3(c.socket, old.line(), t, line_dirty, t);
        }
    }
    void fill_l1(Core& c, std::uint64_t line, double ready, std::uint8_t flags, double t) {
        const CacheLine old = c.l1.insert(line, ready, flags);
        r.l1.fill_bytes += p.line_bytes;
        evicted(old);
        if (old.tag != 0 && (old.flags & line_dirty) != 0) {
            if (const LineRef x = c.l2.find(old.line())) x.flags() |= line_dirty;
            else fill_l2(c, old.line(), t, line_dirty, t);
        }
    }

    // ---- coherence (write-invalidate) --------------------------------------
    // Another cache takes a copy of e's line: its owner's next store must
    // invalidate it.
    void release(Directory::Entry& e, std::uint64_t line) {
        if (const LineRef x = cores[static_cast<std::size_t>(e.owner)].l1.find(line))
            x.flags() &= static_cast<std::uint8_t>(~detail::line_exclusive);
        e.owner = -1;
    }
    // c writes `line` (present in its L1): every other core's L1 and L2 copy
    // and every other socket's L3 copy goes, and c owns the line until
    // another cache takes a copy. Its own socket's L3 copy stays: a core of
    // that socket reading it later finds it there (an on-die transfer,
    // taken at the L3's latency).
    [[gnu::noinline]] void own(Core& c, std::uint64_t line) {
        Directory::Entry& e = directory.at(line);
        const std::uint64_t mine = Directory::core_bit(c.index);
        for (std::uint64_t m = e.cores; m != 0; m &= m - 1)
            for (std::size_t k = static_cast<std::size_t>(std::countr_zero(m)); k < cores.size(); k += 64)
                if (k != c.index) {
                    Core& o = cores[k];
                    if (const LineRef x = o.l1.find(line)) {
                        o.l1.erase(x);
                        ++r.invalidations;
                    }
                    if (const LineRef y = o.l2.find(line)) {
                        o.l2.erase(y);
                        ++r.invalidations;
                    }
                }
        const std::uint32_t my_socket = Directory::socket_bit(c.socket);
        for (std::uint32_t m = e.sockets; m != 0; m &= m - 1)
            for (std::size_t s = static_cast<std::size_t>(std::countr_zero(m)); s < sockets.size(); s += 32)
                if (s != c.socket)
                    if (const LineRef z = sockets[s].l3.find(line)) {
                        sockets[s].l3.erase(z);
                        ++r.invalidations;
                    }
        e.cores = mine;
        e.sockets &= my_socket;
        e.owner = static_cast<std::int32_t>(c.index);
        if (const LineRef x = c.l1.find(line)) x.flags() |= detail::line_exclusive;
    }

    // A used prefetched line: useful, and late if it was still in flight.
    // True if it was one.
    bool used(const LineRef& l, double wanted) {
        if ((l.flags() & line_prefetched) == 0) return false;
        l.flags() &= static_cast<std::uint8_t>(~line_prefetched);
        ++r.prefetch_counts.useful;
        if (l.ready() > wanted) ++r.prefetch_counts.late;
        return true;
    }

    // ---- a demand access ----------------------------------------------------
    // Returns the time its data is there; `t`, the issue time, moves on
    // when the core has to wait for an MSHR.
    [[gnu::always_inline]] double demand(Core& c, const Access& a, double& t) {
        const std::uint64_t line = a.addr >> line_shift;
        const std::uint64_t page = a.addr >> page_shift;
        c.tlb.access(page);
        const std::uint8_t dirty = a.write ? line_dirty : 0;
        double done;
        bool l1_hit = false, l1_prefetch_hit = false, exclusive = false;
        ++r.l1.demand_accesses;
        if (const LineRef x = c.l1.find(line)) {
            l1_hit = true;
            exclusive = (x.flags() & detail::line_exclusive) != 0;
            c.l1.touch(x);
            l1_prefetch_hit = used(x, t + l1_ns);
            x.flags() |= dirty;
            done = std::max(t + l1_ns, x.ready());
            ++r.l1.served;
            r.l1.served_latency_ns += done - t;
        } else {
            done = l1_miss(c, a, t, line, dirty);
        }
        // A store to a line that others may hold (the L1 copy is not
        // exclusive) invalidates their copies first. The store buffer hides
        // the invalidation's round trip from the core; the readers pay, with
        // a miss.
        if (a.write && !exclusive) own(c, line);
        if (c.l1_stride != nullptr)
            prefetch(c, *c.l1_stride, detail::Trigger{a.pc, line, l1_hit, l1_prefetch_hit, t}, line);
        else
            for (auto& pf : c.l1_prefetchers) prefetch(c, *pf, detail::Trigger{a.pc, line, l1_hit, l1_prefetch_hit, t}, line);
        return done;
    }

    // The further lines of an access that crosses lines, after its first
    // line's `done`: out of line.
    [[gnu::noinline]] double crossing(Core& c, const Access& a, double& t, double done) {
        const std::uint64_t first = a.addr >> line_shift;
        const std::uint64_t last = (a.addr + std::max<std::uint32_t>(a.size, 1) - 1) >> line_shift;
        for (std::uint64_t l = first + 1; l <= last && l <= first + 63; ++l) {
            Access part = a;
            part.addr = l << line_shift;
            done = std::max(done, demand(c, part, t));
        }
        return done;
    }

    // The rest of a demand access that missed the L1 (out of line: most
    // accesses hit, and their path stays short).
    [[gnu::noinline]] double l1_miss(Core& c, const Access& a, double& t, std::uint64_t line, std::uint8_t dirty) {
        double done;
        ++r.l1.demand_misses;
        // What an L2 miss reads next, asked of the host now, beside the L2
        // lookup: the socket's L3 set and the line's directory entry (which
        // exists: the line was filled into an L2 before, or will be now).
        sockets[c.socket].l3.prefetch(line);
        __builtin_prefetch(&directory.at(line));
        if (c.mshr.full_at(t)) {
            t = std::max(t, c.mshr.earliest());
            c.mshr.pop();
        }
        const double issued = t;
        ++r.l2.demand_accesses;
        bool l2_hit = false, l2_prefetch_hit = false;
        if (const LineRef y = c.l2.find(line)) {
            l2_hit = true;
            c.l2.touch(y);
            l2_prefetch_hit = used(y, t + l2_ns);
            done = std::max(t + l2_ns, y.ready());
            ++r.l2.served;
            r.l2.served_latency_ns += done - issued;
        } else {
            ++r.l2.demand_misses;
            ++r.l3.demand_accesses;
            Socket& so = sockets[c.socket];
            if (const LineRef z = so.l3.find(line)) {
                so.l3.touch(z);
                used(z, t + l3_ns);
                done = std::max(t + l3_ns, z.ready());
                ++r.l3.served;
                r.l3.served_latency_ns += done - issued;
            } else {
                ++r.l3.demand_misses;
                ++r.dram.demand_accesses;
                // Only here does the access need its page's home, and here
                // is where a page's first access always lands (a line of a
                // page without a home is in no cache: prefetches drop
                // unmapped pages), so the first touch is taken here too.
                const int home = home_for_demand(a.addr >> page_shift, c);
                done = dram_read(c.socket, static_cast<unsigned>(home), t + l3_ns);
                ++r.dram.served;
                r.dram.served_latency_ns += done - issued;
                fill_l3(c.socket, line, done, 0, t);
            }
            fill_l2(c, line, done, 0, t);
        }
        fill_l1(c, line, done, dirty, t);
        c.mshr.push(done);
        for (auto& pf : c.l2_prefetchers) prefetch(c, *pf, detail::Trigger{a.pc, line, l2_hit, l2_prefetch_hit, t}, line);
        return done;
    }

    // ---- prefetches ---------------------------------------------------------
    // Most accesses predict nothing: that path stays small and inline.
    template <class P>
    void prefetch(Core& c, P& pf, const detail::Trigger& trig, std::uint64_t line) {
        preds.clear();
        pf.on_access(trig, preds);
        if (!preds.empty()) settle(c, pf, trig.now, line);
    }

    // The predictions of an access at t to `line`: dropped, or issued.
    [[gnu::noinline]] void settle(Core& c, detail::Prefetcher& pf, double t, std::uint64_t line) {
        const unsigned lines_per_page_shift = page_shift - line_shift;
        const std::uint64_t page = line >> lines_per_page_shift;
        const std::uint64_t page_lines = std::uint64_t{1} << lines_per_page_shift;
        // Predictions run in pages: look each page up once, and count the
        // lines of a page that all drop at once.
        std::uint64_t last_page = ~std::uint64_t{0};
        int home = -1;
        bool mapped = false;
        for (const Prediction& pr : preds) {
            for (std::uint32_t i = 0; i < pr.count;) {
                const std::uint64_t first = pr.at(i);
                const std::uint64_t pp = first >> lines_per_page_shift;
                // How many of the run's lines from `first` lie in page pp.
                // (The usual stride, one line, needs no division, nor does
                // a stride past the rest of the page, a transpose's; the
                // others fit a 32-bit one: room < lines per page <= 2^32.)
                const auto steps = [](std::uint64_t room, std::uint64_t step) -> std::uint64_t {
                    return step == 1 ? room
                           : step > room ? 0
                                         : static_cast<std::uint32_t>(room) / static_cast<std::uint32_t>(step);
                };
                std::uint64_t in_page = pr.count - i;
                if (pr.stride > 0) {
                    const std::uint64_t room = page_lines - 1 - (first & (page_lines - 1));
                    in_page = std::min(in_page, steps(room, static_cast<std::uint64_t>(pr.stride)) + 1);
                } else if (pr.stride < 0) {
                    const std::uint64_t room = first & (page_lines - 1);
                    in_page = std::min(in_page, steps(room, 0 - static_cast<std::uint64_t>(pr.stride)) + 1);
                }
                const std::uint32_t end = i + static_cast<std::uint32_t>(in_page);
                if (pp != last_page) {
                    last_page = pp;
                    home = known_home(pp, c);
                    mapped = home >= 0 && (pp == page || c.tlb.contains(pp));
                }
                if (!mapped) {
                    (home < 0 ? r.prefetch_counts.dropped_unmapped : r.prefetch_counts.dropped_tlb) += in_page;
                    i = end;
                    continue;
                }
                Target target = pr.target;
                if (target == Target::l3_if_remote) {
                    if (static_cast<unsigned>(home) == c.socket) {
                        r.prefetch_counts.dropped_local += in_page;
                        i = end;
                        continue;
                    }
                    target = Target::l3;
                }
                // A line already in the target (the usual case: the access
                // before predicted it too) costs a lookup alone.
                Cache& into = target == Target::l1 ? c.l1 : target == Target::l2 ? c.l2 : sockets[c.socket].l3;
                for (std::uint64_t l = pr.at(i); i < end; ++i, l += static_cast<std::uint64_t>(pr.stride))
                    if (!into.find(l)) issue(c, pf, l, target, static_cast<unsigned>(home), t);
            }
        }
    }

    // One prediction that passed the TLB and the home rule, absent from its
    // target.
    void issue(Core& c, detail::Prefetcher& pf, std::uint64_t line, Target target, unsigned home, double t) {
        Socket& so = sockets[c.socket];
        if (target == Target::l3) {
            if (so.l3_queue.full_at(t)) {
                ++r.prefetch_counts.dropped_queue;
                return;
            }
            const double done = dram_read(c.socket, home, t + l3_ns);
            fill_l3(c.socket, line, done, line_prefetched, t);
            so.l3_queue.push(done);
            ++r.prefetch_counts.issued_l3;
            pf.on_issued(line, done);
            return;
        }
        // L1 (and L2) targets.
        Inflight& queue = target == Target::l1 ? c.l1_queue : c.l2_queue;
        if (queue.full_at(t)) {
            ++r.prefetch_counts.dropped_queue;
            return;
        }
        // A prefetched line that an upper level's prefetch takes is
        // neither used by a demand nor unused: its mark goes.
        const auto taken = [](const LineRef& l) { l.flags() &= static_cast<std::uint8_t>(~line_prefetched); };
        double done;
        if (const LineRef y = target == Target::l1 ? c.l2.find(line) : LineRef{}) {
            taken(y);
            done = std::max(t + l2_ns, y.ready());
        } else if (const LineRef z = so.l3.find(line)) {
            taken(z);
            done = std::max(t + l3_ns, z.ready());
            fill_l2(c, line, done, target == Target::l2 ? line_prefetched : 0, t);
        } else {
            done = dram_read(c.socket, home, t + l3_ns);
            fill_l3(c.socket, line, done, 0, t);
            fill_l2(c, line, done, target == Target::l2 ? line_prefetched : 0, t);
        }
        if (target == Target::l1) {
            fill_l1(c, line, done, line_prefetched, t);
            ++r.prefetch_counts.issued_l1;
        } else {
            ++r.prefetch_counts.issued_l2;
        }
        queue.push(done);
        pf.on_issued(line, done);
    }

    // ---- the core's timing ----------------------------------------------
    // The time n instructions take to retire, and its values for small n
    // (the usual gaps), computed once by the same expression: no division
    // per access, and the same doubles.
    double retiring_ns(std::uint64_t n) const { return static_cast<double>(n) * cyc / p.core_ipc; }
    std::array<double, 64> retire_ns{};
    double rob_slack_ns = 0;   // step()

    void step(Core& c, const Access& a) {
        // The gap's instructions and the access's own (unless the previous
        // access's instruction made this one too).
        const std::uint64_t retired = std::uint64_t{a.gap} + (a.same_instruction ? 0 : 1);
        c.instr += retired;
        double t = c.now + (retired < retire_ns.size() ? retire_ns[retired] : retiring_ns(retired));
        if (a.dependent) t = std::max(t, c.last_done);
        // In-order retirement bounds the window.
        while (c.rob_size > 0) {
            const RobEntry& e = c.rob[c.rob_head];
            if (e.instr + p.rob_window > c.instr) break;
            t = std::max(t, e.done);
            c.rob_head = (c.rob_head + 1) & c.rob_mask;
            --c.rob_size;
        }
        double done = demand(c, a, t);
        // An access that crosses lines (rare: its offset in the line plus
        // its size passes the line's end; a size of 0 counts as 1, which
        // never does) looks each of them up (at most 64).
        if ((a.addr & line_offset_mask) + a.size > p.line_bytes) done = crossing(c, a, t, done);
        const double retire = a.write ? t + l1_ns : done;
        // The window leaves an access behind once rob_window instructions
        // have followed it, and those take at least retiring_ns(rob_window)
        // of the core's clock. An access retiring within half that of its
        // issue (an L1 hit, mostly) can never hold the core: it is not
        // kept. (The clock's rounding over a window is far below the other
        // half, for any run shorter than years.)
        if (retire > t + rob_slack_ns) {
            c.rob[(c.rob_head + c.rob_size) & c.rob_mask] = RobEntry{c.instr, retire};
            ++c.rob_size;
        }
        c.now = t;
        c.last_done = done;
        c.end = std::max(c.end, done);
        ++r.accesses;
        ++replayed;
    }

    // The team's barrier at the end of a phase, as libgomp's (its Linux
    // barrier, config/linux/bar.c): each thread, as it arrives, updates one
    // shared counter atomically, and the last one to arrive bumps the
    // generation word that the others spin on. An atomic update needs the
    // counter's line exclusive, so the arrivals take it one after another,
    // each from the thread before: within a socket through the L3 (its
    // latency), across sockets at the (taker, holder) DRAM latency, which is
    // what the coherence rule charges for a line modified elsewhere. Then
    // the waiters read the generation line from the last one, in parallel.
    // Returns when the last thread leaves; the line stays where the last
    // arrival took it, for the next phase's barrier.
    double barrier(const std::vector<std::size_t>& team) {
        std::vector<std::size_t> order(team);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return cores[a].end < cores[b].end; });
        const auto transfer = [&](unsigned from, unsigned to) { return from == to ? l3_ns : lat[to][from]; };
        unsigned holder = barrier_line_socket >= 0 ? static_cast<unsigned>(barrier_line_socket) : cores[order.front()].socket;
        double t = 0;
        for (const std::size_t i : order) {
            t = std::max(t, cores[i].end) + transfer(holder, cores[i].socket);
            holder = cores[i].socket;
        }
        double leave = t;
        for (const std::size_t i : order) leave = std::max(leave, t + transfer(holder, cores[i].socket));
        barrier_line_socket = static_cast<int>(holder);
        return leave;
    }

    bool refill(Core& c) {
        const std::span<const Access> got = c.stream->next_in_place(std::span<Access>(c.buf));
        if (got.size() > c.buf.size()) throw Error("stream", "returned more accesses than asked for");
        c.next = got.data();
        c.len = got.size();
        c.pos = 0;
        return c.len != 0;
    }

    double run(std::vector<ThreadStream>& streams) {
        std::vector<std::size_t> active;
        for (const ThreadStream& s : streams) {
            const auto it = core_of_cpu.find(s.core);
            if (it == core_of_cpu.end())
                throw Error("core", fmt::format("CPU {} is not a core of {} (cores 0..{})", s.core, p.name,
                                                cores.size() - 1));
            if (std::find(active.begin(), active.end(), it->second) != active.end())
                throw Error("core", fmt::format("CPU {} is given two streams", s.core));
            if (s.stream == nullptr) throw Error("stream", fmt::format("CPU {} has no stream", s.core));
            active.push_back(it->second);
        }
        const double start = clock;
        for (std::size_t i = 0; i < streams.size(); ++i) {
            Core& c = cores[active[i]];
            c.stream = streams[i].stream.get();
            c.buf.resize(stream_batch);
            c.now = c.last_done = c.end = start;
            c.rob_head = c.rob_size = 0;
            c.active = refill(c);
        }
        // The core furthest behind goes next, for up to `batch` accesses
        // while it stays less than one L3 hit latency ahead of the next one:
        // shared queues see requests out of machine order by at most that.
        constexpr int batch = 64;
        const double quantum = l3_ns;
        using Turn = std::pair<double, std::size_t>;
        std::priority_queue<Turn, std::vector<Turn>, std::greater<>> turns;
        for (std::size_t i : active)
            if (cores[i].active) turns.emplace(cores[i].now, i);
        while (!turns.empty()) {
            const std::size_t i = turns.top().second;
            time_floor = turns.top().first;   // the core furthest behind: nobody asks for sooner
            turns.pop();
            Core& c = cores[i];
            const double second = turns.empty() ? std::numeric_limits<double>::infinity() : turns.top().first + quantum;
            for (int k = 0; k < batch && c.now <= second; ++k) {
                step(c, c.next[c.pos]);
                if (++c.pos == c.len && !(c.active = refill(c))) break;
            }
            if (c.active) turns.emplace(c.now, i);
        }
        double last = start;
        for (std::size_t i : active) {
            Core& c = cores[i];
            for (std::size_t k = 0; k < c.rob_size; ++k)
                c.end = std::max(c.end, c.rob[(c.rob_head + k) & c.rob_mask].done);
            last = std::max(last, c.end);
            r.instructions += c.instr;
            c.instr = 0;
            c.stream = nullptr;
        }
        const double end = active.size() > 1 ? barrier(active) : last;
        r.barrier_s += (end - last) * 1e-9;
        clock = end;
        r.simulated_s += (end - start) * 1e-9;
        return (end - start) * 1e-9;
    }
};

MemorySim::MemorySim(HierarchyPreset preset, PrefetchSpec prefetch, PageMapping mapping)
    : impl_(std::make_unique<Impl>(std::move(preset), std::move(prefetch), std::move(mapping))) {}
MemorySim::~MemorySim() = default;

namespace {

// after - before, counter by counter (the names come from `after`).
LevelCounters minus(const LevelCounters& a, const LevelCounters& b) {
    return {a.demand_accesses - b.demand_accesses, a.demand_misses - b.demand_misses, a.fill_bytes - b.fill_bytes,
            a.served - b.served, a.served_latency_ns - b.served_latency_ns};
}
MemoryReport minus(const MemoryReport& a, const MemoryReport& b) {
    MemoryReport d = a;
    d.simulated_s = a.simulated_s - b.simulated_s;
    d.accesses = a.accesses - b.accesses;
    d.instructions = a.instructions - b.instructions;
    d.l1 = minus(a.l1, b.l1);
    d.l2 = minus(a.l2, b.l2);
    d.l3 = minus(a.l3, b.l3);
    d.dram = minus(a.dram, b.dram);
    d.dram_local_bytes = a.dram_local_bytes - b.dram_local_bytes;
    d.dram_remote_bytes = a.dram_remote_bytes - b.dram_remote_bytes;
    d.writeback_bytes = a.writeback_bytes - b.writeback_bytes;
    d.invalidations = a.invalidations - b.invalidations;
    d.barrier_s = a.barrier_s - b.barrier_s;
    const PrefetchCounters &x = a.prefetch_counts, &y = b.prefetch_counts;
    d.prefetch_counts = {x.issued_l1 - y.issued_l1,           x.issued_l2 - y.issued_l2,
                         x.issued_l3 - y.issued_l3,           x.useful - y.useful,
                         x.late - y.late,                     x.unused_evicted - y.unused_evicted,
                         x.dropped_queue - y.dropped_queue,   x.dropped_tlb - y.dropped_tlb,
                         x.dropped_unmapped - y.dropped_unmapped, x.dropped_local - y.dropped_local};
    return d;
}

// The energy estimate of a report's counters (HierarchyPreset's energies).
MemoryReport with_energy(MemoryReport r, const HierarchyPreset& p) {
    const double line = p.line_bytes;
    const auto lookups = [&](const LevelCounters& c) {
        return static_cast<double>(c.demand_accesses) + static_cast<double>(c.fill_bytes) / line;
    };
    r.energy_cache_j = (lookups(r.l1) * p.l1_access_pj + lookups(r.l2) * p.l2_access_pj + lookups(r.l3) * p.l3_access_pj) * 1e-12;
    r.energy_dram_j =
        static_cast<double>(r.dram_local_bytes + r.dram_remote_bytes + r.writeback_bytes) / line * p.dram_line_nj * 1e-9;
    r.energy_static_j = p.static_w_per_socket * p.sockets() * r.simulated_s;
    return r;
}

}  // namespace

double MemorySim::run(std::vector<ThreadStream> streams, bool counted) {
    const MemoryReport before = impl_->r;
    const double s = impl_->run(streams);
    if (counted) {
        impl_->phase = minus(impl_->r, before);
    } else {
        impl_->r = before;
        impl_->phase = minus(before, before);
    }
    return s;
}

int MemorySim::home_of(std::uint64_t addr) const { return impl_->homes.find(addr >> impl_->page_shift); }

void MemorySim::place(std::uint64_t page, unsigned node) {
    if (node >= impl_->sockets.size())
        throw Error("node", fmt::format("{}: {} has nodes 0..{}", node, impl_->p.name, impl_->sockets.size() - 1));
    if (impl_->homes.find(page) >= 0)
        throw Error("page", fmt::format("page {:#x} already lives on node {}", page, impl_->homes.find(page)));
    impl_->homes.set(page, static_cast<int>(node));
}

MemoryReport MemorySim::phase_report() const { return with_energy(impl_->phase, impl_->p); }

MemoryReport MemorySim::report() const { return with_energy(impl_->r, impl_->p); }

std::uint64_t MemorySim::accesses_simulated() const { return impl_->replayed; }

PageMapping parse_page_mapping(std::string_view text) {
    PageMapping m;
    m.text = std::string(text);
    if (text == "first-touch") return m;
    if (text == "interleave") {
        m.kind = PageMapping::Kind::interleave;
        return m;
    }
    if (text.starts_with("bind:")) {
        const std::string_view n = text.substr(5);
        unsigned v = 0;
        const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
        if (!n.empty() && ec == std::errc() && end == n.data() + n.size()) {
            m.kind = PageMapping::Kind::bind;
            m.node = v;
            return m;
        }
    }
    static constexpr std::pair<std::string_view, PageMapping::Kind> named[] = {
        {"local", PageMapping::Kind::local},
        {"remote", PageMapping::Kind::remote},
        {"locality", PageMapping::Kind::locality},
        {"balance", PageMapping::Kind::balance}};
    for (const auto& [name, kind] : named)
        if (text == name) {
            m.kind = kind;
            return m;
        }
    throw Error("mapping", fmt::format("unknown page mapping '{}'; known: first-touch, interleave, bind:N, local, "
                                       "remote, locality, balance",
                                       text));
}

}  // namespace numaware::sim::memory
