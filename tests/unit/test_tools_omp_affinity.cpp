// The OpenMP shim's place lists and affinity format (tools/omp/affinity.hpp),
// on synthetic machines. The routines that report them run under real
// OpenMP programs in the `omp.constructs` test (tests/omp/affinity.c).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/machine.hpp"
#include "tools/omp/affinity.hpp"

namespace omp = numaware::omp;
using numaware::Machine;

namespace {

// 2 nodes of 4 CPUs, cores of 2 hardware threads (L1 shared by pairs).
Machine smt_machine() {
    Machine m = Machine::from_spec("nodes=2 cpus-per-node=4 mem-per-node=512M distances=10,21/21,10");
    for (unsigned c = 0; c < 8; c += 2) m.caches.push_back(numaware::Cache{1, "data", 32768, 64, {c, c + 1}});
    return m;
}

omp::Places kind(omp::PlaceKind k) { return omp::Places{k, {}}; }

TEST(OmpPlaces, AbstractNamesFollowTheMachineAndTheAllowedCpus) {
    const Machine m = smt_machine();
    using L = omp::PlaceList;
    EXPECT_EQ(omp::place_list(m, {}, kind(omp::PlaceKind::threads)), (L{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
    EXPECT_EQ(omp::place_list(m, {}, kind(omp::PlaceKind::cores)), (L{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
    EXPECT_EQ(omp::place_list(m, {}, kind(omp::PlaceKind::numa_domains)), (L{{0, 1, 2, 3}, {4, 5, 6, 7}}));
    EXPECT_EQ(omp::place_list(m, {}, kind(omp::PlaceKind::sockets)), (L{{0, 1, 2, 3}, {4, 5, 6, 7}}));
    // A cpuset of 1, 2, 3 and 6: what is left of each place, empty ones dropped.
    const std::vector<unsigned> allowed{1, 2, 3, 6};
    EXPECT_EQ(omp::place_list(m, allowed, kind(omp::PlaceKind::cores)), (L{{1}, {2, 3}, {6}}));
    EXPECT_EQ(omp::place_list(m, allowed, kind(omp::PlaceKind::numa_domains)), (L{{1, 2, 3}, {6}}));
    // Without caches in the model, a core is a CPU.
    const Machine plain = Machine::from_spec("nodes=2 cpus-per-node=2");
    EXPECT_EQ(omp::place_list(plain, {}, kind(omp::PlaceKind::cores)), (L{{0}, {1}, {2}, {3}}));
}

// CPUs numbered alternately between the nodes (node 0: 0, 2, 4, 6; node 1:
// 1, 3, 5, 7), as many two-socket servers number them: the abstract names'
// places come node by node, so `close` over them fills node 0 first (libgomp
// lists them by CPU number, and its close alternates nodes; BENCHMARKS.md,
// 2026-12-07, the emulated guest of tests/vm/two_node_alternate_cpus.json).
TEST(OmpPlaces, AlternatelyNumberedCpusArePlacedNodeByNode) {
    const Machine m = Machine::from_json(
        R"({"nodes":[{"os_index":0,"cpus":[0,2,4,6],"memory_bytes":536870912},)"
        R"({"os_index":1,"cpus":[1,3,5,7],"memory_bytes":536870912}],"distances":[[10,21],[21,10]]})");
    using L = omp::PlaceList;
    EXPECT_EQ(omp::place_list(m, {}, kind(omp::PlaceKind::cores)), (L{{0}, {2}, {4}, {6}, {1}, {3}, {5}, {7}}));
    EXPECT_EQ(omp::place_list(m, {}, kind(omp::PlaceKind::threads)), (L{{0}, {2}, {4}, {6}, {1}, {3}, {5}, {7}}));
    EXPECT_EQ(omp::place_list(m, {}, kind(omp::PlaceKind::numa_domains)), (L{{0, 2, 4, 6}, {1, 3, 5, 7}}));
    EXPECT_EQ(omp::place_list(m, {}, kind(omp::PlaceKind::sockets)), (L{{0, 2, 4, 6}, {1, 3, 5, 7}}));
    // A cpuset of 2, 3, 4 and 5 keeps that order.
    EXPECT_EQ(omp::place_list(m, {2, 3, 4, 5}, kind(omp::PlaceKind::cores)), (L{{2}, {4}, {3}, {5}}));
}

// The places threads are bound to from an explicit list (OMP_PLACES,
// GOMP_CPU_AFFINITY) under a cpuset: the same CPUs as the reported list
// (place_list), but a repeated place stays, as libgomp binds thread i to the
// i-th listed place. Before, the binding took the list as written: under
// `taskset -c 0`, OMP_PLACES={1},{0} bound thread 0 to CPU 1, outside the
// process's CPUs and outside the one place the shim reported.
TEST(OmpPlaces, ListedPlacesKeepOnlyTheAllowedCpusAndTheirRepeats) {
    using L = omp::PlaceList;
    const omp::Places listed{omp::PlaceKind::explicit_list, {{1}, {0}, {0, 1}, {0}}};
    EXPECT_EQ(omp::usable_listed_places(listed, {}), (L{{1}, {0}, {0, 1}, {0}}));
    EXPECT_EQ(omp::usable_listed_places(listed, {0}), (L{{0}, {0}, {0}}));
    EXPECT_EQ(omp::usable_listed_places(listed, {2, 3}), L{}) << "nothing usable: the team is planned without it";
    const Machine m = smt_machine();
    EXPECT_EQ(omp::place_list(m, {0}, listed), (L{{0}})) << "the reported list names each place once";
}

TEST(OmpPlaces, LastLevelCachesAndCountedPlaces) {
    using L = omp::PlaceList;
    // An L3 per node and an L2 per core: the last level is the L3.
    Machine m = smt_machine();
    for (unsigned c = 0; c < 8; c += 2) m.caches.push_back(numaware::Cache{2, "unified", 1 << 20, 64, {c, c + 1}});
    m.caches.push_back(numaware::Cache{3, "unified", 32 << 20, 64, {0, 1, 2, 3}});
    m.caches.push_back(numaware::Cache{3, "unified", 32 << 20, 64, {4, 5, 6, 7}});
    m.caches.push_back(numaware::Cache{1, "instruction", 32768, 64, {0, 1, 2, 3, 4, 5, 6, 7}});
    EXPECT_EQ(omp::place_list(m, {}, kind(omp::PlaceKind::ll_caches)), (L{{0, 1, 2, 3}, {4, 5, 6, 7}}));
    EXPECT_EQ(omp::place_list(m, {5, 6}, kind(omp::PlaceKind::ll_caches)), (L{{5, 6}}));
    // Without caches in the model, a node's CPUs.
    const Machine plain = Machine::from_spec("nodes=2 cpus-per-node=2");
    EXPECT_EQ(omp::place_list(plain, {}, kind(omp::PlaceKind::ll_caches)), (L{{0, 1}, {2, 3}}));
    // A count keeps the first places, after the cpuset's.
    EXPECT_EQ(omp::place_list(m, {}, omp::Places{omp::PlaceKind::cores, {}, 3}), (L{{0, 1}, {2, 3}, {4, 5}}));
    EXPECT_EQ(omp::place_list(m, {1, 6}, omp::Places{omp::PlaceKind::threads, {}, 1}), (L{{1}}));
    EXPECT_EQ(omp::place_list(m, {}, omp::Places{omp::PlaceKind::numa_domains, {}, 9}), (L{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(OmpPlaces, ExplicitListsKeepTheirOrderWithoutDisallowedCpus) {
    const Machine m = smt_machine();
    const omp::Places listed{omp::PlaceKind::explicit_list, {{6, 7}, {0, 1}, {5}, {3, 2}, {0, 1}}};
    EXPECT_EQ(omp::place_list(m, {}, listed), (omp::PlaceList{{6, 7}, {0, 1}, {5}, {2, 3}}));
    EXPECT_EQ(omp::place_list(m, {0, 1, 2, 7}, listed), (omp::PlaceList{{7}, {0, 1}, {2}}));
}

TEST(OmpPlaces, AThreadIsInThePlaceThatHoldsItsWholeMask) {
    const omp::PlaceList cores{{0, 1}, {2, 3}, {4, 5}};
    EXPECT_EQ(omp::place_of(cores, {3}), 1);
    EXPECT_EQ(omp::place_of(cores, {4, 5}), 2);
    EXPECT_EQ(omp::place_of(cores, {1, 2}), -1);   // spans two places: unbound
    EXPECT_EQ(omp::place_of(cores, {}), -1);
    EXPECT_EQ(omp::place_of(cores, {9}), -1);
}

TEST(OmpAffinityFormat, FieldsWidthsAndJustification) {
    omp::AffinityFields f;
    f.team_num = 0;
    f.num_teams = 1;
    f.level = 1;
    f.thread_num = 3;
    f.num_threads = 8;
    f.ancestor_thread_num = 0;
    f.host = "node07";
    f.process_id = 4242;
    f.native_thread_id = 4250;
    f.affinity = "2-3";
    EXPECT_EQ(omp::format_affinity(omp::default_affinity_format, f), "level 1 thread 4250 affinity 2-3");
    EXPECT_EQ(omp::format_affinity("%n/%N %t/%T a=%a %H:%P", f), "3/8 0/1 a=0 node07:4242");
    EXPECT_EQ(omp::format_affinity("[%5n][%.5n][%0.5n][%3H]", f), "[3    ][    3][00003][node07]");
    EXPECT_EQ(omp::format_affinity("%{thread_num} of %{num_threads} on %{thread_affinity}", f), "3 of 8 on 2-3");
    EXPECT_EQ(omp::format_affinity("100%% %{nesting_level}", f), "100% 1");
    // Not fields: kept as written, and nothing read past the end.
    EXPECT_EQ(omp::format_affinity("%q %{nope} %", f), "%q %{nope} %");
    EXPECT_EQ(omp::format_affinity("%{thread_num", f), "%{thread_num");
    f.ancestor_thread_num = -1;
    EXPECT_EQ(omp::format_affinity("%0.4a", f), "-001");
}

}  // namespace
