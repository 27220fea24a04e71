// tools/cli/commands.hpp — each `numaware` subcommand registers itself here.
//
// A command adds a CLI11 subcommand with its options, a --json flag and a
// --help footer with an example, and a callback that does the work. A
// callback reports failure by throwing numaware::Error (or CLI::Error); main
// turns that into one line on stderr and a non-zero exit.
#pragma once

#include <CLI/CLI.hpp>

namespace numaware::cli {

void add_topo_command(CLI::App& app);
void add_probe_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_where_command(CLI::App& app);
void add_vm_command(CLI::App& app);
void add_place_command(CLI::App& app);   // the placement demo / self-check
void add_latency_command(CLI::App& app);   // per-cache-line latency, latency-aware blocks
void add_sim_command(CLI::App& app);       // the simulator's timed machines
void add_sim_memory_command(CLI::App& sim_cmd);   // `sim memory`: the memory-hierarchy simulator
void add_trace_command(CLI::App& app);     // `trace record`: a program's accesses under Valgrind (nwtrace)
void add_advise_command(CLI::App& app);    // the configuration advisor (hands over to the Python package)

// Exit status a callback wants main to return (e.g. `vm` forwards the
// guest command's status). Defaults to 0.
void set_exit_status(int status);
int exit_status();

}  // namespace numaware::cli
