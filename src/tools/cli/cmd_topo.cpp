// PLACEHOLDER: replaced by the owner of the `topo` command.
#include "tools/cli/commands.hpp"
namespace numaware::cli {
void add_topo_command(CLI::App& app) { (void)app; }
}
