// PLACEHOLDER: replaced by the owner of the `vm` command.
#include "tools/cli/commands.hpp"
namespace numaware::cli {
void add_vm_command(CLI::App& app) { (void)app; }
}
