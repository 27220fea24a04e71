// tools/cli/cmd_advise.cpp — `numaware advise sweep|train|evaluate|run|plot`:
// the configuration advisor, which lives in numaware's Python package
// (numaware.advisor, docs/ADVISOR.md). This command hands over to it: the
// process becomes `python3 -m numaware.advisor ARGS...`, with NUMAWARE_CLI
// naming this executable so that the advisor's sweeps run this very
// simulator.
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/core.h>

#include "numaware/error.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/python_package.hpp"
#include "tools/cli/self_path.hpp"

namespace numaware::cli {

void add_advise_command(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "advise", "Configuration advisor: thread and page mapping and prefetcher settings from two profile runs "
                  "(sweep, train, evaluate, run, plot; numaware's Python package)");
    cmd->prefix_command();   // everything after `advise` goes to the advisor as given
    cmd->footer("Example: numaware advise sweep --preset thesis-4s --size test --store sweep.sqlite\n"
                "         numaware advise evaluate --preset thesis-4s --size test --json\n"
                "         numaware advise train --preset thesis-4s --size test --output model.json\n"
                "         numaware advise run --model model.json -- ./program ARGS   (simulated; --live: this machine)\n"
                "Each advisor command has its own help: numaware advise sweep --help (docs/ADVISOR.md).");
    cmd->callback([cmd] {
        const PythonPackage package = find_python_package("advise");
        const std::filesystem::path self = self_executable("advise", "");
        std::vector<std::string> args = cmd->remaining();
        exec_python_module(package, "advise", "advisor", args, {"NUMAWARE_CLI=" + self.string()});
    });
}

}  // namespace numaware::cli
