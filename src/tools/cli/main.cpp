// tools/cli/main.cpp — entry point of the `numaware` command.
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "numaware/error.hpp"
#include "numaware/memory_sim.hpp"
#include "tools/cli/commands.hpp"

namespace numaware::cli {
namespace {
int g_exit_status = 0;

// CLI11 reads "-1" into a 64-bit unsigned option as 2^64 - 1 (a seed, a
// window, a probe's iteration count that then never ends); the 32-bit ones
// it refuses. Every unsigned option of every command refuses a sign alike.
void refuse_negative_unsigned(CLI::App& app) {
    const CLI::Validator no_sign(
        [](std::string& text) {
            const std::size_t first = text.find_first_not_of(" \t");
            return first != std::string::npos && (text[first] == '-' || text[first] == '+')
                       ? "must be a whole number 0 or more, without a sign; got '" + text + "'"
                       : std::string();
        },
        "", "unsigned");
    for (CLI::Option* o : app.get_options())
        if (o->get_type_name() == "UINT") o->check(no_sign);
    for (CLI::App* sub : app.get_subcommands({})) refuse_negative_unsigned(*sub);
}
}
void set_exit_status(int status) { g_exit_status = status; }
int exit_status() { return g_exit_status; }
}  // namespace numaware::cli

int main(int argc, char** argv) {
    CLI::App app{"numaware: NUMA data locality, placed and proven"};
    // The project's version and the memory simulator's model revision.
    app.set_version_flag("--version", std::string(NUMAWARE_VERSION) + "+memsim." +
                                          numaware::sim::memory::model_revision);
    app.require_subcommand(1);
    app.footer("Example: numaware topo --machine 'nodes=2 cpus-per-node=1 mem-per-node=256M distances=10,21/21,10'");
    numaware::cli::add_topo_command(app);
    numaware::cli::add_probe_command(app);
    numaware::cli::add_run_command(app);
    numaware::cli::add_where_command(app);
    numaware::cli::add_vm_command(app);
    numaware::cli::add_place_command(app);
    numaware::cli::add_latency_command(app);
    numaware::cli::add_sim_command(app);
    numaware::cli::add_trace_command(app);
    numaware::cli::add_advise_command(app);
    numaware::cli::refuse_negative_unsigned(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // One line, naming what was wrong, non-zero status.
        std::fprintf(stderr, "numaware: %s\n", e.what());
        return e.get_exit_code() == 0 ? 2 : e.get_exit_code();
    } catch (const numaware::Error& e) {
        std::fprintf(stderr, "numaware: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "numaware: %s\n", e.what());
        return 1;
    }
    return numaware::cli::exit_status();
}
