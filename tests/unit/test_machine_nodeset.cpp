// Tests for NodeSet: parsing numactl-style lists and the kernel mask layout.
#include <gtest/gtest.h>

#include "numaware/error.hpp"
#include "numaware/nodeset.hpp"

using numaware::Error;
using numaware::NodeSet;

TEST(NodeSet, ParsesRangesAndSingles) {
    const NodeSet s = NodeSet::parse("0-3,6");
    EXPECT_EQ(s.to_vector(), (std::vector<unsigned>{0, 1, 2, 3, 6}));
    EXPECT_EQ(s.size(), 5u);
    EXPECT_TRUE(s.contains(6));
    EXPECT_FALSE(s.contains(5));
    EXPECT_EQ(s.to_string(), "0-3,6");
}

TEST(NodeSet, ToStringCompactsRuns) {
    NodeSet s{7, 1, 2, 3, 9, 10};
    EXPECT_EQ(s.to_string(), "1-3,7,9-10");
    s.remove(2);
    EXPECT_EQ(s.to_string(), "1,3,7,9-10");
    EXPECT_EQ(NodeSet{}.to_string(), "");
    EXPECT_TRUE(NodeSet{}.empty());
}

TEST(NodeSet, RoundTripsThroughText) {
    const NodeSet s{0, 5, 6, 7, 1023};
    EXPECT_EQ(NodeSet::parse(s.to_string()), s);
}

TEST(NodeSet, MaskHasOneBitPerNode) {
    const NodeSet s{0, 3, 64, 1023};
    const auto mask = s.to_mask();
    ASSERT_EQ(mask.size(), NodeSet::max_nodes / (sizeof(unsigned long) * 8));
    EXPECT_EQ(mask[0], (1UL << 0) | (1UL << 3));
    EXPECT_EQ(mask[1], 1UL);
    EXPECT_EQ(mask.back(), 1UL << 63);
}

TEST(NodeSet, RejectsMalformedListsNamingTheField) {
    for (const char* bad : {"", "a", "1-", "-1", "3-1", "1,,2", "1.5"}) {
        try {
            (void)NodeSet::parse(bad, "--nodes");
            FAIL() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.field(), "--nodes") << bad;
            EXPECT_EQ(e.code(), EINVAL);
        }
    }
}

TEST(NodeSet, RejectsIndicesBeyondTheKernelLimit) {
    try {
        (void)NodeSet::parse("1024");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("limit 1023"), std::string::npos) << e.what();
    }
    EXPECT_THROW(NodeSet{}.add(5000), Error);
}
