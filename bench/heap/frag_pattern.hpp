// bench/heap/frag_pattern.hpp — the fragmentation pattern, shared by the
// malloc benchmark (any allocator, through LD_PRELOAD) and the psm_alloc
// benchmark, so both measure exactly the same thing.
//
// `owners` threads each allocate blocks of `size` bytes up to `mib` MiB,
// write them, free every other one and allocate again (three cycles), as
// JArena patches that die while their neighbours live on. The figure is the
// growth of peak RSS (VmHWM) over the resident size before the first block,
// divided by the peak of requested bytes.
#pragma once

#include <barrier>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace numaware::bench {

struct FragResult {
    double requested_bytes = 0;
    double peak_rss_growth_bytes = 0;
    double ratio() const { return peak_rss_growth_bytes / requested_bytes; }
};

// Resident and peak-resident kB of this process, from /proc/self/status.
inline void read_rss(std::uint64_t& rss_kb, std::uint64_t& hwm_kb) {
    std::ifstream in("/proc/self/status");
    std::string key;
    rss_kb = hwm_kb = 0;
    while (in >> key) {
        if (key == "VmRSS:") in >> rss_kb;
        else if (key == "VmHWM:") in >> hwm_kb;
        in.ignore(1 << 20, '\n');
    }
}

// alloc(owner, bytes) -> void* (never nullptr: the caller exits on failure);
// release(void*). Each owner thread calls alloc with its own index.
template <class Alloc, class Release>
FragResult run_frag_pattern(std::size_t size, std::size_t mib, unsigned owners, Alloc alloc, Release release) {
    const std::size_t blocks = ((mib << 20) + size - 1) / size;
    std::barrier sync(static_cast<std::ptrdiff_t>(owners) + 1);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < owners; ++t) {
        threads.emplace_back([&, t] {
            std::vector<void*> live(blocks, nullptr);
            sync.arrive_and_wait();   // the baseline is taken
            for (int cycle = 0; cycle < 3; ++cycle) {
                for (auto& p : live)
                    if (p == nullptr) {
                        p = alloc(t, size);
                        std::memset(p, 1, size);
                    }
                if (cycle < 2)
                    for (std::size_t i = static_cast<std::size_t>(cycle); i < live.size(); i += 2) {
                        release(live[i]);
                        live[i] = nullptr;
                    }
            }
            sync.arrive_and_wait();   // the peak is read
            for (void* p : live) release(p);
        });
    }
    std::uint64_t base_rss = 0, base_hwm = 0;
    read_rss(base_rss, base_hwm);
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    std::uint64_t rss = 0, hwm = 0;
    read_rss(rss, hwm);
    for (auto& th : threads) th.join();
    FragResult r;
    r.requested_bytes = static_cast<double>(blocks * size * owners);
    r.peak_rss_growth_bytes = static_cast<double>(hwm - std::min(hwm, base_rss)) * 1024.0;
    return r;
}

}  // namespace numaware::bench
