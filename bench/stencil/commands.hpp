// bench/stencil/commands.hpp — the two subcommands of numaware_bench_stencil.
#pragma once

#include <cstddef>
#include <string>

namespace nwbench {

struct RunArgs {
    std::string kind = "jacobi";
    std::string points = "7-point";
    std::string size;   // "N[,N[,N]]"; empty: the kind's default
    std::size_t sweeps = 4;
    std::string placement = "stencil-aware";
    std::string distribution = "static";
    unsigned threads = 0;   // 0: every CPU of the machine
    std::string mapping = "scatter";
    std::string machine = "live";
    bool no_balancing_off = false;
    bool streaming = false;
    bool probe_balancing = false;
    bool json = false;
};

// Exit status: 0 when every run matches its reference, 1 otherwise.
// Throws numaware::Error for bad input or a failed run.
int run_command(const RunArgs& args);

struct BandwidthArgs {
    unsigned reps = 5;
    std::size_t sweeps = 10;
    std::size_t size3 = 410;    // 3-D extent per axis (boundary included)
    std::size_t size2 = 8194;   // 2-D extent per axis
    unsigned threads = 0;       // 0: every CPU of the machine
    std::string mapping = "scatter";
    std::string machine = "live";
    bool no_balancing_off = false;
    bool json = false;
    std::string json_file;   // also write the JSON document here (the table still goes to stdout)
};

// Exit status: 0, or 1 when the skeleton and the OpenMP peer disagree on
// the check sweep. Throws numaware::Error for bad input.
int bandwidth_command(const BandwidthArgs& args);

}  // namespace nwbench
