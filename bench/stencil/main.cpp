// bench/stencil/main.cpp — numaware_bench_stencil: drives the stencil
// skeleton (include/numaware/stencil.hpp).
//
//   numaware_bench_stencil run --kind all --placement all --size 34 --json
//       every (kind, placement) pair through the skeleton, each checked
//       against a plain serial implementation; exit 1 if one does not match.
//   numaware_bench_stencil bandwidth --reps 5
//       STREAM-style copy, the skeleton's 3-D 7-point and 2-D 5-point
//       Jacobi and plain OpenMP parallel-for peers, in one process.
//
// Exit status 2 for bad arguments or a failed run (one line on stderr).
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "numaware/error.hpp"

int main(int argc, char** argv) {
    CLI::App cli{"numaware stencil skeleton benchmarks: run (kinds x placements, checked against serial references) "
                 "and bandwidth (STREAM copy and OpenMP peers)"};
    cli.require_subcommand(1);

    nwbench::RunArgs r;
    CLI::App* run = cli.add_subcommand("run", "Run stencil kinds under placement modes and check each against a "
                                              "serial reference");
    run->add_option("--kind", r.kind, "jacobi|gauss-seidel|red-black|variable|multigrid|butterfly|all")
        ->capture_default_str();
    run->add_option("--points", r.points,
                    "5-point|9-point|7-point|27-point (dims follow; multigrid takes the dims only, butterfly ignores "
                    "it; variable reads within a box of radius 2)")
        ->capture_default_str();
    run->add_option("--size", r.size,
                    "N[,N[,N]] extents incl. boundary (default 66 in 3-D, 514 in 2-D; multigrid 65 / 513, 2^k+1; "
                    "butterfly n, default 262144). With --kind all, multigrid rounds down to 2^k+1 and butterfly "
                    "takes the largest power of two <= the grid's cells");
    run->add_option("--sweeps", r.sweeps, "Sweeps (multigrid: V-cycles; butterfly: always all phases)")
        ->capture_default_str();
    run->add_option("--placement", r.placement,
                    "serial-first-touch|parallel-first-touch|interleave|stencil-aware|explicit:SPEC|all")
        ->capture_default_str();
    run->add_option("--distribution", r.distribution, "static|dynamic|guided|numa-weighted")->capture_default_str();
    run->add_option("--threads", r.threads, "Threads (0: every CPU of the machine)")->capture_default_str();
    run->add_option("--mapping", r.mapping, "contiguous|scatter")->capture_default_str();
    run->add_option("--machine", r.machine, "Machine SPEC: live, a .xml/.json file, @file, or a synthetic description")
        ->capture_default_str();
    run->add_flag("--no-balancing-off", r.no_balancing_off, "Leave automatic NUMA balancing as it is");
    run->add_flag("--streaming", r.streaming, "Write whole rows with non-temporal (streaming) stores");
    run->add_flag("--probe-balancing", r.probe_balancing,
                  "Read /proc/sys/kernel/numa_balancing after every sweep and after the run");
    run->add_flag("--json", r.json, "Print one JSON document");

    nwbench::BandwidthArgs b;
    CLI::App* bw = cli.add_subcommand("bandwidth", "STREAM copy, skeleton Jacobi (3-D 7-point, 2-D 5-point) and plain "
                                                   "OpenMP peers in one process");
    bw->add_option("--reps", b.reps, "Timed repetitions (best reported)")->capture_default_str();
    bw->add_option("--sweeps", b.sweeps, "Sweeps (copies) per repetition")->capture_default_str();
    bw->add_option("--size3", b.size3, "3-D extent per axis incl. boundary (410: 551 MB per array)")
        ->capture_default_str();
    bw->add_option("--size2", b.size2, "2-D extent per axis incl. boundary (8194: 537 MB per array)")
        ->capture_default_str();
    bw->add_option("--threads", b.threads, "Threads (0: every CPU of the machine)")->capture_default_str();
    bw->add_option("--mapping", b.mapping, "contiguous|scatter")->capture_default_str();
    bw->add_option("--machine", b.machine, "Machine SPEC (default live)")->capture_default_str();
    bw->add_flag("--no-balancing-off", b.no_balancing_off, "Leave automatic NUMA balancing as it is");
    bw->add_flag("--json", b.json, "Print one JSON document instead of the table");
    bw->add_option("--json-file", b.json_file, "Also write the JSON document to this file");

    try {
        cli.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = cli.exit(e);   // prints help or the error
        return rc == 0 ? 0 : 2;
    }
    try {
        if (run->parsed()) return nwbench::run_command(r);
        return nwbench::bandwidth_command(b);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "numaware_bench_stencil: %s\n", e.what());
        return 2;
    }
}
