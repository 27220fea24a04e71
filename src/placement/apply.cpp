// placement/apply.cpp — carrying a plan out through the os layer, proving
// it with move_pages(nodes=NULL), and undoing it when it cannot be done.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mman.h>

#include "numaware/error.hpp"
#include "numaware/nodeset.hpp"
#include "numaware/placement.hpp"
#include "os/hex.hpp"
#include "os/os.hpp"
#include "placement/page_locations.hpp"
#include "placement/placed_ranges.hpp"

namespace numaware {

namespace {

struct Range {
    std::uintptr_t start = 0;
    std::size_t bytes = 0;
    std::size_t page_size = 4096;
    std::vector<void*> pages;

    void* at(std::size_t page) const { return pages[page]; }
};

Range make_range(const void* addr, std::size_t bytes, const PlacementPlan& plan, os::Os& os,
                 const char* what) {
    const auto start = reinterpret_cast<std::uintptr_t>(addr);
    if (start != plan.start || bytes != plan.bytes)
        throw Error("addr", std::string(what) + " was given " + std::to_string(bytes) + " bytes at " +
                                std::to_string(start) + " but the plan was made for " +
                                std::to_string(plan.bytes) + " bytes at " + std::to_string(plan.start) +
                                " (interleave depends on the address; make the plan for this range)");
    if (os.page_size() != plan.page_size)
        throw Error("page_size", "the plan uses " + std::to_string(plan.page_size) +
                                     "-byte pages but the system's are " + std::to_string(os.page_size()));
    Range r;
    r.start = start;
    r.bytes = bytes;
    r.page_size = plan.page_size;
    r.pages.resize(plan.pages());
    for (std::size_t i = 0; i < r.pages.size(); ++i)
        r.pages[i] = reinterpret_cast<void*>(start + i * plan.page_size);
    return r;
}

std::size_t range_len(const Range& r) { return r.pages.size() * r.page_size; }

// What apply() placed, for the process's placed ranges (placement.hpp):
// remembered from the kernel's answer when every page is present and the
// range's policy keeps pages where they are; otherwise forgotten. Only on
// the live system: a fake's addresses are not the process's memory.
void remember(os::Os& os, const Range& r, Realisation how, const PlacementPlan& plan, const std::vector<int>& status) {
    if (&os != &os::linux_os()) return;
    const bool kept = how != Realisation::range_policy || plan.mode != MemoryPolicyMode::default_;
    const bool all_present = std::all_of(status.begin(), status.end(), [](int s) { return s >= 0; });
    if (kept && all_present && !status.empty())
        placement_detail::remember_placement(r.start, r.page_size, status);
    else
        placement_detail::forget_placement(r.start, range_len(r));
}

// Where every page is now: node, or a negative errno (-ENOENT: not
// present). With `settle`, the caller expects the pages present (it
// populated them, or is about to move them): see PagesExpected::present.
int locate(os::Os& os, const Range& r, std::vector<int>& status, bool settle = false) {
    status.assign(r.pages.size(), -ENOENT);
    return locate_pages(os, r.pages.data(), r.pages.size(), status.data(),
                        settle ? PagesExpected::present : PagesExpected::maybe_absent);
}

// "3-7,12,40-41", at most `limit` items.
std::string page_list(const std::vector<std::size_t>& pages, std::size_t limit = 8) {
    std::vector<unsigned> indices;
    indices.reserve(pages.size());
    for (std::size_t p : pages) indices.push_back(static_cast<unsigned>(p));
    const std::string all = format_index_list(std::move(indices));
    std::size_t cut = 0;
    for (std::size_t items = 0; items < limit; ++items) {
        cut = all.find(',', cut);
        if (cut == std::string::npos) return all;
        ++cut;
    }
    return all.substr(0, cut - 1) + ", ... (" + std::to_string(pages.size()) + " pages in all)";
}

// The range's state before apply() or migrate() changed it.
struct Snapshot {
    struct Span {
        std::size_t first = 0;
        std::size_t count = 0;
        os::PolicyQuery policy;
    };
    std::vector<Span> policies;   // empty when policies were not recorded
    std::vector<int> nodes;       // location of every page
    std::vector<std::pair<unsigned, unsigned>> weights;   // interleave weights we overwrote
};

bool same_policy(const os::PolicyQuery& a, const os::PolicyQuery& b) {
    return a.mode == b.mode && a.mode_flags == b.mode_flags && a.nodes == b.nodes;
}

Snapshot take_snapshot(os::Os& os, const Range& r, bool with_policies, bool settle = false) {
    Snapshot s;
    if (with_policies) {
        // Page by page: mbind may have split the range into many VMAs.
        for (std::size_t i = 0; i < r.pages.size(); ++i) {
            os::PolicyQuery q;
            if (int err = os.get_mempolicy(r.at(i), q))
                throw Error("addr", "cannot read the policy of page " + std::to_string(i) + " at " +
                                        os::hex(reinterpret_cast<std::uintptr_t>(r.at(i))) + ": get_mempolicy: " +
                                        policy_call_error(err) + "; nothing was changed",
                            err);
            if (!s.policies.empty() && same_policy(s.policies.back().policy, q) &&
                s.policies.back().first + s.policies.back().count == i)
                ++s.policies.back().count;
            else
                s.policies.push_back({i, 1, q});
        }
    }
    if (int err = locate(os, r, s.nodes, settle))
        throw Error("addr", "cannot locate the pages of the range at " + os::hex(r.start) + ": move_pages: " +
                                policy_call_error(err) + "; nothing was changed",
                    err);
    return s;
}

// Puts policies, page locations and weights back. Returns what could not
// be restored ("" when all was).
std::string restore(os::Os& os, const Range& r, const Snapshot& s) {
    std::string problems;
    for (const auto& span : s.policies) {
        const auto mode = static_cast<os::PolicyMode>(static_cast<int>(span.policy.mode) |
                                                      static_cast<int>(span.policy.mode_flags));
        if (int err = os.mbind(r.at(span.first), span.count * r.page_size, mode, span.policy.nodes, 0))
            problems += "; restoring the policy of pages " + std::to_string(span.first) + "-" +
                        std::to_string(span.first + span.count - 1) + " failed: " + errno_name(err);
    }
    std::vector<int> now;
    if (locate(os, r, now) == 0) {
        std::vector<void*> back;
        std::vector<int> targets;
        for (std::size_t i = 0; i < now.size(); ++i)
            if (s.nodes[i] >= 0 && now[i] >= 0 && now[i] != s.nodes[i]) {
                back.push_back(r.at(i));
                targets.push_back(s.nodes[i]);
            }
        if (!back.empty()) {
            std::vector<int> status(back.size(), 0);
            if (int err = os.move_pages(0, back.size(), back.data(), targets.data(), status.data(), os::mf_move))
                problems += "; moving " + std::to_string(back.size()) + " pages back failed: " + errno_name(err);
        }
    }
    for (const auto& [node, weight] : s.weights)
        if (int err = os.write_interleave_weight(node, weight))
            problems += "; restoring the interleave weight of node " + std::to_string(node) +
                        " failed: " + errno_name(err);
    return problems;
}

bool page_matches(const PlacementPlan& plan, std::size_t i, int actual) {
    const int planned = plan.page_nodes[i];
    if (actual < 0) return false;
    return planned >= 0 ? actual == planned : plan.allowed.contains(static_cast<unsigned>(actual));
}

PlacementResult compare(const PlacementPlan& plan, const std::vector<int>& status) {
    PlacementResult res;
    res.pages = plan.pages();
    for (std::size_t i = 0; i < status.size(); ++i) {
        const int s = status[i];
        if (s < 0) {
            res.unplaced.push_back({i, -s});
            continue;
        }
        ++res.actual[static_cast<unsigned>(s)];
        if (page_matches(plan, i, s))
            ++res.matched;
        else
            res.mismatches.push_back({i, plan.page_nodes[i], s});
    }
    return res;
}

// Pages that are not where the plan wants them (present on another node,
// or an error other than "not present"), for naming them in an error.
std::vector<std::size_t> failed_pages(const PlacementPlan& plan, const std::vector<int>& status,
                                      std::size_t first, std::size_t count) {
    std::vector<std::size_t> out;
    for (std::size_t i = first; i < first + count && i < status.size(); ++i) {
        const int s = status[i];
        if ((s >= 0 && !page_matches(plan, i, s)) || (s < 0 && s != -ENOENT)) out.push_back(i);
    }
    return out;
}

std::string mode_text(MemoryPolicyMode m, const NodeSet& nodes) {
    std::string out = to_string(m);
    if (!nodes.empty()) out += ", " + nodes.to_string();
    return out;
}

// Fault every page in: MADV_POPULATE_WRITE, or a write to each page on
// kernels older than 5.14 (EINVAL). Either way the calling thread faults,
// so first-touch pages land on its node.
int populate(os::Os& os, const Range& r) {
    int err = os.madvise(reinterpret_cast<void*>(r.start), range_len(r), os::madv_populate_write);
    if (err != EINVAL) return err;
    for (void* page : r.pages) {
        auto* p = static_cast<volatile char*>(page);
        *p = *p;
    }
    return 0;
}

[[noreturn]] void fail(os::Os& os, const Range& r, const PlacementPlan& plan, const Snapshot& snap,
                       const std::string& step, int err, std::size_t first, std::size_t count,
                       std::vector<std::size_t> pages = {}) {
    if (pages.empty()) {
        std::vector<int> now;
        if (locate(os, r, now) == 0) pages = failed_pages(plan, now, first, count);
    }
    if (pages.empty())
        for (std::size_t i = first; i < first + count; ++i) pages.push_back(i);
    const std::string problems = restore(os, r, snap);
    throw Error("pages",
                "could not place pages " + page_list(pages) + " of the " + std::to_string(plan.pages()) +
                    "-page range at " + os::hex(r.start) + " (" + plan.policy.to_string() + "): " + step +
                    " failed: " + policy_call_error(err) +
                    (problems.empty() ? "; the range keeps its previous policy and page locations"
                                      : "; rollback incomplete" + problems),
                err);
}

// move_pages for every planned page not yet on its node. Migration can
// fail transiently (a page briefly pinned by another reference: the kernel
// gives up after its own retries), so pages still elsewhere are tried again
// a few times before the whole operation is undone.
void move_to_plan(os::Os& os, const Range& r, const PlacementPlan& plan, const Snapshot& snap) {
    constexpr int kAttempts = 4;
    std::vector<int> now;
    if (int err = locate(os, r, now, true)) fail(os, r, plan, snap, "move_pages (query)", err, 0, r.pages.size());
    int last_error = 0;
    std::vector<std::size_t> pending;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        std::vector<void*> addrs;
        std::vector<int> targets;
        pending.clear();
        for (std::size_t i = 0; i < now.size(); ++i) {
            const int planned = plan.page_nodes[i];
            if (planned < 0 || now[i] < 0 || now[i] == planned) continue;
            addrs.push_back(r.at(i));
            targets.push_back(planned);
            pending.push_back(i);
        }
        if (pending.empty()) return;
        std::vector<int> status(addrs.size(), 0);
        const int err = os.move_pages(0, addrs.size(), addrs.data(), targets.data(), status.data(), os::mf_move);
        // Judge by where the pages are now, not by the status array alone:
        // a transparent huge page moves whole, so its other small pages may
        // report EBUSY although they arrived with it.
        if (int qerr = locate(os, r, now, true)) fail(os, r, plan, snap, "move_pages (query)", qerr, 0, r.pages.size());
        last_error = 0;
        for (std::size_t k = 0; k < pending.size(); ++k)
            if (now[pending[k]] != plan.page_nodes[pending[k]] && status[k] < 0) {
                last_error = -status[k];
                break;
            }
        if (last_error == 0) last_error = err != 0 ? err : EIO;
    }
    std::vector<std::size_t> bad;
    for (std::size_t i : pending)
        if (now[i] != plan.page_nodes[i]) bad.push_back(i);
    if (!bad.empty()) fail(os, r, plan, snap, "move_pages", last_error, 0, r.pages.size(), bad);
}

std::string weighted_fallback_note(const PlacementPlan& plan) {
    return "populate, then move_pages page by page (kernel has no MPOL_WEIGHTED_INTERLEAVE; " +
           std::to_string(plan.runs.size()) + " runs)";
}

}  // namespace

std::string errno_name(int error) {
    if (const char* name = ::strerrorname_np(error)) return name;
    return "errno " + std::to_string(error);
}

std::string policy_call_error(int err) {
    if (err == EPERM)
        return "EPERM (the NUMA memory-policy calls are refused: a seccomp profile without CAP_SYS_NICE, as "
               "containers have by default)";
    if (err == ENOSYS) return "ENOSYS (this kernel has no NUMA memory policies)";
    return errno_name(err);
}

std::string PlacementResult::summary() const {
    std::string out = std::to_string(pages) + " pages, " + std::to_string(matched) + " as planned";
    if (!mismatches.empty()) {
        const auto& m = mismatches.front();
        out += ", " + std::to_string(mismatches.size()) + " misplaced (page " + std::to_string(m.page) +
               ": planned " + (m.planned < 0 ? std::string("any allowed node") : "node " + std::to_string(m.planned)) +
               ", on node " + std::to_string(m.actual) + ")";
    }
    if (!unplaced.empty()) {
        const auto& u = unplaced.front();
        out += ", " + std::to_string(unplaced.size()) + " not placed (page " + std::to_string(u.page) + ": " +
               errno_name(u.error) + (u.error == ENOENT ? ", not present" : "") + ")";
    }
    return out;
}

PlacementResult verify(const void* addr, std::size_t bytes, const PlacementPlan& plan, os::Os& os) {
    const Range r = make_range(addr, bytes, plan, os, "verify");
    std::vector<int> status;
    if (int err = locate(os, r, status))
        throw Error("addr", "cannot locate the pages of the range at " + os::hex(r.start) +
                                ": move_pages: " + errno_name(err),
                    err);
    PlacementResult res = compare(plan, status);
    res.realisation = "verified only";
    return res;
}

PlacementResult apply(void* addr, std::size_t bytes, const PlacementPlan& plan, os::Os& os,
                      const ApplyOptions& options) {
    const Range r = make_range(addr, bytes, plan, os, "apply");
    Snapshot snap = take_snapshot(os, r, true);
    const std::size_t all = r.pages.size();
    const unsigned move_strict = os::mf_move | os::mf_strict;

    Realisation how = plan.realisation;
    std::string done = plan.realisation_text();
    const bool weighted = plan.realisation == Realisation::range_policy &&
                          plan.mode == MemoryPolicyMode::weighted_interleave;
    bool kernel_weighted = weighted;
    if (weighted && !os.has_weighted_interleave()) {
        // Same plan, realised without the kernel mode (kernels before 6.9).
        kernel_weighted = false;
        how = Realisation::move_pages;
        done = weighted_fallback_note(plan);
    }

    if (plan.no_huge_pages) {
        if (int err = os.madvise(addr, range_len(r), MADV_NOHUGEPAGE))
            fail(os, r, plan, snap, "madvise(MADV_NOHUGEPAGE)", err, 0, all);
        done += "; MADV_NOHUGEPAGE";
    }

    switch (how) {
    case Realisation::range_policy: {
        if (kernel_weighted) {
            // The kernel reads weights from a system-wide table at every
            // fault: set them, populate, then put the old ones back.
            for (const auto& [node, weight] : plan.node_weights) {
                unsigned old = 1;
                if (int err = os.read_interleave_weight(node, old))
                    fail(os, r, plan, snap, "reading the interleave weight of node " + std::to_string(node), err, 0, all);
                snap.weights.emplace_back(node, old);
                if (int err = os.write_interleave_weight(node, weight))
                    fail(os, r, plan, snap, "writing the interleave weight of node " + std::to_string(node), err, 0, all);
            }
        }
        const unsigned flags = plan.mode == MemoryPolicyMode::default_ ? 0u : move_strict;
        if (int err = os.mbind(addr, range_len(r), plan.mode, plan.mode_nodes, flags))
            fail(os, r, plan, snap, "mbind(" + mode_text(plan.mode, plan.mode_nodes) + ")", err, 0, all);
        break;
    }
    case Realisation::per_run_mbind:
        for (const PlacementRun& run : plan.runs) {
            if (int err = os.mbind(r.at(run.first_page), run.pages * r.page_size, os::PolicyMode::bind,
                                   NodeSet{run.node}, move_strict))
                fail(os, r, plan, snap, "mbind(bind, " + std::to_string(run.node) + ")", err, run.first_page, run.pages);
        }
        break;
    case Realisation::move_pages: {
        // Pages placed one by one would otherwise keep the default policy,
        // and automatic NUMA balancing would pull the remote ones back to
        // whichever thread touches them. A bind to the plan's nodes (no
        // MOVE: pages already present stay for move_to_plan to handle)
        // exempts the range from balancing and keeps later faults on them.
        NodeSet used;
        for (int n : plan.page_nodes)
            if (n >= 0) used.add(static_cast<unsigned>(n));
        if (!used.empty()) {
            if (int err = os.mbind(addr, range_len(r), os::PolicyMode::bind, used, 0))
                fail(os, r, plan, snap, "mbind(" + mode_text(MemoryPolicyMode::bind, used) + ")", err, 0, all);
            done += "; range bound to " + used.to_string();
        }
        break;
    }
    }

    const bool must_populate = options.populate || how == Realisation::move_pages || kernel_weighted;
    if (must_populate) {
        if (int err = populate(os, r)) fail(os, r, plan, snap, "populating the range", err, 0, all);
        done += "; populated";
    }
    // mbind(MPOL_MF_MOVE) only moves pages that sit outside the policy's
    // node set, so pages already present on the "wrong" member of an
    // interleave set stay put; move those (and every page of a page-by-page
    // plan) explicitly.
    const bool had_pages = std::any_of(snap.nodes.begin(), snap.nodes.end(), [](int n) { return n >= 0; });
    if (how == Realisation::move_pages || had_pages) move_to_plan(os, r, plan, snap);

    // The pages are placed; later faults in this range no longer need the weights.
    if (kernel_weighted) {
        std::string problems;
        for (const auto& [node, weight] : snap.weights)
            if (int err = os.write_interleave_weight(node, weight))
                problems += " node " + std::to_string(node) + ": " + errno_name(err);
        snap.weights.clear();
        if (!problems.empty()) done += "; restoring interleave weights failed:" + problems;
    }

    std::vector<int> status;
    if (int err = locate(os, r, status, must_populate))
        fail(os, r, plan, snap, "move_pages (verification)", err, 0, all);
    PlacementResult res = compare(plan, status);
    res.realisation = done;
    if (options.rollback_on_mismatch && !res.ok()) {
        std::vector<std::size_t> bad;
        for (const auto& m : res.mismatches) bad.push_back(m.page);
        for (const auto& u : res.unplaced) bad.push_back(u.page);
        std::sort(bad.begin(), bad.end());
        fail(os, r, plan, snap, "verification (" + res.summary() + ")", EIO, 0, all, bad);
    }
    remember(os, r, how, plan, status);
    return res;
}

PlacementResult migrate(void* addr, std::size_t bytes, const PlacementPlan& plan, os::Os& os) {
    const Range r = make_range(addr, bytes, plan, os, "migrate");
    // Range policies are left alone, so only page locations need restoring.
    // The pages are expected present: settle so that rollback knows them all.
    const Snapshot snap = take_snapshot(os, r, false, true);
    move_to_plan(os, r, plan, snap);
    std::vector<int> status;
    if (int err = locate(os, r, status, true))
        fail(os, r, plan, snap, "move_pages (verification)", err, 0, r.pages.size());
    PlacementResult res = compare(plan, status);
    res.realisation = "move_pages page by page";
    // Moved under the range's old policy, which may let balancing move them.
    if (&os == &os::linux_os()) placement_detail::forget_placement(r.start, range_len(r));
    return res;
}

PlanOptions plan_options_for(os::Os& os) {
    PlanOptions o;
    o.page_size = os.page_size();
    o.interleave_index_32bit = os::interleave_index_is_32bit();
    return o;
}

void apply_process_policy(const PlacementPolicy& policy, const Machine& machine, const PlanOptions& options,
                          os::Os& os) {
    using Kind = PlacementPolicy::Kind;
    const std::string field = "policy '" + policy.to_string() + "'";
    if (policy.kind == Kind::block || policy.kind == Kind::cyclic || policy.kind == Kind::page_map)
        throw Error(field, "a " + policy.to_string() +
                               " map places parts of one range; it cannot be a process policy "
                               "(use bind, preferred, preferred-many, interleave, weighted, local or remote)");
    // A one-page plan resolves local/remote and checks the policy; its
    // mode and node set are what set_mempolicy takes.
    PlanOptions o = options;
    o.fine_grained = HugePageHandling::small_pages;
    const PlacementPlan p = plan(policy, reinterpret_cast<const void*>(o.page_size), 1, machine, o);
    if (p.mode == MemoryPolicyMode::weighted_interleave) {
        if (!os.has_weighted_interleave())
            throw Error(field, "this kernel has no MPOL_WEIGHTED_INTERLEAVE (Linux 6.9 or later), "
                               "so weighted interleave cannot be a process policy",
                        EINVAL);
    }
    // Weights written so far, with their old values, to undo on failure.
    std::vector<std::pair<unsigned, unsigned>> old_weights;
    auto undo_weights = [&] {
        for (const auto& [node, weight] : old_weights) os.write_interleave_weight(node, weight);
    };
    if (p.mode == MemoryPolicyMode::weighted_interleave) {
        for (const auto& [node, weight] : p.node_weights) {
            unsigned old = 1;
            int err = os.read_interleave_weight(node, old);
            if (err == 0) {
                old_weights.emplace_back(node, old);
                err = os.write_interleave_weight(node, weight);
            }
            if (err != 0) {
                undo_weights();
                throw Error(field, "setting the interleave weight of node " + std::to_string(node) +
                                       " failed: " + errno_name(err),
                            err);
            }
        }
    }
    if (int err = os.set_mempolicy(p.mode, p.mode_nodes)) {
        undo_weights();
        throw Error(field, "set_mempolicy(" + mode_text(p.mode, p.mode_nodes) + ") failed: " + policy_call_error(err),
                    err);
    }
}

}  // namespace numaware
