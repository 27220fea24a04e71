// placement/page_locations.hpp — the one answer to "which node holds these
// pages", asked of the kernel with move_pages(nodes = NULL).
//
// Internal to the library. Placement's apply, verify and migrate, the
// heap's chunk binding, the task runtime's region homes, the stencil's
// page maps and the benchmarks all ask through here, so the rule for pages
// that read as absent while they are not (PagesExpected::present) lives in
// one place. Nothing here allocates: the heap engine asks from inside
// malloc. Which pages to ask about (all, a sample) is the caller's choice.
#pragma once

#include <cstddef>

namespace numaware::os {
class Os;
}

namespace numaware {

// What the caller knows of the pages it asks about.
enum class PagesExpected {
    // They may never have been touched: an absent page is an answer
    // (-ENOENT, or -EFAULT on older kernels such as Debian's 6.1). But a
    // page that reads absent and is resident all the same (mincore) is not
    // absent: balancing hinted it (see `present`). Such pages, and only
    // they, get the read fault (taken so that the page stays where it is)
    // and one more question; nothing is done to a truly absent page.
    maybe_absent,
    // The caller populated them, or is about to move them, so a page that
    // reads absent, busy or "again" is in transit and is settled. Automatic
    // NUMA balancing makes present pages read so in two ways, both seen in
    // our 4-node guests:
    //  - a page under migration has a migration entry instead of a page
    //    (EFAULT/ENOENT, or EBUSY, until the migration ends);
    //  - a page whose entry balancing made PROT_NONE for a hinting fault
    //    reads as absent, and cannot be moved, on kernels whose
    //    follow_page() refuses such entries (ENOENT on Debian's 6.1). A read
    //    fault resolves the hint; it is taken under a thread policy that
    //    does not migrate on fault, so the page stays where it is.
    // So such pages get MADV_POPULATE_READ (which takes that fault through
    // the kernel, never a signal; of a truly absent anonymous page it maps
    // only the zero page) and are asked again up to six more times, 2 to
    // 64 ms apart (about 0.1 s in all: migrating a huge page under
    // emulation takes tens of ms).
    present,
    // A task that named them as written has finished: they are most likely
    // present, but the task may have declared more than it touched, so an
    // absent page may be an answer too. Pages that read absent, busy or
    // "again" get one MADV_POPULATE_READ (which resolves a balancing hint,
    // and waits out a migration in the fault) and are asked once more,
    // without sleeping: the caller holds a lock that other threads wait for.
    // (In the emulated 8-node guest, regions that finished writers had just
    // written read absent often enough that DEP placed whole chains of
    // NStream's readers at random, BENCHMARKS.md.)
    written,
};

// status[i] = the node of the page holding pages[i], or a negative errno
// (-ENOENT / -EFAULT: not present; see os::is_absent_status). Returns 0, or
// the errno of a query that failed (status is then not reliable). The
// pages are asked about in one move_pages call, and those in transit again
// together.
int locate_pages(os::Os& os, void* const* pages, std::size_t count, int* status,
                 PagesExpected expected) noexcept;

// The same for `count` consecutive pages from the page-aligned `start`,
// asked in batches of at most 512 pages whose addresses live on the stack.
int locate_range(os::Os& os, const void* start, std::size_t count, int* status,
                 PagesExpected expected) noexcept;

// Resolves every automatic-NUMA-balancing hint already set on the present
// pages of [start, start + bytes) (page-aligned `start`), each page where it
// is: the range populated for reading (MADV_POPULATE_READ) and each page
// read once, under a thread policy that does not migrate on fault (the
// populate takes the hinting faults on Debian's 6.1; on 6.12 it walks past
// them and the reads take them). The range must be mapped and readable in
// this process, whatever `os` is; if the populate fails, nothing is read.
// For a caller that has switched balancing off and wants no page to move:
// switching off stops new hints, not the faults on those already set, and
// under the default policy such a fault moves the page to the faulting
// thread's node. Returns 0 or madvise's errno (EINVAL before Linux 5.14).
int resolve_balancing_hints(os::Os& os, void* start, std::size_t bytes) noexcept;

}  // namespace numaware
