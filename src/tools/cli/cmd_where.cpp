// PLACEHOLDER: replaced by the owner of the `where` command.
#include "tools/cli/commands.hpp"
namespace numaware::cli {
void add_where_command(CLI::App& app) { (void)app; }
}
