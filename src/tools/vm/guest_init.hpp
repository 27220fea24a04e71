// tools/vm/guest_init.hpp — the shell scripts that run inside the guest.
//
// Two scripts, both pure text:
//  * the initramfs /init (busybox sh), fixed per kernel: it loads the 9p
//    modules, mounts the host root read-only and the results export, chroots
//    into the host root and runs /tmp/numaware-vm/command.sh there, writes the
//    exit status back and powers off;
//  * command.sh, written per run into the results export: environment,
//    working directory and the command itself. Passing it as a file means the
//    command's argv never goes through kernel command-line quoting.
//
// Contract with the host (files in the results export, "nwout"):
//   in:  command.sh, machine.json, shares (lines "TAG PATH")
//   out: stdout, stderr, started/finished (guest uptime seconds),
//        status (written last: its presence means the command ran),
//        init-error (why init gave up, if it did).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace numaware::vm {

// Quotes `word` for POSIX sh so it stays one word, byte for byte.
std::string shell_quote(const std::string& word);

// /init for an initramfs whose modules (in load order) sit at
// /lib/modules/<name>.ko.
std::string guest_init_script(const std::vector<std::string>& modules);

// Exit status command.sh returns when the working directory does not exist
// in the guest (like env(1)'s 125 for its own failures).
inline constexpr int cwd_failure_status = 125;

struct GuestCommand {
    std::vector<std::string> argv;                              // the command
    std::string cwd;                                            // host path
    std::vector<std::pair<std::string, std::string>> env;       // complete environment
};

std::string command_script(const GuestCommand& command);

}  // namespace numaware::vm
