// Unit tests of the task runtime's dependency tracker (src/tasks/deps.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "support.hpp"
#include "tasks/deps.hpp"

namespace numaware::tasks::detail {
namespace {

using numaware::test::contains;
using numaware::test::expect_error;

// Fake addresses: never dereferenced.
const void* at(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }
void* mut(std::uintptr_t a) { return reinterpret_cast<void*>(a); }

struct Harness {
    DepTracker tracker;
    std::vector<std::unique_ptr<DepNode>> nodes;

    // Adds task nodes.size() with `deps`; returns whether it is ready.
    bool add(std::initializer_list<Dep> deps) {
        auto n = std::make_unique<DepNode>();
        n->id = nodes.size();
        tracker.prepare(std::span<const Dep>(deps.begin(), deps.size()), n->deps);
        tracker.add(*n);
        const std::span<const Edge> found = tracker.preds();
        const bool ready = tracker.commit(*n);
        edges.emplace_back(found.begin(), found.end());
        nodes.push_back(std::move(n));
        return ready;
    }
    std::vector<TaskId> complete(TaskId id) {
        std::vector<ReadyNode> ready;
        tracker.complete(*nodes[id], ready);
        std::vector<TaskId> ids;
        for (const ReadyNode& n : ready) {
            EXPECT_EQ(n.node->id, n.id);
            ids.push_back(n.id);
        }
        return ids;
    }
    // The predecessors add() found for each task, kept when it returned.
    std::vector<std::vector<Edge>> edges;
    const std::vector<Edge>& preds(TaskId id) const { return edges[id]; }
};

bool has_edge(const std::vector<Edge>& preds, TaskId from, std::uint64_t bytes) {
    for (const Edge& e : preds)
        if (e.from == from && e.bytes == bytes) return true;
    return false;
}

TEST(TasksDeps, ReadAfterWriteEdgeCarriesRegionBytes) {
    Harness h;
    EXPECT_TRUE(h.add({out(mut(0x1000), 64)}));
    EXPECT_FALSE(h.add({in(at(0x1000), 64)}));
    ASSERT_EQ(h.preds(1).size(), 1u);
    EXPECT_TRUE(has_edge(h.preds(1), 0, 64));
    EXPECT_EQ(h.complete(0), std::vector<TaskId>{1});
    EXPECT_TRUE(h.complete(1).empty());
}

TEST(TasksDeps, ReadersRunTogetherAndWriterWaitsForAllOfThem) {
    Harness h;
    h.add({out(mut(0x1000), 64)});                 // 0
    EXPECT_FALSE(h.add({in(at(0x1000), 64)}));     // 1: RAW on 0
    EXPECT_FALSE(h.add({in(at(0x1000), 64)}));     // 2: RAW on 0
    EXPECT_FALSE(h.add({inout(mut(0x1000), 64)})); // 3: WAR on 1 and 2
    EXPECT_EQ(h.preds(3).size(), 2u);
    EXPECT_TRUE(has_edge(h.preds(3), 1, 64));
    EXPECT_TRUE(has_edge(h.preds(3), 2, 64));
    const auto r = h.complete(0);
    EXPECT_EQ(r.size(), 2u);
    EXPECT_TRUE(h.complete(1).empty());
    EXPECT_EQ(h.complete(2), std::vector<TaskId>{3});
}

TEST(TasksDeps, WriteAfterWriteAndByteSumsPerPredecessor) {
    Harness h;
    h.add({out(mut(0x1000), 64), out(mut(0x2000), 32)});   // 0
    EXPECT_FALSE(h.add({out(mut(0x1000), 64), in(at(0x2000), 32)}));
    ASSERT_EQ(h.preds(1).size(), 1u);   // one edge per predecessor, bytes summed
    EXPECT_TRUE(has_edge(h.preds(1), 0, 96));
    EXPECT_EQ(h.tracker.pending(*h.nodes[1]), 1u);
}

TEST(TasksDeps, FinishedTasksAreNotPredecessors) {
    Harness h;
    h.add({out(mut(0x1000), 64)});
    EXPECT_TRUE(h.complete(0).empty());
    EXPECT_TRUE(h.add({in(at(0x1000), 64)}));
    EXPECT_TRUE(h.preds(1).empty());
}

TEST(TasksDeps, IdenticalDuplicateIsMergedDifferentAccessIsRejected) {
    Harness h;
    h.add({in(at(0x1000), 64), in(at(0x1000), 64)});
    EXPECT_EQ(h.nodes[0]->deps.size(), 1u);
    DepList out_deps;
    const Dep bad[] = {in(at(0x3000), 8), out(mut(0x3000), 8)};
    const Error e = expect_error([&] { h.tracker.prepare(bad, out_deps); });
    EXPECT_EQ(e.field(), "deps[1]");
    EXPECT_TRUE(contains(e.what(), "named twice")) << e.what();
}

TEST(TasksDeps, PartialOverlapIsRejectedWithBothRanges) {
    Harness h;
    h.add({out(mut(0x1000), 0x100)});
    DepList out_deps;
    const Dep later[] = {in(at(0x5000), 8), in(at(0x1080), 0x100)};
    const Error e = expect_error([&] { h.tracker.prepare(later, out_deps); });
    EXPECT_EQ(e.field(), "deps[1]");
    EXPECT_TRUE(contains(e.what(), "[0x1080, 0x1180) partially overlaps range [0x1000, 0x1100) already in use"))
        << e.what();
    const Dep same_start[] = {in(at(0x1000), 0x80)};
    EXPECT_EQ(expect_error([&] { h.tracker.prepare(same_start, out_deps); }).field(), "deps[0]");
    const Dep before[] = {in(at(0x0f80), 0x100)};
    EXPECT_EQ(expect_error([&] { h.tracker.prepare(before, out_deps); }).field(), "deps[0]");
    const Dep within_task[] = {in(at(0x9000), 0x100), in(at(0x9010), 0x10)};
    const Error w = expect_error([&] { h.tracker.prepare(within_task, out_deps); });
    EXPECT_TRUE(contains(w.what(), "same task")) << w.what();
    // Adjacent is fine.
    const Dep adjacent[] = {in(at(0x1100), 0x100), in(at(0x0f00), 0x100)};
    h.tracker.prepare(adjacent, out_deps);
    EXPECT_EQ(out_deps.size(), 2u);
}

TEST(TasksDeps, BadInputLeavesStateUnchanged) {
    Harness h;
    h.add({out(mut(0x1000), 64)});
    const std::size_t regions = h.tracker.regions();
    DepList out_deps;
    const Dep null_addr[] = {out(mut(0x2000), 8), in(nullptr, 8)};
    const Error e1 = expect_error([&] { h.tracker.prepare(null_addr, out_deps); });
    EXPECT_EQ(e1.field(), "deps[1]");
    const Dep zero[] = {in(at(0x2000), 0)};
    const Error e2 = expect_error([&] { h.tracker.prepare(zero, out_deps); });
    EXPECT_TRUE(contains(e2.what(), "0 bytes")) << e2.what();
    const Dep wrap[] = {in(at(UINTPTR_MAX - 4), 16)};
    EXPECT_EQ(expect_error([&] { h.tracker.prepare(wrap, out_deps); }).field(), "deps[0]");
    EXPECT_EQ(h.tracker.regions(), regions);
    // The next task still sees task 0 as the writer.
    EXPECT_FALSE(h.add({in(at(0x1000), 64)}));
    EXPECT_TRUE(has_edge(h.preds(1), 0, 64));
}

TEST(TasksDeps, IdleRegionsAreForgotten) {
    Harness h;
    for (std::uintptr_t i = 0; i < 100; ++i) {
        h.add({out(mut(0x100000 + i * 64), 64)});
        h.complete(i);
    }
    EXPECT_EQ(h.tracker.idle_regions(), 100u);
    h.tracker.forget_idle();
    EXPECT_EQ(h.tracker.regions(), 0u);
    // Once forgotten, a range may be named with another size.
    EXPECT_TRUE(h.add({in(at(0x100000), 128)}));
}

// The caller's per-region data of forgotten regions is handed back once,
// so it can drop what it keeps for them (the executor's region homes).
TEST(TasksDeps, ForgottenRegionsHandTheirCacheBack) {
    Harness h;
    int marks[3] = {};
    for (std::uintptr_t i = 0; i < 3; ++i) {
        h.add({out(mut(0x200000 + i * 64), 64)});
        h.nodes.back()->deps[0].reg->cache = &marks[i];
    }
    h.add({out(mut(0x300000), 64)});   // 3: no cache set
    h.complete(0);
    h.complete(1);
    h.complete(3);
    EXPECT_FALSE(h.tracker.has_forgotten());   // idle, not yet forgotten
    h.tracker.forget_idle();
    ASSERT_TRUE(h.tracker.has_forgotten());
    std::vector<void*> got{&marks[2]};         // cleared first
    h.tracker.take_forgotten(got);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, (std::vector<void*>{&marks[0], &marks[1]}));   // task 2's region is still named
    EXPECT_FALSE(h.tracker.has_forgotten());
    h.tracker.take_forgotten(got);
    EXPECT_TRUE(got.empty());
}

// The table of known regions against a set: erasing a batch by marks and
// rebuilding only the pages that lost records keeps every other record
// findable, including past pages that were emptied and probe chains that
// ran through an erased slot.
TEST(TasksDeps, TheRegionTableErasesBatchesAndFindsTheRest) {
    struct Rec {
        std::uint64_t start;
    };
    std::mt19937_64 rng(11);
    std::vector<std::unique_ptr<Rec>> recs;
    // Dense runs inside some pages (long probe chains), single records in
    // many others (pages that empty).
    for (std::uint64_t k = 0; k < 3000; ++k) recs.push_back(std::make_unique<Rec>(Rec{0x100000 + k * 8}));
    for (std::uint64_t k = 0; k < 500; ++k) recs.push_back(std::make_unique<Rec>(Rec{0x10000000 + k * 4096 + 64}));
    PagedTable<Rec> table;
    std::set<std::uint64_t> in;
    for (auto& r : recs) {
        table.insert(r.get());
        in.insert(r->start);
    }
    for (int round = 0; round < 6; ++round) {
        std::vector<Rec*> gone;
        for (auto& r : recs)
            if (in.count(r->start) != 0 && rng() % 3 == 0) gone.push_back(r.get());
        std::shuffle(gone.begin(), gone.end(), rng);
        table.erase(gone);
        for (Rec* r : gone) in.erase(r->start);
        ASSERT_EQ(table.size(), in.size()) << "round " << round;
        for (auto& r : recs) {
            Rec* found = table.find(r->start);
            if (in.count(r->start) != 0)
                ASSERT_EQ(found, r.get()) << std::hex << r->start << " round " << round;
            else
                ASSERT_EQ(found, nullptr) << std::hex << r->start << " round " << round;
        }
        // Half of the erased come back.
        for (std::size_t k = 0; k < gone.size(); k += 2) {
            table.insert(gone[k]);
            in.insert(gone[k]->start);
        }
        std::size_t seen = 0;
        table.for_each([&](Rec*) { ++seen; });
        ASSERT_EQ(seen, in.size());
    }
    std::vector<Rec*> rest;
    table.for_each([&](Rec* r) { rest.push_back(r); });
    table.erase(rest);
    EXPECT_EQ(table.size(), 0u);
    EXPECT_EQ(table.find(recs[0]->start), nullptr);
}

// add()'s batches keep an idle region that was named during the batch
// before: one read again soon after it went idle is not made again.
TEST(TasksDeps, AnIdleRegionNamedAgainSoonIsKept) {
    Harness h;
    h.add({out(mut(0x1000), 8)});   // 0: the region read again later
    h.complete(0);
    std::uintptr_t i = 1;
    // Up to the first batch that forgets something.
    for (std::size_t before = h.tracker.regions(); i < 20000; ++i, before = h.tracker.regions()) {
        h.add({out(mut(0x100000 + i * 8), 8)});
        h.complete(i);
        if (h.tracker.regions() < before) break;
        // Named again in every batch: never forgotten.
        if (i % 1024 == 0) {
            h.add({in(at(0x1000), 8)});
            h.complete(++i);
        }
    }
    ASSERT_LT(i, 20000u) << "no batch forgot anything";
    // Still known: a new reader finds it, with no region made for it.
    const std::size_t known = h.tracker.regions();
    h.add({in(at(0x1000), 8)});
    EXPECT_EQ(h.tracker.regions(), known);
    // forget_idle() forgets every idle region, young or not.
    h.complete(i + 1);
    h.tracker.forget_idle();
    EXPECT_EQ(h.tracker.regions(), 0u);
}

TEST(TasksDeps, ManyRegionsDoNotGrowWithoutBound) {
    Harness h;
    for (std::uintptr_t i = 0; i < 20000; ++i) {
        h.add({inout(mut(0x100000 + i * 64), 64)});
        h.complete(i);
    }
    EXPECT_LT(h.tracker.regions(), 10000u);
}

TEST(TasksDeps, ReaderRemovalKeepsOtherReadersTracked) {
    Harness h;
    h.add({out(mut(0x1000), 8)});   // 0
    h.add({in(at(0x1000), 8)});     // 1
    h.add({in(at(0x1000), 8)});     // 2
    h.add({in(at(0x1000), 8)});     // 3
    h.complete(0);
    h.complete(1);   // swap-remove: 3 moves into 1's slot
    h.complete(3);
    EXPECT_FALSE(h.add({out(mut(0x1000), 8)}));   // 4: WAR on 2 only
    ASSERT_EQ(h.preds(4).size(), 1u);
    EXPECT_EQ(h.preds(4)[0].from, 2u);
    EXPECT_EQ(h.complete(2), std::vector<TaskId>{4});
}

TEST(TasksDeps, OverlapCheckMatchesABruteForceScan) {
    // Random ranges of very different sizes against the ordered index: a
    // range is accepted exactly when it is identical or disjoint to every
    // known one (checked by scanning them all).
    Harness h;
    std::mt19937_64 rng(7);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> known;   // start, bytes
    DepList out_deps;
    int accepted = 0, rejected = 0;
    for (int k = 0; k < 3000; ++k) {
        const std::uint64_t start = 0x10000 + (rng() % 0x40000) * 8;
        const std::uint64_t sizes[] = {8, 64, 4096, 40000, 1 << 20};
        const std::uint64_t bytes = sizes[rng() % 5];
        bool ok = true;
        for (const auto& [s, n] : known)
            if (!(s == start && n == bytes) && start < s + n && s < start + bytes) ok = false;
        const Dep d[] = {in(at(start), bytes)};
        if (ok) {
            ASSERT_NO_THROW(h.tracker.prepare(d, out_deps)) << std::hex << start << " " << bytes;
            h.add({in(at(start), bytes)});
            bool seen = false;
            for (const auto& [s, n] : known) seen |= s == start;
            if (!seen) known.emplace_back(start, bytes);
            ++accepted;
        } else {
            EXPECT_EQ(expect_error([&] { h.tracker.prepare(d, out_deps); }).field(), "deps[0]")
                << std::hex << start << " " << bytes;
            ++rejected;
        }
    }
    EXPECT_GT(accepted, 100);
    EXPECT_GT(rejected, 100);
    EXPECT_EQ(h.tracker.regions(), known.size());
}

TEST(TasksDeps, ForgottenRegionsLeaveTheOverlapIndexAndRecordsAreReused) {
    Harness h;
    // A large region, then small ones around it, all finished and forgotten.
    h.add({out(mut(0x100000), 0x10000)});
    for (std::uintptr_t i = 0; i < 300; ++i) h.add({out(mut(0x200000 + i * 8), 8)});
    for (TaskId id = 0; id < h.nodes.size(); ++id) h.complete(id);
    EXPECT_EQ(h.tracker.idle_regions(), 301u);
    h.tracker.forget_idle();
    EXPECT_EQ(h.tracker.regions(), 0u);
    // Ranges that overlapped forgotten ones are fine now.
    EXPECT_TRUE(h.add({out(mut(0x100008), 8), in(at(0x200004), 8)}));
    EXPECT_EQ(h.tracker.regions(), 2u);
    // ...and checked against each other as before.
    DepList out_deps;
    const Dep over[] = {in(at(0x100000), 16)};
    EXPECT_EQ(expect_error([&] { h.tracker.prepare(over, out_deps); }).field(), "deps[0]");
}

TEST(TasksDeps, ARegionStaysTrackedWhileIdleRegionsAroundItAreForgotten) {
    Harness h;
    h.add({out(mut(0x1000), 8)});   // 0: stays unfinished
    constexpr std::uintptr_t n = 12288;   // three batches of 4096 regions
    for (std::uintptr_t i = 1; i <= n; ++i) {
        h.add({inout(mut(0x1000 + i * 8), 8)});
        h.complete(i);
    }
    // Batches forgot the idle ones not named during the batch before (at
    // most two batches are known); the region of task 0 still orders.
    EXPECT_LE(h.tracker.regions(), 2 * 4096u + 1);
    EXPECT_FALSE(h.add({in(at(0x1000), 8)}));
    EXPECT_TRUE(has_edge(h.preds(n + 1), 0, 8));
    EXPECT_EQ(h.complete(0), std::vector<TaskId>{n + 1});
}

TEST(TasksDeps, ManySuccessorsSpillIntoOverflowBlocksAndAllBecomeReady) {
    Harness h;
    h.add({out(mut(0x1000), 8)});   // 0
    for (int k = 0; k < 50; ++k) EXPECT_FALSE(h.add({in(at(0x1000), 8)}));
    auto ready = h.complete(0);
    std::sort(ready.begin(), ready.end());
    std::vector<TaskId> want;
    for (TaskId id = 1; id <= 50; ++id) want.push_back(id);
    EXPECT_EQ(ready, want);
    // A writer after them waits for all 50; the overflow blocks were reused.
    EXPECT_FALSE(h.add({out(mut(0x1000), 8)}));   // 51
    EXPECT_EQ(h.tracker.pending(*h.nodes[51]), 50u);
    for (TaskId id = 1; id < 50; ++id) EXPECT_TRUE(h.complete(id).empty());
    EXPECT_EQ(h.complete(50), std::vector<TaskId>{51});
}

TEST(TasksDeps, AFinishedReadersReusedSlotIsNoPredecessorOfALaterWriter) {
    Harness h;
    h.add({in(at(0x1000), 8)});    // 0: reads A
    h.complete(0);                 // its slot is free
    h.add({in(at(0x2000), 8)});    // 1: reuses the slot, reads B
    EXPECT_TRUE(h.add({out(mut(0x1000), 8)}));   // 2: A has no unfinished reader
    EXPECT_FALSE(h.add({out(mut(0x2000), 8)}));  // 3: WAR on 1
    EXPECT_EQ(h.complete(1), std::vector<TaskId>{3});
}

TEST(TasksDeps, AReadOnlyRegionKeepsAShortReaderList) {
    // Readers come and go without a writer: a later writer waits exactly
    // for the unfinished ones.
    Harness h;
    h.add({in(at(0x1000), 8)});   // 0: stays unfinished
    for (TaskId id = 1; id <= 3000; ++id) {
        h.add({in(at(0x1000), 8)});
        h.complete(id);
    }
    h.add({in(at(0x1000), 8)});   // 3001: unfinished
    EXPECT_FALSE(h.add({out(mut(0x1000), 8)}));   // 3002
    ASSERT_EQ(h.preds(3002).size(), 2u);
    EXPECT_TRUE(has_edge(h.preds(3002), 0, 8));
    EXPECT_TRUE(has_edge(h.preds(3002), 3001, 8));
}

// The tracker against a model written from the rules in deps.hpp, on random
// graphs: every task's predecessors and every completion's ready set.
TEST(TasksDeps, MatchesAReferenceModelOnRandomGraphs) {
    for (std::uint64_t run = 0; run < 20; ++run) {
        const std::uint64_t seed = 1 + run;
        std::mt19937_64 rng(seed);
        Harness h;
        struct RefRegion {
            long writer = -1;
            std::vector<TaskId> readers;
        };
        std::vector<RefRegion> regions(6);
        std::vector<bool> finished;
        std::vector<std::set<TaskId>> preds_of;
        std::vector<TaskId> unfinished;
        for (int step = 0; step < 600; ++step) {
            if (!unfinished.empty() && rng() % 3 == 0) {
                // Complete a random unfinished task whose predecessors are done.
                std::vector<TaskId> runnable;
                for (TaskId t : unfinished) {
                    bool ok = true;
                    for (TaskId p : preds_of[t]) ok &= static_cast<bool>(finished[p]);
                    if (ok) runnable.push_back(t);
                }
                ASSERT_FALSE(runnable.empty());
                const TaskId t = runnable[rng() % runnable.size()];
                finished[t] = true;
                unfinished.erase(std::find(unfinished.begin(), unfinished.end(), t));
                std::set<TaskId> want;
                for (TaskId s : unfinished) {
                    if (!preds_of[s].count(t)) continue;
                    bool ok = true;
                    for (TaskId p : preds_of[s]) ok &= static_cast<bool>(finished[p]);
                    if (ok) want.insert(s);
                }
                const auto got = h.complete(t);
                EXPECT_EQ(std::set<TaskId>(got.begin(), got.end()), want) << "seed " << seed << " step " << step;
                continue;
            }
            // A new task naming 1-3 distinct regions.
            const TaskId id = h.nodes.size();
            std::vector<Dep> deps;
            std::set<TaskId> want;
            std::vector<std::size_t> picked;
            const std::size_t n = 1 + rng() % 3;
            while (picked.size() < n) {
                const std::size_t r = rng() % regions.size();
                if (std::find(picked.begin(), picked.end(), r) == picked.end()) picked.push_back(r);
            }
            for (std::size_t r : picked) {
                RefRegion& ref = regions[r];
                void* addr = mut(0x10000 + r * 64);
                const auto alive = [&](long t) { return t >= 0 && !finished[static_cast<TaskId>(t)]; };
                if (rng() % 2 == 0) {
                    deps.push_back(in(addr, 64));
                    if (alive(ref.writer)) want.insert(static_cast<TaskId>(ref.writer));
                    ref.readers.push_back(id);
                } else {
                    deps.push_back(rng() % 2 ? out(addr, 64) : inout(addr, 64));
                    bool any = false;
                    for (TaskId rd : ref.readers)
                        if (alive(static_cast<long>(rd))) {
                            want.insert(rd);
                            any = true;
                        }
                    if (!any && alive(ref.writer)) want.insert(static_cast<TaskId>(ref.writer));
                    ref.readers.clear();
                    ref.writer = static_cast<long>(id);
                }
            }
            auto node = std::make_unique<DepNode>();
            node->id = id;
            h.tracker.prepare(deps, node->deps);
            h.tracker.add(*node);
            std::set<TaskId> got;
            for (const Edge& e : h.tracker.preds()) got.insert(e.from);
            const bool ready = h.tracker.commit(*node);
            h.nodes.push_back(std::move(node));
            EXPECT_EQ(got, want) << "seed " << seed << " task " << id;
            EXPECT_EQ(ready, want.empty());
            finished.push_back(false);
            preds_of.push_back(want);
            unfinished.push_back(id);
        }
    }
}

// complete() runs on several threads while one thread adds: every task is
// made ready exactly once, only after all of its predecessors finished, and
// each edge is either linked before its predecessor finishes or not at all
// (checked against the finished flags the edges name). Run by the thread
// sanitizer build too.
TEST(TasksDeps, ConcurrentCompletionsReadyEachTaskOnceAfterItsPredecessors) {
    constexpr TaskId tasks = 20000;
    constexpr int completers = 2;
    DepTracker tracker;
    std::vector<std::unique_ptr<DepNode>> nodes(tasks);
    std::vector<std::vector<TaskId>> preds(tasks);
    std::unique_ptr<std::atomic<int>[]> readied(new std::atomic<int>[tasks]);
    std::unique_ptr<std::atomic<bool>[]> finished(new std::atomic<bool>[tasks]);
    for (TaskId i = 0; i < tasks; ++i) {
        readied[i].store(0);
        finished[i].store(false);
    }
    std::mutex m;
    std::deque<TaskId> ready_queue;
    std::atomic<TaskId> done{0};
    std::atomic<int> early{0};
    auto make_ready = [&](TaskId id) {
        readied[id].fetch_add(1);
        std::lock_guard g(m);
        ready_queue.push_back(id);
    };
    std::vector<std::thread> threads;
    for (int c = 0; c < completers; ++c)
        threads.emplace_back([&] {
            std::vector<ReadyNode> ready;
            while (done.load() < tasks) {
                TaskId id;
                {
                    std::lock_guard g(m);
                    if (ready_queue.empty()) continue;
                    id = ready_queue.front();
                    ready_queue.pop_front();
                }
                for (TaskId p : preds[id])
                    if (!finished[p].load()) early.fetch_add(1);
                finished[id].store(true);
                tracker.complete(*nodes[id], ready);
                for (const ReadyNode& r : ready) make_ready(r.id);
                ready.clear();
                done.fetch_add(1);
            }
        });
    std::mt19937_64 rng(11);
    for (TaskId i = 0; i < tasks; ++i) {
        auto n = std::make_unique<DepNode>();
        n->id = i;
        std::vector<Dep> deps;
        const std::size_t k = 1 + rng() % 3;
        std::set<std::uint64_t> used;
        while (used.size() < k) used.insert(rng() % 40);
        for (std::uint64_t r : used) {
            void* addr = mut(0x100000 + r * 64);
            deps.push_back(rng() % 3 == 0 ? inout(addr, 64) : in(addr, 64));
        }
        tracker.prepare(deps, n->deps);
        DepNode& node = *n;
        nodes[i] = std::move(n);   // published before add(): a completer may reach it at once
        tracker.add(node);
        for (const Edge& e : tracker.preds()) preds[i].push_back(e.from);
        if (tracker.commit(node)) make_ready(i);
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(early.load(), 0);
    for (TaskId i = 0; i < tasks; ++i) ASSERT_EQ(readied[i].load(), 1) << "task " << i;
    EXPECT_EQ(tracker.idle_regions(), tracker.regions());
}

}  // namespace
}  // namespace numaware::tasks::detail
