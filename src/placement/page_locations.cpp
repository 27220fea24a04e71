// placement/page_locations.cpp — where pages are (see page_locations.hpp).
#include "placement/page_locations.hpp"

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <thread>

#include "os/os.hpp"

namespace numaware {

namespace {

// Pages per move_pages call when the addresses are made here: 4 KiB of
// addresses, small enough for any thread's stack (the heap asks from
// inside malloc, on the application's threads).
constexpr std::size_t kBatch = 512;
constexpr int kSettleAttempts = 7;

// The pages asked about: the caller's list, or `count` consecutive pages.
struct Pages {
    void* const* list = nullptr;
    std::uintptr_t base = 0;
    std::size_t page = 4096;
    std::size_t count = 0;

    void* at(std::size_t i) const noexcept {
        return list != nullptr ? list[i] : reinterpret_cast<void*>(base + i * page);
    }
    std::uintptr_t page_of(std::size_t i) const noexcept {
        return reinterpret_cast<std::uintptr_t>(at(i)) / page * page;
    }
};

bool in_transit(int status) noexcept {
    return os::is_absent_status(status) || status == -EBUSY || status == -EAGAIN;
}

// A status only settle_resident gives, for a moment: the page read absent
// but is resident (mincore).
constexpr int kResidentAbsent = -(1 << 20);
bool resident_absent(int status) noexcept { return status == kResidentAbsent; }

int query(os::Os& os, const Pages& p, int* status) noexcept {
    for (std::size_t i = 0; i < p.count; ++i) status[i] = -ENOENT;
    if (p.list != nullptr) return os.move_pages(0, p.count, p.list, nullptr, status, 0);
    void* addrs[kBatch];
    for (std::size_t first = 0; first < p.count; first += kBatch) {
        const std::size_t n = p.count - first < kBatch ? p.count - first : kBatch;
        for (std::size_t i = 0; i < n; ++i) addrs[i] = p.at(first + i);
        if (int err = os.move_pages(0, n, addrs, nullptr, status + first, 0)) return err;
    }
    return 0;
}

// The read fault that resolves a balancing hint must not move the page.
// Under the default policy the kernel migrates a hinted page to the node of
// the thread that faults on it, whatever the balancing switch says, so a
// query from any other node would move what it asks about (the stencil
// skeleton asks about a whole grid from its calling thread). A thread
// policy of "local" allocates exactly as the default does but has no
// migrate-on-fault flag, so the hint is resolved in place. For the length
// of the faults, the calling thread's default policy is replaced by local;
// a policy of its own (bind, interleave, ...) is left alone: it has no such
// flag unless its owner asked for one (MPOL_F_NUMA_BALANCING). Measured in
// the emulated 2-node guest (Debian 6.1; two threads, 1,024 pages on node 0,
// asked from node 1): without this, 1,019 hinted pages moved to node 1; with
// it, none moved.
class HintsResolvedInPlace {
public:
    explicit HintsResolvedInPlace(os::Os& os) noexcept : os_(os) {
        os::PolicyQuery q;
        if (os_.get_mempolicy(nullptr, q) != 0 || q.mode != os::PolicyMode::default_) return;
        replaced_ = os_.set_mempolicy(os::PolicyMode::local, NodeSet{}) == 0;
    }
    ~HintsResolvedInPlace() {
        if (replaced_) (void)os_.set_mempolicy(os::PolicyMode::default_, NodeSet{});
    }
    HintsResolvedInPlace(const HintsResolvedInPlace&) = delete;
    HintsResolvedInPlace& operator=(const HintsResolvedInPlace&) = delete;

private:
    os::Os& os_;
    bool replaced_ = false;
};

// A read fault on every page whose status is wanted (in transit, or
// resident while it reads absent), one madvise per run of adjacent pages,
// without moving any (HintsResolvedInPlace); a failure only means the page
// stays as it reads.
template <class Wanted>
void fault_where(os::Os& os, const Pages& p, const int* status, Wanted wanted) noexcept {
    const HintsResolvedInPlace in_place(os);
    for (std::size_t i = 0; i < p.count;) {
        if (!wanted(status[i])) {
            ++i;
            continue;
        }
        std::size_t end = i + 1;
        while (end < p.count && wanted(status[end]) && p.page_of(end) == p.page_of(end - 1) + p.page) ++end;
        (void)os.madvise(reinterpret_cast<void*>(p.page_of(i)), (end - i) * p.page, os::madv_populate_read);
        i = end;
    }
}

// Asks again about every page whose status is wanted, in batches.
template <class Wanted>
int requery_where(os::Os& os, const Pages& p, int* status, Wanted wanted) noexcept {
    std::size_t index[kBatch];
    void* addrs[kBatch];
    int fresh[kBatch];
    std::size_t n = 0;
    auto ask = [&]() -> int {
        if (n == 0) return 0;
        for (std::size_t k = 0; k < n; ++k) fresh[k] = -ENOENT;
        if (int err = os.move_pages(0, n, addrs, nullptr, fresh, 0)) return err;
        for (std::size_t k = 0; k < n; ++k) status[index[k]] = fresh[k];
        n = 0;
        return 0;
    };
    for (std::size_t i = 0; i < p.count; ++i) {
        if (!wanted(status[i])) continue;
        index[n] = i;
        addrs[n] = p.at(i);
        if (++n == kBatch)
            if (int err = ask()) return err;
    }
    return ask();
}

// The settling rule: `attempts` of kSettleAttempts for PagesExpected::present,
// the first one (the read fault, no sleep) for PagesExpected::written. Out
// of line: its batches stay off the stack of the plain query the heap makes
// inside malloc.
__attribute__((noinline)) int settle(os::Os& os, const Pages& p, int* status, int attempts) noexcept {
    for (int attempt = 0; attempt < attempts; ++attempt) {
        bool any = false;
        for (std::size_t i = 0; i < p.count && !any; ++i) any = in_transit(status[i]);
        if (!any) return 0;
        if (attempt == 0)
            fault_where(os, p, status, in_transit);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(1 << attempt));
        if (int err = requery_where(os, p, status, in_transit)) return err;
    }
    return 0;
}

// PagesExpected::maybe_absent: of the pages that read absent, those that
// are resident all the same (mincore) carry a balancing hint or are being
// migrated. They get the read fault and one more question; a page that is
// truly absent is left alone (no zero page mapped, nothing faulted). Out of
// line, as settle.
__attribute__((noinline)) int settle_resident(os::Os& os, const Pages& p, int* status) noexcept {
    unsigned char resident[kBatch];
    bool any = false;
    for (std::size_t i = 0; i < p.count;) {
        if (!os::is_absent_status(status[i])) {
            ++i;
            continue;
        }
        std::size_t end = i + 1;
        while (end < p.count && end - i < kBatch && os::is_absent_status(status[end]) &&
               p.page_of(end) == p.page_of(end - 1) + p.page)
            ++end;
        // A hole in the mapping (ENOMEM) leaves the run as it reads.
        if (os.mincore(reinterpret_cast<void*>(p.page_of(i)), (end - i) * p.page, resident) == 0)
            for (std::size_t k = i; k < end; ++k)
                if ((resident[k - i] & 1U) != 0) {
                    status[k] = kResidentAbsent;
                    any = true;
                }
        i = end;
    }
    if (!any) return 0;
    fault_where(os, p, status, resident_absent);
    return requery_where(os, p, status, resident_absent);
}

int locate(os::Os& os, const Pages& p, int* status, PagesExpected expected) noexcept {
    if (int err = query(os, p, status)) return err;
    switch (expected) {
    case PagesExpected::maybe_absent: return settle_resident(os, p, status);
    case PagesExpected::present: return settle(os, p, status, kSettleAttempts);
    case PagesExpected::written: return settle(os, p, status, 1);
    }
    return 0;
}

}  // namespace

int resolve_balancing_hints(os::Os& os, void* start, std::size_t bytes) noexcept {
    if (bytes == 0) return 0;
    const HintsResolvedInPlace in_place(os);
    // The populate takes the hinting faults on kernels whose page walk
    // honours them (Debian's 6.1). Later ones (6.12: FOLL_HONOR_NUMA_FAULT)
    // walk past a hinted entry, and only a real access takes the fault: one
    // read of each page. The populate's success says the range is mapped and
    // readable, so the reads cannot fault on anything else.
    if (const int err = os.madvise(start, bytes, os::madv_populate_read)) return err;
    const std::size_t page = os.page_size();
    const auto* p = static_cast<const volatile char*>(start);
    for (std::size_t off = 0; off < bytes; off += page) (void)p[off];
    return 0;
}

int locate_pages(os::Os& os, void* const* pages, std::size_t count, int* status,
                 PagesExpected expected) noexcept {
    Pages p;
    p.list = pages;
    p.page = os.page_size();
    p.count = count;
    return locate(os, p, status, expected);
}

int locate_range(os::Os& os, const void* start, std::size_t count, int* status,
                 PagesExpected expected) noexcept {
    Pages p;
    p.base = reinterpret_cast<std::uintptr_t>(start);
    p.page = os.page_size();
    p.count = count;
    return locate(os, p, status, expected);
}

}  // namespace numaware
