// The machine C API: results match the C++ model, failures are -1 + errno
// with a message from nw_error_message().
#include <cerrno>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "numaware/c/error.h"
#include "numaware/c/machine.h"
#include "numaware/machine.hpp"

namespace {
const char* spec = "nodes=3 cpus=2,0,1 mem=1G,256M,512M distances=10,21,31/21,10,21/31,21,10";
}

TEST(MachineCApi, LoadsAndAnswersQueries) {
    nw_machine_t* m = nullptr;
    ASSERT_EQ(nw_machine_load(spec, &m), 0) << nw_error_message();
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(nw_machine_node_count(m), 3);
    EXPECT_EQ(nw_machine_node_os_index(m, 2), 2);
    uint64_t bytes = 0;
    EXPECT_EQ(nw_machine_node_memory(m, 1, &bytes), 0);
    EXPECT_EQ(bytes, 256ULL << 20);
    EXPECT_EQ(nw_machine_node_cpu_count(m, 0), 2);
    EXPECT_EQ(nw_machine_node_cpu_count(m, 1), 0);
    unsigned cpus[4] = {99, 99, 99, 99};
    EXPECT_EQ(nw_machine_node_cpus(m, 2, cpus, 4), 1);
    EXPECT_EQ(cpus[0], 2u);
    EXPECT_EQ(nw_machine_node_cpus(m, 0, cpus, 1), 2) << "returns the full count even when capacity is short";
    EXPECT_EQ(nw_machine_distance(m, 0, 2), 31);
    EXPECT_EQ(nw_machine_distance(m, 2, 1), 21);

    char* json = nullptr;
    ASSERT_EQ(nw_machine_to_json(m, &json), 0);
    ASSERT_NE(json, nullptr);
    EXPECT_EQ(numaware::Machine::from_json(json), numaware::Machine::from_synthetic(spec));
    std::free(json);
    nw_machine_destroy(m);
    nw_machine_destroy(nullptr);
}

TEST(MachineCApi, BadInputIsMinusOneWithErrnoAndText) {
    nw_machine_t* m = reinterpret_cast<nw_machine_t*>(0x1);
    errno = 0;
    EXPECT_EQ(nw_machine_load("nodes=2 distances=10,0/21,10", &m), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("distances[0][1]: is 0; SLIT distances are positive"), std::string::npos)
        << nw_error_message();
    EXPECT_EQ(m, reinterpret_cast<nw_machine_t*>(0x1)) << "out must be untouched on failure";

    errno = 0;
    EXPECT_EQ(nw_machine_load("/nonexistent/box.xml", &m), -1);
    EXPECT_EQ(errno, ENOENT);
    EXPECT_NE(std::string(nw_error_message()).find("/nonexistent/box.xml"), std::string::npos) << nw_error_message();

    errno = 0;
    EXPECT_EQ(nw_machine_load(nullptr, &m), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("spec"), std::string::npos);

    ASSERT_EQ(nw_machine_load("nodes=2", &m), 0);
    errno = 0;
    EXPECT_EQ(nw_machine_distance(m, 0, 5), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("node 5 is not in this machine"), std::string::npos)
        << nw_error_message();
    EXPECT_EQ(nw_machine_node_os_index(m, 2), -1);
    EXPECT_NE(std::string(nw_error_message()).find("out of range"), std::string::npos) << nw_error_message();
    EXPECT_EQ(nw_machine_node_memory(m, 0, nullptr), -1);
    EXPECT_EQ(nw_machine_node_count(nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(nw_machine_to_json(m, nullptr), -1);
    nw_machine_destroy(m);
}

// A machine seen from a cpuset: which nodes may hold memory, and the
// refusal of a left-out node naming who restricts (issue 17).
TEST(MachineCApi, ARestrictedMachineSaysWhichMemoryIsAllowed) {
    nw_machine_t* m = nullptr;
    ASSERT_EQ(nw_machine_load("nodes=3 cpus-per-node=2 allowed-cpus=0-3 allowed-mems=1", &m), 0) << nw_error_message();
    EXPECT_EQ(nw_machine_node_count(m), 2);
    EXPECT_EQ(nw_machine_node_memory_allowed(m, 0), 0);
    EXPECT_EQ(nw_machine_node_memory_allowed(m, 1), 1);
    errno = 0;
    EXPECT_EQ(nw_machine_node_memory_allowed(m, 2), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("node 2 is not allowed: neither its CPUs nor its memory are in the "
                                                    "allowed-cpus=/allowed-mems= sets"),
              std::string::npos)
        << nw_error_message();
    nw_machine_destroy(m);
}
