// The task simulator's event queue: events come out by time, ties in the
// order they were pushed, whichever of its places they wait in (the submit
// slot, the published first wake-up, the finish tree, the main heap, the
// wake heap); a
// worker's new wake replaces its pending one, and cancel_wake() removes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/event_engine.hpp"

namespace numaware::sim {
namespace {

TEST(SimEvents, TiesComeOutInPushOrderAcrossSubmitMainAndWakeEvents) {
    EventEngine e;
    e.push(1.0, EventKind::wake, 3, 7);
    e.push(1.0, EventKind::finish, 2);
    e.push(1.0, EventKind::submit, 9);
    e.push(0.5, EventKind::finish, 1);
    ASSERT_EQ(e.next_time(), 0.5);
    EXPECT_EQ(e.pop().a, 1u);
    const Event w = e.pop();
    EXPECT_EQ(w.kind, EventKind::wake);
    EXPECT_EQ(w.a, 3u);
    EXPECT_EQ(w.b, 7u);
    EXPECT_EQ(e.pop().kind, EventKind::finish);
    EXPECT_EQ(e.pop().kind, EventKind::submit);
    EXPECT_TRUE(e.empty());
}

TEST(SimEvents, ANewWakeReplacesTheWorkersPendingOneAndCancelRemovesIt) {
    EventEngine e;
    e.push(5.0, EventKind::wake, 0, 1);
    e.push(2.0, EventKind::wake, 0, 2);   // replaces epoch 1
    e.push(3.0, EventKind::wake, 1, 1);
    e.push(4.0, EventKind::wake, 2, 1);
    e.cancel_wake(1);
    e.cancel_wake(7);                     // no wake pending: nothing happens
    Event x = e.pop();
    EXPECT_EQ(x.a, 0u);
    EXPECT_EQ(x.b, 2u);
    EXPECT_EQ(x.t, 2.0);
    x = e.pop();
    EXPECT_EQ(x.a, 2u);
    EXPECT_EQ(x.t, 4.0);
    EXPECT_TRUE(e.empty());
    EXPECT_EQ(e.next_time(), std::numeric_limits<double>::infinity());
}

// The worker model keeps first wake-ups outside the engine and publishes
// the earliest with a sequence number taken when the worker went idle: it
// comes out by that number among events at the same time, and a cleared
// one never comes out.
TEST(SimEvents, APublishedFirstWakeKeepsTheOrderOfItsSequenceNumber) {
    EventEngine e;
    const std::uint64_t early = e.take_seq();   // taken before the finish below was pushed
    e.push(2.0, EventKind::finish, 4);
    e.set_first_wake(Event{2.0, early, EventKind::wake, 5, 1});
    EXPECT_FALSE(e.empty());
    EXPECT_EQ(e.next_time(), 2.0);
    Event x = e.pop();
    EXPECT_EQ(x.kind, EventKind::wake);
    EXPECT_EQ(x.a, 5u);
    EXPECT_EQ(x.seq, early);
    EXPECT_EQ(e.pop().kind, EventKind::finish);
    EXPECT_TRUE(e.empty());

    e.set_first_wake(Event{1.0, e.take_seq(), EventKind::wake, 6, 2});
    e.clear_first_wake();
    e.push(3.0, EventKind::finish, 7);
    x = e.pop();
    EXPECT_EQ(x.kind, EventKind::finish);
    EXPECT_EQ(x.a, 7u);
    EXPECT_TRUE(e.empty());
}

// Against a reference: every live event, popped as the minimum by
// (time, push order). Times are drawn from few values so ties are common;
// a worker may have several finishes pending (the finish tree holds one,
// the main heap the rest).
TEST(SimEvents, MatchesASortedReferenceUnderRandomPushesReplacementsAndCancels) {
    struct Ref {
        double t;
        std::uint64_t order;
        EventKind kind;
        std::uint32_t a;
        std::uint64_t b;
    };
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        std::mt19937_64 rng(seed);
        EventEngine e;
        std::vector<Ref> ref;
        std::uint64_t order = 0;
        double now = 0;
        bool submit_pending = false;
        for (int step = 0; step < 4000; ++step) {
            const unsigned op = static_cast<unsigned>(rng() % 10);
            const double t = now + static_cast<double>(rng() % 4);
            // Few workers (ties and second finishes of one worker are
            // common), or many (the finish tree grows while events wait).
            const auto w = static_cast<std::uint32_t>(rng() % (seed % 2 == 0 ? 8 : 300));
            if (op < 3) {
                e.push(t, EventKind::finish, w, step);
                ref.push_back(Ref{t, order++, EventKind::finish, w, static_cast<std::uint64_t>(step)});
            } else if (op < 6) {
                e.push(t, EventKind::wake, w, step);
                std::erase_if(ref, [&](const Ref& r) { return r.kind == EventKind::wake && r.a == w; });
                ref.push_back(Ref{t, order++, EventKind::wake, w, static_cast<std::uint64_t>(step)});
            } else if (op == 6) {
                e.cancel_wake(w);
                std::erase_if(ref, [&](const Ref& r) { return r.kind == EventKind::wake && r.a == w; });
            } else if (op == 7 && !submit_pending) {
                e.push(t, EventKind::submit, w, step);
                ref.push_back(Ref{t, order++, EventKind::submit, w, static_cast<std::uint64_t>(step)});
                submit_pending = true;
            } else if (!ref.empty()) {
                const auto best = std::min_element(ref.begin(), ref.end(), [](const Ref& x, const Ref& y) {
                    return x.t != y.t ? x.t < y.t : x.order < y.order;
                });
                ASSERT_FALSE(e.empty());
                ASSERT_EQ(e.next_time(), best->t) << "seed " << seed << " step " << step;
                const Event got = e.pop();
                EXPECT_EQ(got.kind, best->kind) << "seed " << seed << " step " << step;
                EXPECT_EQ(got.a, best->a) << "seed " << seed << " step " << step;
                EXPECT_EQ(got.b, best->b) << "seed " << seed << " step " << step;
                if (got.kind == EventKind::submit) submit_pending = false;
                now = got.t;
                ref.erase(best);
            }
        }
        EXPECT_EQ(e.empty(), ref.empty());
    }
}

}  // namespace
}  // namespace numaware::sim
