// PLACEHOLDER: replaced by the owner of the `place` command.
#include "tools/cli/commands.hpp"
namespace numaware::cli {
void add_place_command(CLI::App& app) { (void)app; }
}
