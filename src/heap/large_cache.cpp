// heap/large_cache.cpp — large blocks: extents of bound regions, cached
// when freed, reused best-fit, split and coalesced, purged after a decay.
//
// A large block (above kMaxSmall = 256 KiB) is an extent: a run of 64 KiB
// engine pages in a region: one mapping, 2 MiB-aligned, bound to the
// arena's node and verified when it is made (map_bound). An arena's first
// region is 8 MiB and each next one twice the last, up to 256 MiB (or the
// block, if bigger), as jemalloc grows its extents: a program with one
// large block maps little, and a big heap has few region edges, across
// which free extents cannot coalesce. Every extent of a region
// belongs to the region's arena, so a region never holds another node's
// memory, and every change to its extents happens under the arena's large
// lock.
//
// A freed block becomes a dirty extent (its pages are resident) and
// coalesces with the dirty extents beside it in its region. An allocation
// takes the best-fitting dirty extent (smallest that fits; bins by size,
// four per power of two), else the best-fitting clean one, else a new
// region, and splits off the rest. Reusing dirty memory is the point: a
// fresh extent costs one page fault per 4 KiB page, which for a 16 MiB
// block is more than the time the program spends writing it.
//
// Giving memory back (purge: madvise MADV_DONTNEED, so the range stays
// mapped and bound and refaults on the same node):
//  - dirty extents free for more than kLargeDecayNs (1 s), as jemalloc's
//    dirty decay (10 s by default) and tcmalloc's background release do;
//    checked at every large allocation and free of the arena (there is no
//    background thread: an arena with no large calls keeps its cache until
//    release_free_memory, which malloc_trim calls);
//  - at once, while live + dirty large bytes (plus the clean bytes that a
//    transparent huge page beside them could make resident) would pass
//    19/16 of the highest live large bytes of the last decay period, and
//    never below 16 MiB of dirty bytes. The bound is on the resident set a
//    user sees: a program's peak RSS stays within 1.25 times its peak of
//    live bytes, with 1/16 left for metadata and rounding. Purges take the
//    extent at the highest address first, and of it only the tail that is
//    over, from a 2 MiB boundary, so dirty memory stays packed low and
//    huge pages stay whole.
// MADV_FREE would be cheaper, but its pages stay resident (and counted in
// RSS) until the kernel needs them, so the bound would not hold.
// A purged extent is clean and coalesces with the clean extents beside it;
// when a whole region is clean, it is unmapped, except one kept as a spare
// so that a program freeing and allocating one big block does not map and
// bind a region every time.
//
// Transparent huge pages follow the system's setting: regions are 2 MiB-
// aligned so that THP "always" can back them, but they are not madvised
// MADV_HUGEPAGE. On this project's machine that made the large-block
// benchmark slower (1.70-1.86 s against 1.23-1.35 s, BENCHMARKS.md): a
// fresh huge page costs a compaction or a cold 2 MiB clear, and with "defrag
// = madvise" the fault waits for it.
//
// When no dirty extent holds a block alone, the largest one that does with
// the clean extents beside it takes it (take_run): only the clean part
// faults.
//
// Clean memory is known to be zero: large_allocate says so, and calloc
// does not clear it again.
#include <sys/mman.h>

#include <cerrno>

#include "heap/internal.hpp"
#include "os/os.hpp"
#include "util/coarse_clock.hpp"

namespace numaware::heap::detail {

namespace {

constexpr unsigned kClean = 0;
constexpr unsigned kDirty = 1;
using Cache = Arena::LargeCache;

// Bins by page count: exact up to 16 pages (1 MiB), then four per power of
// two. 2^32 pages (the 48-bit address space) fall in bin 131.
unsigned bin_of(std::size_t pages) noexcept {
    if (pages <= 16) return static_cast<unsigned>(pages - 1);
    const unsigned lg = 63u - static_cast<unsigned>(__builtin_clzll(pages));
    return 16 + (lg - 4) * 4 + static_cast<unsigned>((pages >> (lg - 2)) & 3);
}
static_assert(kLargeBins > 16 + (32 - 4) * 4 + 3, "every page count has a bin");

std::size_t pages_of(const Span* s) noexcept { return s->bytes / kPageBytes; }

// ---- the cache's lists ----

void bin_insert(Cache& c, Span* s) noexcept {
    const unsigned st = s->dirty ? kDirty : kClean;
    const unsigned b = bin_of(pages_of(s));
    s->prev = nullptr;
    s->next = c.bins[st][b];
    if (s->next != nullptr) s->next->prev = s;
    c.bins[st][b] = s;
    c.nonempty[st][b / 64] |= std::uint64_t{1} << (b % 64);
}

void bin_remove(Cache& c, Span* s) noexcept {
    const unsigned st = s->dirty ? kDirty : kClean;
    const unsigned b = bin_of(pages_of(s));
    if (s->prev != nullptr) s->prev->next = s->next;
    else c.bins[st][b] = s->next;
    if (s->next != nullptr) s->next->prev = s->prev;
    if (c.bins[st][b] == nullptr) c.nonempty[st][b / 64] &= ~(std::uint64_t{1} << (b % 64));
    s->next = s->prev = nullptr;
}

// The age list is ordered by freed_ns, oldest first; a newly freed extent
// goes to the end in O(1), a split remainder keeps its older time.
void age_insert(Cache& c, Span* s) noexcept {
    const unsigned st = s->dirty ? kDirty : kClean;
    Span* after = c.newest[st];
    while (after != nullptr && after->freed_ns > s->freed_ns) after = after->older;
    s->older = after;
    s->newer = after != nullptr ? after->newer : c.oldest[st];
    if (after != nullptr) after->newer = s;
    else c.oldest[st] = s;
    if (s->newer != nullptr) s->newer->older = s;
    else c.newest[st] = s;
}

void age_remove(Cache& c, Span* s) noexcept {
    const unsigned st = s->dirty ? kDirty : kClean;
    if (s->older != nullptr) s->older->newer = s->newer;
    else c.oldest[st] = s->newer;
    if (s->newer != nullptr) s->newer->older = s->older;
    else c.newest[st] = s->older;
    s->older = s->newer = nullptr;
}

char* huge_down(const char* p) noexcept {
    return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(p) & ~(kHugePage - 1));
}
char* huge_up(const char* p) noexcept { return huge_down(p + kHugePage - 1); }

// Of a clean extent, the bytes that share a 2 MiB page with the memory
// beside it: a transparent huge page faulted there makes them resident.
std::size_t edge_of(const Span* s) noexcept {
    const char* end = s->start + s->bytes;
    const std::size_t head = static_cast<std::size_t>(huge_up(s->start) - s->start);
    const std::size_t tail = static_cast<std::size_t>(end - huge_down(end));
    const std::size_t both = head + tail;
    return both < s->bytes ? both : s->bytes;
}

void cache_insert(Cache& c, Span* s) noexcept {
    NW_DEBUG_ASSERT(!s->large && !s->cached && s->bytes % kPageBytes == 0 && s->bytes > 0);
    NW_DEBUG_ASSERT(s->start >= s->region && s->start + s->bytes <= s->region_end);
    s->cached = true;
    bin_insert(c, s);
    age_insert(c, s);
    c.bytes[s->dirty ? kDirty : kClean] += s->bytes;
    if (!s->dirty) c.edge_bytes += edge_of(s);
}

void cache_remove(Cache& c, Span* s) noexcept {
    NW_DEBUG_ASSERT(s->cached);
    bin_remove(c, s);
    age_remove(c, s);
    c.bytes[s->dirty ? kDirty : kClean] -= s->bytes;
    if (!s->dirty) c.edge_bytes -= edge_of(s);
    s->cached = false;
    if (c.spare == s) c.spare = nullptr;
}

bool whole_region(const Span* s) noexcept { return s->start == s->region && s->start + s->bytes == s->region_end; }

// The smallest cached extent of state `st` with at least `bytes`.
Span* best_fit(Cache& c, unsigned st, std::size_t bytes) noexcept {
    const std::size_t pages = bytes / kPageBytes;
    for (unsigned b = bin_of(pages); b < kLargeBins;) {
        const std::uint64_t word = c.nonempty[st][b / 64] >> (b % 64);
        if (word == 0) {
            b = (b / 64 + 1) * 64;
            continue;
        }
        b += static_cast<unsigned>(__builtin_ctzll(word));
        if (b >= kLargeBins) break;
        Span* best = nullptr;
        for (Span* s = c.bins[st][b]; s != nullptr; s = s->next)
            if (s->bytes >= bytes && (best == nullptr || s->bytes < best->bytes)) best = s;
        if (best != nullptr) return best;
        ++b;   // only the first bin can hold extents too small
    }
    return nullptr;
}

// ---- extents ----

// A new span for [start, start+bytes) of s's region, mapped in the page map;
// it takes s's state and age. nullptr when no span record is left.
Span* split_off(const Span* s, char* start, std::size_t bytes) noexcept {
    Span* r = span_new();
    if (r == nullptr) return nullptr;
    r->arena = s->arena;
    r->start = start;
    r->bytes = bytes;
    r->region = s->region;
    r->region_end = s->region_end;
    r->dirty = s->dirty;
    r->freed_ns = s->freed_ns;
    // The region's leaves exist: its pages are mapped already.
    const bool mapped = page_map_set(start, bytes, r);
    NW_DEBUG_ASSERT(mapped);
    (void)mapped;
    return r;
}

// The cached extent of the same state right before / after s in its region.
// The cached extent in state `dirty` right before / after s in its region.
Span* cached_neighbour(const Span* s, bool after, bool dirty) noexcept {
    const char* at = after ? s->start + s->bytes : s->start - 1;
    if (at < s->region || at >= s->region_end) return nullptr;
    Span* n = span_of(at);
    NW_DEBUG_ASSERT(n != nullptr && n->arena == s->arena && n->region == s->region);
    return n->cached && n->dirty == dirty ? n : nullptr;
}
Span* neighbour(const Span* s, bool after) noexcept { return cached_neighbour(s, after, s->dirty); }

// Merges the cached extents of s's state beside s into s (s is not cached).
void coalesce(Cache& c, Span* s) noexcept {
    if (Span* b = neighbour(s, false)) {
        cache_remove(c, b);
        s->start = b->start;
        s->bytes += b->bytes;
        page_map_set(b->start, b->bytes, s);
        span_delete(b);
    }
    if (Span* n = neighbour(s, true)) {
        cache_remove(c, n);
        s->bytes += n->bytes;
        page_map_set(n->start, n->bytes, s);
        span_delete(n);
    }
}

void unmap_region(Span* s) noexcept {
    char* start = s->region;
    const std::size_t bytes = static_cast<std::size_t>(s->region_end - s->region);
    page_map_set(start, bytes, nullptr);
    span_delete(s);
    unmap(start, bytes);
}

// Gives a dirty extent's pages back to the kernel; false if madvise failed
// (it stays dirty). Of an extent that holds whole 2 MiB pages only those
// go, so a later fault there can take a transparent huge page again; the
// edges stay dirty.
bool purge(Arena& a, Span* s) noexcept {
    Cache& c = a.large;
    char* const end = s->start + s->bytes;
    char* const lo = huge_up(s->start);
    char* const hi = huge_down(end);
    if (hi > lo && (lo != s->start || hi != end)) {
        Span* head = lo != s->start ? split_off(s, s->start, static_cast<std::size_t>(lo - s->start)) : nullptr;
        Span* tail = hi != end ? split_off(s, hi, static_cast<std::size_t>(end - hi)) : nullptr;
        if ((lo != s->start && head == nullptr) || (hi != end && tail == nullptr)) {
            // No span record for an edge: purge the whole extent instead.
            if (head != nullptr) page_map_set(head->start, head->bytes, s), span_delete(head);
            if (tail != nullptr) page_map_set(tail->start, tail->bytes, s), span_delete(tail);
        } else {
            cache_remove(c, s);
            s->start = lo;
            s->bytes = static_cast<std::size_t>(hi - lo);
            cache_insert(c, s);
            if (head != nullptr) cache_insert(c, head);
            if (tail != nullptr) cache_insert(c, tail);
        }
    }
    if (g_engine.os->madvise(s->start, s->bytes, MADV_DONTNEED) != 0) return false;
    cache_remove(c, s);
    a.mapped_bytes.fetch_sub(static_cast<std::int64_t>(s->bytes), std::memory_order_relaxed);
    s->dirty = false;
    coalesce(c, s);
    if (whole_region(s)) {
        if (c.spare != nullptr) {
            unmap_region(s);
            return true;
        }
        c.spare = s;
    }
    cache_insert(c, s);
    return true;
}

// Dirty bytes allowed: what keeps live + dirty within 5/4 of the highest
// live large bytes of the last decay period, and never less than the floor.
std::size_t dirty_bound(const Arena& a) noexcept {
    const auto live = static_cast<std::size_t>(a.large_bytes.load(std::memory_order_relaxed));
    const std::size_t peak = a.large.peak_live > live ? a.large.peak_live : live;
    // Transparent huge pages faulted beside clean extents may make their
    // edges resident too: count them.
    const std::size_t edges = a.large.edge_bytes;
    const std::size_t cap = peak + peak / 16 * kLargeDirtySixteenths;
    const std::size_t room = cap > live + edges ? cap - live - edges : 0;
    return room > kLargeDirtyFloor ? room : kLargeDirtyFloor;
}

// Follows the highest live large bytes; forgets it after a decay period.
void note_live(Arena& a, std::uint64_t now) noexcept {
    const auto live = static_cast<std::size_t>(a.large_bytes.load(std::memory_order_relaxed));
    if (live >= a.large.peak_live || now - a.large.peak_ns >= kLargeDecayNs) {
        a.large.peak_live = live;
        a.large.peak_ns = now;
    }
}

// Purges what decayed, then dirty bytes beyond the bound: the oldest
// extents first, and of the last one only the tail that is over.
void trim(Arena& a, std::uint64_t now) noexcept {
    Cache& c = a.large;
    while (Span* s = c.oldest[kDirty]) {
        const std::size_t bound = dirty_bound(a);
        if (now - s->freed_ns >= kLargeDecayNs) {
            if (!purge(a, s)) break;
            continue;
        }
        if (c.bytes[kDirty] <= bound) break;
        for (Span* t = c.oldest[kDirty]; t != nullptr; t = t->newer)
            if (t->start > s->start) s = t;
        // Of the chosen extent, the tail that is over, from a 2 MiB boundary.
        char* const end = s->start + s->bytes;
        char* cut = huge_down(end - (c.bytes[kDirty] - bound));
        if (cut > s->start) {
            Span* tail = split_off(s, cut, static_cast<std::size_t>(end - cut));
            if (tail == nullptr) break;
            cache_remove(c, s);
            s->bytes = static_cast<std::size_t>(cut - s->start);
            cache_insert(c, s);
            cache_insert(c, tail);
            s = tail;
        }
        if (!purge(a, s)) break;
    }
}

// A new region for an extent of `bytes` at `alignment`, cached clean.
Span* new_region(Arena& a, std::size_t bytes, std::size_t alignment, std::uint64_t now) noexcept {
    if (bytes > (std::size_t{1} << 46)) return nullptr;
    std::size_t size = (bytes + kHugePage - 1) & ~(kHugePage - 1);
    Cache& c = a.large;
    if (size < c.next_region) size = c.next_region;
    void* m = map_bound(size, alignment > kHugePage ? alignment : kHugePage, a.node);
    if (m == nullptr) return nullptr;
    Span* s = span_new();
    if (s == nullptr) {
        unmap(m, size);
        return nullptr;
    }
    s->arena = a.id;
    s->start = s->region = static_cast<char*>(m);
    s->bytes = size;
    s->region_end = s->start + size;
    s->freed_ns = now;
    if (!page_map_set(m, size, s)) {
        page_map_set(m, size, nullptr);
        span_delete(s);
        unmap(m, size);
        return nullptr;
    }
    poison(m, size);   // free until a block is carved from it
    cache_insert(c, s);
    if (c.next_region < kLargeRegionMax) c.next_region *= 2;
    return s;
}

// Takes [s->start + offset, +size) out of cached extent s; what is left on
// either side stays cached. Returns the taken span (s itself).
Span* take(Cache& c, Span* s, std::size_t offset, std::size_t size) noexcept {
    cache_remove(c, s);
    if (offset > 0) {
        if (Span* h = split_off(s, s->start, offset)) {
            s->start += offset;
            s->bytes -= offset;
            cache_insert(c, h);
        } else {
            cache_insert(c, s);
            return nullptr;
        }
    }
    if (s->bytes > size) {
        Span* r = split_off(s, s->start + size, s->bytes - size);
        if (r == nullptr) {
            cache_insert(c, s);
            return nullptr;
        }
        s->bytes = size;
        cache_insert(c, r);
    }
    return s;
}

// The clean cached extent right before / after s in its region, or nullptr.
Span* clean_neighbour(const Span* s, bool after) noexcept { return cached_neighbour(s, after, false); }

// When no dirty extent holds `size` bytes alone: the largest dirty extent
// that does together with the clean extents beside it. The block covers all
// of it, so only the clean part faults. Looks at the newest kRunCandidates
// dirty extents. Returns the block's span, taken out of the cache.
constexpr unsigned kRunCandidates = 64;
Span* take_run(Arena& a, std::size_t size) noexcept {
    Cache& c = a.large;
    Span* best = nullptr;
    unsigned looked = 0;
    for (Span* d = c.newest[kDirty]; d != nullptr && looked < kRunCandidates; d = d->older, ++looked) {
        if (best != nullptr && d->bytes <= best->bytes) continue;
        const Span* b = clean_neighbour(d, false);
        const Span* n = clean_neighbour(d, true);
        if (d->bytes + (b != nullptr ? b->bytes : 0) + (n != nullptr ? n->bytes : 0) >= size) best = d;
    }
    if (best == nullptr) return nullptr;
    Span* d = best;
    Span* b = clean_neighbour(d, false);
    Span* n = clean_neighbour(d, true);
    const std::size_t want = size - d->bytes;
    const std::size_t right = n == nullptr ? 0 : (n->bytes < want ? n->bytes : want);
    const std::size_t left = want - right;
    cache_remove(c, d);
    if (right > 0) {
        cache_remove(c, n);
        page_map_set(n->start, right, d);
        if (right == n->bytes) {
            span_delete(n);
        } else {
            n->start += right;
            n->bytes -= right;
            cache_insert(c, n);
        }
    }
    if (left > 0) {
        cache_remove(c, b);
        b->bytes -= left;
        page_map_set(b->start + b->bytes, left, d);
        if (b->bytes == 0) span_delete(b);
        else cache_insert(c, b);
    }
    d->start -= left;
    d->bytes = size;
    a.mapped_bytes.fetch_add(static_cast<std::int64_t>(want), std::memory_order_relaxed);
    return d;
}

}  // namespace

void* large_allocate(Arena& a, std::size_t bytes, std::size_t alignment, bool* zeroed) noexcept {
    if (bytes > (std::size_t{1} << 46)) {
        errno = ENOMEM;
        return nullptr;
    }
    if (alignment < kPageBytes) alignment = kPageBytes;
    const std::size_t size = (bytes + kPageBytes - 1) & ~(kPageBytes - 1);
    const std::size_t need = size + (alignment - kPageBytes);
    Cache& c = a.large;
    LockGuard g(c.lock);
    const std::uint64_t now = coarse_now_ns();
    trim(a, now);
    Span* s = best_fit(c, kDirty, need);
    if (s == nullptr && alignment == kPageBytes) {
        if (Span* r = take_run(a, size)) {
            r->large = true;
            a.large_bytes.fetch_add(static_cast<std::int64_t>(size), std::memory_order_relaxed);
            note_live(a, now);
            if (zeroed != nullptr) *zeroed = false;
            unpoison(r->start, r->bytes);
            return r->start;
        }
    }
    if (s == nullptr) s = best_fit(c, kClean, need);
    if (s == nullptr) s = new_region(a, need, alignment, now);
    if (s == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
    const auto at = reinterpret_cast<std::uintptr_t>(s->start);
    const std::size_t offset = ((at + alignment - 1) & ~(alignment - 1)) - at;
    s = take(c, s, offset, size);
    if (s == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
    const bool was_dirty = s->dirty;
    s->dirty = false;
    s->large = true;
    if (!was_dirty) a.mapped_bytes.fetch_add(static_cast<std::int64_t>(size), std::memory_order_relaxed);
    a.large_bytes.fetch_add(static_cast<std::int64_t>(size), std::memory_order_relaxed);
    note_live(a, now);
    if (zeroed != nullptr) *zeroed = !was_dirty;
    unpoison(s->start, s->bytes);
    return s->start;
}

void large_free(Span* s) noexcept {
    Arena& a = *arena_of(s->arena);
    Cache& c = a.large;
    LockGuard g(c.lock);
    NW_DEBUG_ASSERT(s->large && !s->cached);
    a.large_bytes.fetch_sub(static_cast<std::int64_t>(s->bytes), std::memory_order_relaxed);
    s->large = false;
    s->dirty = true;
    poison(s->start, s->bytes);
    const std::uint64_t now = coarse_now_ns();
    s->freed_ns = now;
    coalesce(c, s);
    cache_insert(c, s);
    trim(a, now);
}

bool large_resize(Span* s, std::size_t bytes) noexcept {
    if (bytes > (std::size_t{1} << 46)) return false;
    const std::size_t size = (bytes + kPageBytes - 1) & ~(kPageBytes - 1);
    Arena& a = *arena_of(s->arena);
    Cache& c = a.large;
    LockGuard g(c.lock);
    NW_DEBUG_ASSERT(s->large && !s->cached);
    if (size == s->bytes) return true;
    const std::uint64_t now = coarse_now_ns();
    if (size < s->bytes) {
        // The tail becomes a dirty extent, like a freed block.
        Span* t = split_off(s, s->start + size, s->bytes - size);
        if (t == nullptr) return false;
        a.large_bytes.fetch_sub(static_cast<std::int64_t>(t->bytes), std::memory_order_relaxed);
        s->bytes = size;
        t->dirty = true;
        poison(t->start, t->bytes);
        t->freed_ns = now;
        coalesce(c, t);
        cache_insert(c, t);
        trim(a, now);
        return true;
    }
    // Grow into the cached extent right after s, dirty or clean.
    const std::size_t grow = size - s->bytes;
    char* end = s->start + s->bytes;
    if (end >= s->region_end) return false;
    Span* n = span_of(end);
    if (n == nullptr || !n->cached || n->bytes < grow) return false;
    n = take(c, n, 0, grow);
    if (n == nullptr) return false;
    if (!n->dirty) a.mapped_bytes.fetch_add(static_cast<std::int64_t>(grow), std::memory_order_relaxed);
    page_map_set(n->start, n->bytes, s);
    span_delete(n);
    unpoison(end, grow);
    s->bytes = size;
    a.large_bytes.fetch_add(static_cast<std::int64_t>(grow), std::memory_order_relaxed);
    return true;
}

std::size_t large_release(Arena& a) noexcept {
    Cache& c = a.large;
    LockGuard g(c.lock);
    const std::size_t before = c.bytes[kDirty];
    while (Span* s = c.oldest[kDirty])
        if (!purge(a, s)) break;
    return before - c.bytes[kDirty];
}

bool large_check(Arena& a) noexcept {
    Cache& c = a.large;
    LockGuard g(c.lock);
    std::size_t listed = 0;
    for (unsigned st = 0; st < 2; ++st) {
        std::size_t bytes = 0;
        for (unsigned b = 0; b < kLargeBins; ++b) {
            const bool marked = (c.nonempty[st][b / 64] >> (b % 64)) & 1;
            if (marked != (c.bins[st][b] != nullptr)) return false;
            for (const Span* s = c.bins[st][b]; s != nullptr; s = s->next) {
                // A cached extent of this arena, in its bin and state, inside
                // its region, mapped to itself at both ends, with no
                // neighbour of its state (those coalesce).
                if (!s->cached || s->large || s->dirty != (st == kDirty) || s->arena != a.id || s->cls != 0) return false;
                if (bin_of(pages_of(s)) != b || s->bytes == 0 || s->bytes % kPageBytes != 0) return false;
                if (s->start < s->region || s->start + s->bytes > s->region_end) return false;
                if (span_of(s->start) != s || span_of(s->start + s->bytes - 1) != s) return false;
                if (page_entry(s->start) >> kEntryTagShift != 0) return false;
                if (neighbour(s, false) != nullptr || neighbour(s, true) != nullptr) return false;
                bytes += s->bytes;
                ++listed;
            }
        }
        if (bytes != c.bytes[st]) return false;
        // The age list holds the same extents, oldest first.
        std::size_t aged = 0;
        for (const Span* s = c.oldest[st]; s != nullptr; s = s->newer) {
            if (!s->cached || s->dirty != (st == kDirty)) return false;
            if (s->newer != nullptr && s->newer->freed_ns < s->freed_ns) return false;
            ++aged;
        }
        listed -= aged;
    }
    return listed == 0 && (c.spare == nullptr || (c.spare->cached && !c.spare->dirty && whole_region(c.spare)));
}

}  // namespace numaware::heap::detail
