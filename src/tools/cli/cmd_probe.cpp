// PLACEHOLDER: replaced by the owner of the `probe` command.
#include "tools/cli/commands.hpp"
namespace numaware::cli {
void add_probe_command(CLI::App& app) { (void)app; }
}
