// Tests for sim::FlowNetwork: max-min fair bandwidth sharing, advanced
// from event to event. Analytic cases are checked to 1e-9 relative.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "numaware/error.hpp"
#include "numaware/sim.hpp"

using numaware::Error;
using numaware::sim::FlowNetwork;

namespace {

constexpr double kRel = 1e-9;

void expect_close(double actual, double expected) {
    EXPECT_NEAR(actual, expected, kRel * std::abs(expected)) << "expected " << expected;
}

template <class F>
std::string error_field(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.field();
    }
    return "<no error>";
}

}  // namespace

TEST(SimFlow, OneFlowOneResource) {
    FlowNetwork net;
    const auto mem = net.add_resource(12.5e9, "mem0");
    EXPECT_EQ(net.resources(), 1u);
    EXPECT_EQ(net.resource_name(mem), "mem0");
    const double bytes = 3.0e6, lat = 80e-9;
    const auto id = net.start(bytes, {mem}, lat);
    EXPECT_EQ(net.active(), 1u);
    EXPECT_EQ(net.rate(id), 0.0);  // still waiting its latency
    const auto c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, id);
    expect_close(c->time, lat + bytes / 12.5e9);
    expect_close(net.time(), c->time);
    expect_close(net.carried(mem), bytes);
    EXPECT_EQ(net.active(), 0u);
    EXPECT_EQ(net.rate(id), 0.0);
    EXPECT_FALSE(net.next());
}

TEST(SimFlow, RemoteReadIsLimitedByTheLink) {
    FlowNetwork net;
    const auto mem = net.add_resource(20e9, "mem1");
    const auto link = net.add_resource(10e9, "link 1->0");
    const double bytes = 64.0 * 1024 * 1024, lat = 100e-9;
    const auto id = net.start(bytes, {mem, link}, lat);
    ASSERT_TRUE(net.advance_to(lat));
    EXPECT_DOUBLE_EQ(net.rate(id), 10e9);
    const auto c = net.next();
    ASSERT_TRUE(c);
    expect_close(c->time, lat + bytes / 10e9);
    expect_close(net.carried(mem), bytes);
    expect_close(net.carried(link), bytes);
}

TEST(SimFlow, TwoEqualFlowsShareOneController) {
    FlowNetwork net;
    const double C = 20e9, b = 8e6;
    const auto mem = net.add_resource(C);
    const auto a = net.start(b, {mem});
    const auto d = net.start(b, {mem});
    EXPECT_DOUBLE_EQ(net.rate(a), C / 2);
    EXPECT_DOUBLE_EQ(net.rate(d), C / 2);
    const auto c1 = net.next();
    const auto c2 = net.next();
    ASSERT_TRUE(c1 && c2);
    EXPECT_EQ(c1->flow, a);  // tie: the lower id first
    EXPECT_EQ(c2->flow, d);
    expect_close(c1->time, 2 * b / C);
    expect_close(c2->time, 2 * b / C);
    expect_close(net.carried(mem), 2 * b);
}

TEST(SimFlow, SmallFlowEndsFirstThenBigOneGetsEverything) {
    FlowNetwork net;
    const double C = 10e9, b1 = 1e6, b2 = 5e6;
    const auto mem = net.add_resource(C);
    const auto big = net.start(b2, {mem});    // lower id, ends later
    const auto small = net.start(b1, {mem});
    const auto c1 = net.next();
    ASSERT_TRUE(c1);
    EXPECT_EQ(c1->flow, small);
    expect_close(c1->time, 2 * b1 / C);
    EXPECT_DOUBLE_EQ(net.rate(big), C);
    const auto c2 = net.next();
    ASSERT_TRUE(c2);
    EXPECT_EQ(c2->flow, big);
    expect_close(c2->time, 2 * b1 / C + (b2 - b1) / C);
}

TEST(SimFlow, MaxMinFairnessAcrossTwoResources) {
    // A over r1, B over r1 and r2, C over r2; r1 = 10, r2 = 4 (GB/s).
    // Filling: r2 fills first at 2 each, freezing B and C at 2; A then
    // takes what r1 has left: 10 - 2 = 8.
    FlowNetwork net;
    const auto r1 = net.add_resource(10e9);
    const auto r2 = net.add_resource(4e9);
    const auto A = net.start(8e6, {r1});
    const auto B = net.start(4e6, {r1, r2});
    const auto C = net.start(12e6, {r2});
    expect_close(net.rate(A), 8e9);
    expect_close(net.rate(B), 2e9);
    expect_close(net.rate(C), 2e9);
    // A: 8e6 / 8e9 = 1 ms. B and C have moved 2e6 each by then and r2 is
    // still their bottleneck, so B ends at 1 ms + 2e6 / 2e9 = 2 ms.
    auto c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, A);
    expect_close(c->time, 1e-3);
    expect_close(net.rate(B), 2e9);
    expect_close(net.rate(C), 2e9);
    c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, B);
    expect_close(c->time, 2e-3);
    // C has 12e6 - 4e6 = 8e6 left and r2 to itself: 2 ms more.
    expect_close(net.rate(C), 4e9);
    c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, C);
    expect_close(c->time, 4e-3);
    expect_close(net.carried(r1), 12e6);
    expect_close(net.carried(r2), 16e6);
}

TEST(SimFlow, MaxMinOneNarrowFlowLeavesTheRestToOthers) {
    // Three flows on r1 (9 GB/s), one of them also through r2 (1 GB/s):
    // it is held at 1 by r2, and the other two split the remaining 8.
    FlowNetwork net;
    const auto r1 = net.add_resource(9e9);
    const auto r2 = net.add_resource(1e9);
    const auto x = net.start(1e9, {r1});
    const auto y = net.start(1e9, {r2, r1});
    const auto z = net.start(1e9, {r1});
    expect_close(net.rate(x), 4e9);
    expect_close(net.rate(y), 1e9);
    expect_close(net.rate(z), 4e9);
}

TEST(SimFlow, ChainIsTheSumOfItsSteps) {
    FlowNetwork net;
    const auto mem0 = net.add_resource(20e9);
    const auto mem1 = net.add_resource(15e9);
    const auto link = net.add_resource(8e9);
    struct Step {
        double bytes;
        std::vector<std::size_t> path;
        double latency;
        double bandwidth;
    };
    const std::vector<Step> steps = {
        {4e6, {mem0}, 80e-9, 20e9},
        {2e6, {mem1, link}, 140e-9, 8e9},
        {6e6, {mem1}, 80e-9, 15e9},
        {1e6, {mem0, link}, 140e-9, 8e9},
    };
    double expected = 0;
    for (const Step& s : steps) {
        const auto id = net.start(s.bytes, s.path, s.latency);
        const auto c = net.next();
        ASSERT_TRUE(c);
        EXPECT_EQ(c->flow, id);
        expected += s.latency + s.bytes / s.bandwidth;
        expect_close(c->time, expected);
    }
    expect_close(net.carried(link), 3e6);
    expect_close(net.carried(mem0), 5e6);
    expect_close(net.carried(mem1), 8e6);
}

TEST(SimFlow, WaitingFlowTakesNoBandwidth) {
    const double C = 1e9, L = 0.4e-3;
    FlowNetwork net;
    const auto mem = net.add_resource(C);
    const auto late = net.start(2e6, {mem}, L);  // waits 0.4 ms
    const auto now = net.start(1e6, {mem});      // transfers at once
    EXPECT_DOUBLE_EQ(net.rate(now), C);
    EXPECT_EQ(net.rate(late), 0.0);
    ASSERT_TRUE(net.advance_to(L / 2));
    EXPECT_DOUBLE_EQ(net.rate(now), C);
    EXPECT_EQ(net.rate(late), 0.0);
    expect_close(net.carried(mem), C * L / 2);
    // At L both share: `now` has 1e6 - C·L = 0.6e6 left at C/2 -> ends at L + 1.2 ms.
    const auto c1 = net.next();
    ASSERT_TRUE(c1);
    EXPECT_EQ(c1->flow, now);
    expect_close(c1->time, L + 2 * (1e6 - C * L) / C);
    // `late` moved 0.6e6 meanwhile; 1.4e6 left alone at C.
    EXPECT_DOUBLE_EQ(net.rate(late), C);
    const auto c2 = net.next();
    ASSERT_TRUE(c2);
    EXPECT_EQ(c2->flow, late);
    expect_close(c2->time, c1->time + 1.4e6 / C);
    expect_close(net.carried(mem), 3e6);
}

TEST(SimFlow, FlowsWithoutBytesOrResourcesEndAfterTheirLatency) {
    FlowNetwork net;
    const auto mem = net.add_resource(1e9);
    const auto big = net.start(1e6, {mem});          // ends at 1 ms
    const auto none = net.start(5e6, {}, 0.5e-3);    // no resources: latency only
    const auto zero = net.start(0, {mem}, 0.25e-3);  // no bytes: latency only
    EXPECT_DOUBLE_EQ(net.rate(big), 1e9);  // neither takes bandwidth
    auto c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, zero);
    expect_close(c->time, 0.25e-3);
    c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, none);
    expect_close(c->time, 0.5e-3);
    c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, big);
    expect_close(c->time, 1e-3);
    expect_close(net.carried(mem), 1e6);
}

TEST(SimFlow, CarriedCountsEveryResourceOnThePath) {
    FlowNetwork net;
    const auto m0 = net.add_resource(20e9, "mem0");
    const auto m1 = net.add_resource(20e9, "mem1");
    const auto l01 = net.add_resource(10e9, "link0-1");
    const auto l10 = net.add_resource(10e9, "link1-0");
    net.start(3e6, {m0});
    net.start(5e6, {m1, l10}, 120e-9);
    net.start(7e6, {m0, l01}, 120e-9);
    net.start(2e6, {m1, m1});  // named twice, crossed once
    // Part way, bytes carried so far equal rate × time through each resource.
    ASSERT_TRUE(net.advance_to(1e-5));
    EXPECT_GT(net.carried(m0), 0.0);
    EXPECT_LT(net.carried(m0), 10e6);
    while (net.next()) {
    }
    expect_close(net.carried(m0), 10e6);
    expect_close(net.carried(m1), 7e6);
    expect_close(net.carried(l01), 7e6);
    expect_close(net.carried(l10), 5e6);
}

TEST(SimFlow, AdvanceToStopsShortOfACompletion) {
    FlowNetwork net;
    const auto mem = net.add_resource(1e9);
    const auto a = net.start(1e6, {mem});          // alone: 1 ms
    const auto b = net.start(1e6, {mem}, 0.2e-3);  // joins at 0.2 ms
    ASSERT_TRUE(net.advance_to(0.1e-3));
    const double carried = net.carried(mem);
    // a ends at 0.2 + 2 × 0.8 = 1.8 ms; 1.9 ms passes it, across b's start.
    EXPECT_FALSE(net.advance_to(1.9e-3));
    EXPECT_DOUBLE_EQ(net.time(), 0.1e-3);  // did not move
    EXPECT_DOUBLE_EQ(net.carried(mem), carried);
    EXPECT_DOUBLE_EQ(net.rate(a), 1e9);
    EXPECT_EQ(net.rate(b), 0.0);
    EXPECT_EQ(net.active(), 2u);
    // Up to the completion is fine, and crosses b's start.
    ASSERT_TRUE(net.advance_to(1.0e-3));
    EXPECT_DOUBLE_EQ(net.rate(a), 0.5e9);
    EXPECT_DOUBLE_EQ(net.rate(b), 0.5e9);
    const auto c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, a);
    expect_close(c->time, 1.8e-3);
    // With nothing active, time moves freely.
    ASSERT_TRUE(net.next());
    ASSERT_TRUE(net.advance_to(1.0));
    EXPECT_DOUBLE_EQ(net.time(), 1.0);
}

TEST(SimFlow, RejectsBadInput) {
    FlowNetwork net;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(error_field([&] { net.add_resource(0); }), "capacity");
    EXPECT_EQ(error_field([&] { net.add_resource(-5e9); }), "capacity");
    EXPECT_EQ(error_field([&] { net.add_resource(nan); }), "capacity");
    EXPECT_EQ(error_field([&] { net.add_resource(inf); }), "capacity");
    EXPECT_EQ(net.resources(), 0u);
    const auto mem = net.add_resource(1e9);
    EXPECT_EQ(error_field([&] { net.start(1, {mem, 1}); }), "resources");
    EXPECT_EQ(error_field([&] { net.start(-1, {mem}); }), "bytes");
    EXPECT_EQ(error_field([&] { net.start(nan, {mem}); }), "bytes");
    EXPECT_EQ(error_field([&] { net.start(1, {mem}, -1e-9); }), "latency");
    EXPECT_EQ(error_field([&] { net.start(1, {mem}, nan); }), "latency");
    EXPECT_EQ(net.active(), 0u);  // nothing was started
    EXPECT_EQ(error_field([&] { (void)net.rate(0); }), "flow");
    EXPECT_EQ(error_field([&] { (void)net.carried(7); }), "resource");
    EXPECT_EQ(error_field([&] { (void)net.resource_name(7); }), "resource");
    ASSERT_TRUE(net.advance_to(2.0));
    EXPECT_EQ(error_field([&] { net.advance_to(1.0); }), "t");
    EXPECT_EQ(error_field([&] { net.advance_to(nan); }), "t");
    EXPECT_DOUBLE_EQ(net.time(), 2.0);
}

TEST(SimFlow, ManyFlowsStayFeasibleAndMaxMinFair) {
    // Random routes over 8 memories and 16 links; at every event each
    // resource is within capacity, and each transferring flow has a
    // bottleneck: a full resource on its path where no flow is faster
    // (the characterisation of max-min fairness).
    std::mt19937_64 rng(12345);
    FlowNetwork net;
    std::vector<double> cap;
    for (int r = 0; r < 24; ++r) {
        cap.push_back(r < 8 ? 20e9 : 5e9 + 1e9 * (r % 5));
        net.add_resource(cap.back());
    }
    std::uniform_int_distribution<int> mem(0, 7), link(8, 23);
    std::uniform_real_distribution<double> bytes(1e4, 1e6), lat(0, 2e-6);
    struct Route {
        std::vector<std::size_t> path;
        double bytes;
    };
    std::vector<Route> routes;
    std::vector<double> expected(cap.size(), 0);
    for (int i = 0; i < 400; ++i) {
        Route r;
        r.path.push_back(static_cast<std::size_t>(mem(rng)));
        if (i % 3 != 0) r.path.push_back(static_cast<std::size_t>(link(rng)));
        r.bytes = bytes(rng);
        for (auto p : r.path) expected[p] += r.bytes;
        net.start(r.bytes, r.path, lat(rng));
        routes.push_back(std::move(r));
    }
    std::vector<bool> ended(routes.size(), false);
    double last = 0;
    std::size_t completions = 0;
    for (;;) {
        std::vector<double> load(cap.size(), 0), fastest(cap.size(), 0);
        for (std::size_t f = 0; f < routes.size(); ++f)
            for (auto p : routes[f].path) {
                load[p] += net.rate(f);
                fastest[p] = std::max(fastest[p], net.rate(f));
            }
        for (std::size_t p = 0; p < cap.size(); ++p) ASSERT_LE(load[p], cap[p] * (1 + 1e-9));
        for (std::size_t f = 0; f < routes.size(); ++f) {
            if (net.rate(f) <= 0) continue;
            bool bottleneck = false;
            for (auto p : routes[f].path)
                bottleneck |= load[p] >= cap[p] * (1 - 1e-9) && net.rate(f) >= fastest[p] * (1 - 1e-9);
            ASSERT_TRUE(bottleneck) << "flow " << f << " has no bottleneck at t=" << net.time();
        }
        const auto c = net.next();
        if (!c) break;
        ASSERT_GE(c->time, last);
        ASSERT_FALSE(ended[c->flow]);
        ended[c->flow] = true;
        last = c->time;
        ++completions;
    }
    EXPECT_EQ(completions, routes.size());
    for (std::size_t p = 0; p < cap.size(); ++p)
        EXPECT_NEAR(net.carried(p), expected[p], 1e-9 * expected[p]);
}

TEST(SimFlow, ATransferStartingAsAFlowEndsIsNotLost) {
    FlowNetwork net;
    const auto mem = net.add_resource(1e9);
    const auto marker = net.start(0, {mem}, 1e-3);    // ends at 1 ms, no bytes
    const auto reader = net.start(1e6, {mem}, 1e-3);  // starts transferring at 1 ms
    auto c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, marker);
    expect_close(c->time, 1e-3);
    EXPECT_DOUBLE_EQ(net.rate(reader), 1e9);
    c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, reader);
    expect_close(c->time, 2e-3);
}

TEST(SimFlow, SimultaneousEndsComeInIdOrder) {
    // A transfer and a latency-only flow end at the same instant; the
    // lower id is returned first whichever kind it is.
    FlowNetwork net;
    const auto mem = net.add_resource(4e9);
    const auto pure = net.start(0, {}, 0.5e-3);  // id 0, latency only
    const auto move = net.start(2e6, {mem});     // id 1, 2e6 / 4e9 = 0.5 ms
    auto c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, pure);
    expect_close(c->time, 0.5e-3);
    c = net.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->flow, move);
    expect_close(c->time, 0.5e-3);
    EXPECT_FALSE(net.next());
}
