// tests/unit/sim_memory_census.hpp — what the tests of the memory-
// hierarchy simulator's built-in kernels (the NAS kernels, the Rodinia-like
// kernels) share: a census of a kernel's accesses on thesis-4s with 16
// threads under first touch (by phase kind and array, remote or local at
// page level, the homes init leaves, each PC's usual stride) and a plain
// run under a prefetcher.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "numaware/memory_sim.hpp"
#include "numaware/team.hpp"
#include "sim/memory/arrays.hpp"

namespace numaware::test::memsim {

namespace mem = numaware::sim::memory;

constexpr unsigned threads = 16;
constexpr std::uint64_t page = 4096;

// Accesses of one (phase kind, array): the phase kind is the phase name
// without its "iterN:"/"stepN:" prefix and its ":h<hyperplane>" suffix.
struct Tally {
    std::uint64_t accesses = 0;
    std::uint64_t remote = 0;   // to a page homed on another socket than the thread's
};

struct Census {
    std::uint64_t measured = 0;     // accesses of the measured phases
    std::uint64_t remote = 0;
    std::uint64_t unhomed = 0;      // to a page that no earlier phase touched
    std::uint64_t wrong_home = 0;   // pages homed on no socket of a thread that accesses them
    std::uint64_t pages = 0;        // distinct pages of the measured phases
    std::map<unsigned, std::uint64_t> homes;   // those pages by the socket they are homed on
    std::uint64_t init_accesses = 0;   // accesses of the unmeasured phases
    std::uint64_t init_foreign = 0;    // of those, to pages homed on another socket than the thread's
    std::map<std::string, std::map<unsigned, Tally>> by;   // [kind][array]
    // Rank 0's most frequent address step between two accesses of one PC, per kind.
    std::map<std::string, std::map<std::uint64_t, std::int64_t>> stride;
    mem::MemoryReport report;       // the run itself (prefetch none)
    Tally of(const std::string& kind) const {
        Tally t;
        if (const auto it = by.find(kind); it != by.end())
            for (const auto& [a, x] : it->second) {
                t.accesses += x.accesses;
                t.remote += x.remote;
            }
        return t;
    }
    Tally of(const std::string& kind, unsigned array) const {
        const auto it = by.find(kind);
        if (it == by.end()) return {};
        const auto jt = it->second.find(array);
        return jt == it->second.end() ? Tally{} : jt->second;
    }
};

inline std::string kind_of(const std::string& phase) {
    std::string k = phase.substr(phase.find(':') + 1);
    const std::size_t cut = k.rfind(':');
    if (cut != std::string::npos && cut + 1 < k.size() && k[cut + 1] == 'h') k.resize(cut);
    return k;
}

// Replays the workload on thesis-4s, 16 threads, first touch, no
// prefetcher; before each measured phase, walks a second copy of its
// streams against the page homes left so far.
inline Census census(const mem::Workload& w, const std::string& preset = "thesis-4s") {
    const mem::HierarchyPreset p = mem::preset(preset);
    numaware::TeamMapping tm;
    tm.threads = threads;
    const numaware::TeamLayout layout = numaware::plan_team(p.timed.machine, tm);
    std::map<unsigned, unsigned> socket_of;
    for (unsigned s = 0; s < p.sockets(); ++s)
        for (unsigned cpu : p.timed.machine.nodes[s].cpus) socket_of[cpu] = s;
    mem::MemorySim sim(p, mem::parse_prefetch("none"), mem::parse_page_mapping("first-touch"));
    Census c;
    std::map<std::uint64_t, unsigned> masks;   // page -> sockets of the threads that access it
    std::vector<mem::Access> buf(4096);
    for (unsigned ph = 0; ph < w.phases(); ++ph) {
        if (w.measured(ph)) {
            const std::string kind = kind_of(w.phase_name(ph));
            std::vector<mem::ThreadStream> streams = w.streams(ph, p, layout);
            for (std::size_t r = 0; r < streams.size(); ++r) {
                const unsigned socket = socket_of.at(streams[r].core);
                std::map<std::uint64_t, std::uint64_t> last;
                std::map<std::uint64_t, std::map<std::int64_t, std::uint64_t>> steps;
                for (std::size_t n; (n = streams[r].stream->next(buf)) != 0;)
                    for (std::size_t i = 0; i < n; ++i) {
                        const mem::Access& a = buf[i];
                        const int home = sim.home_of(a.addr);
                        Tally& t = c.by[kind][mem::detail::array_of(a.addr)];
                        ++t.accesses;
                        ++c.measured;
                        if (home < 0) ++c.unhomed;
                        if (home >= 0 && static_cast<unsigned>(home) != socket) {
                            ++t.remote;
                            ++c.remote;
                        }
                        masks[a.addr / page] |= 1u << socket;
                        if (r == 0) {
                            if (const auto it = last.find(a.pc); it != last.end())
                                ++steps[a.pc][static_cast<std::int64_t>(a.addr - it->second)];
                            last[a.pc] = a.addr;
                        }
                    }
                for (const auto& [pc, h] : steps)
                    c.stride[kind][pc] =
                        std::max_element(h.begin(), h.end(), [](auto& x, auto& y) { return x.second < y.second; })->first;
            }
        }
        sim.run(w.streams(ph, p, layout), w.measured(ph));
        if (!w.measured(ph)) {
            // What the unmeasured phase (init) touched, against the homes it left.
            std::vector<mem::ThreadStream> streams = w.streams(ph, p, layout);
            for (std::size_t r = 0; r < streams.size(); ++r) {
                const unsigned socket = socket_of.at(streams[r].core);
                for (std::size_t n; (n = streams[r].stream->next(buf)) != 0;)
                    for (std::size_t i = 0; i < n; ++i) {
                        ++c.init_accesses;
                        if (sim.home_of(buf[i].addr) != static_cast<int>(socket)) ++c.init_foreign;
                    }
            }
        }
    }
    for (const auto& [pg, who] : masks) {
        const int home = sim.home_of(pg * page);
        if (home < 0 || (who & (1u << home)) == 0) ++c.wrong_home;
        if (home >= 0) ++c.homes[static_cast<unsigned>(home)];
    }
    c.pages = masks.size();
    c.report = sim.report();
    return c;
}

// One census per spec for the whole test binary (each walks the kernel twice).
inline const Census& census(const std::string& spec) {
    static std::map<std::string, Census> done;
    auto it = done.find(spec);
    if (it == done.end()) it = done.emplace(spec, census(*mem::make_workload(spec))).first;
    return it->second;
}

inline double share(const Tally& t) { return t.accesses == 0 ? 0.0 : static_cast<double>(t.remote) / static_cast<double>(t.accesses); }

// Every kernel: every page of its measured phases was first touched in
// init, and on a socket of a thread that works on it.
inline void expect_first_touch_by_workers(const Census& c) {
    EXPECT_GT(c.measured, 0u);
    EXPECT_EQ(c.unhomed, 0u) << "accesses to pages init did not touch";
    EXPECT_EQ(c.wrong_home, 0u) << "of " << c.pages << " pages";
    EXPECT_EQ(c.report.accesses, c.measured);
}

inline mem::WorkloadResult run(const std::string& spec, const std::string& prefetch, const std::string& mapping = "first-touch") {
    mem::RunOptions o;
    o.prefetch = mem::parse_prefetch(prefetch);
    o.mapping = mem::parse_page_mapping(mapping);
    o.threads = threads;
    return mem::run_workload(*mem::make_workload(spec), mem::preset("thesis-4s"), o);
}

}  // namespace numaware::test::memsim
