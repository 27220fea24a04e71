// tools/cli/cmd_vm.cpp — `numaware vm`: run a command on an emulated NUMA machine.
//
// The guest's stdout and stderr come back as this command's stdout and
// stderr, and its exit status becomes this command's status, so
// `numaware vm --machine SPEC -- ./tests` drops into scripts and ctest.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "tools/cli/commands.hpp"
#include "tools/vm/guest_init.hpp"
#include "tools/vm/runner.hpp"

namespace numaware::cli {
namespace {

struct VmOptions {
    std::string machine;
    std::string kernel;
    std::string kernel_args;
    std::string mem_per_node;
    unsigned cpus_per_node = 0;
    double timeout = 600;
    double boot_timeout = 120;
    std::vector<std::string> shares;
    std::vector<std::string> env;
    std::vector<std::string> command;
    bool json = false;
    bool verbose = false;
    bool keep = false;
};

void write_all(std::FILE* to, const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), to);
    std::fflush(to);
}

std::string quoted_argv(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) out += (out.empty() ? "" : " ") + vm::shell_quote(a);
    return out;
}

void run(const VmOptions& o, bool cpus_given) {
    vm::VmRequest request;
    request.spec = o.machine;
    request.machine = Machine::from_spec(o.machine);
    if (!o.mem_per_node.empty()) request.overrides.mem_per_node = parse_size(o.mem_per_node, "--mem-per-node");
    if (cpus_given) request.overrides.cpus_per_node = o.cpus_per_node;
    request.kernel = o.kernel;
    request.kernel_args = o.kernel_args;
    request.command = o.command;
    request.shares = o.shares;
    request.env = o.env;
    request.timeout_seconds = o.timeout;
    request.boot_timeout_seconds = o.boot_timeout;
    request.keep = o.keep;

    const vm::VmResult r = vm::run_in_vm(request);
    if (!r.boot_retry.empty())
        write_all(stderr, fmt::format("numaware vm: the boot failed before the command started ({}); booted again "
                                      "(first console: {}/console-boot1.log)\n",
                                      r.boot_retry, r.results_dir));

    if (o.verbose) {
        write_all(stderr, fmt::format("numaware vm: {}\n--- guest console ---\n{}--- end of console ---\n",
                                      quoted_argv(r.qemu_argv), r.serial_log));
    }
    if (!r.failure.empty()) {
        // Show what the command wrote before the guest died, then why.
        if (!o.json) {
            write_all(stdout, r.stdout_text);
            write_all(stderr, r.stderr_text);
        }
        throw Error(r.failure_field, r.failure);
    }
    if (o.json) {
        nlohmann::json j;
        j["exit_code"] = r.exit_code;
        j["stdout"] = r.stdout_text;
        j["stderr"] = r.stderr_text;
        j["boot_seconds"] = r.boot_seconds;
        j["run_seconds"] = r.run_seconds;
        j["total_seconds"] = r.total_seconds;
        j["kernel"] = r.kernel_release;
        j["machine"] = nlohmann::json::parse(r.guest.to_json());
        if (!r.results_dir.empty()) j["results_dir"] = r.results_dir;
        if (!r.boot_retry.empty()) j["boot_retry"] = r.boot_retry;
        if (!r.stall.empty()) j["stall"] = r.stall;
        // Guest output is arbitrary bytes; invalid UTF-8 becomes U+FFFD.
        write_all(stdout, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    } else {
        write_all(stdout, r.stdout_text);
        write_all(stderr, r.stderr_text);
        if (!r.stall.empty() && r.exit_code != 0)
            write_all(stderr, fmt::format("numaware vm: the guest kernel reported a stalled CPU while the command ran "
                                          "(a hang in the guest may be the emulator's): {}\n",
                                          r.stall));
        if (o.verbose)
            write_all(stderr, fmt::format("numaware vm: kernel {}, exit {}, boot+poweroff {:.1f} s, run {:.1f} s{}\n",
                                          r.kernel_release, r.exit_code, r.boot_seconds, r.run_seconds,
                                          r.results_dir.empty() ? "" : ", files in " + r.results_dir));
    }
    set_exit_status(r.exit_code);
}

}  // namespace

void add_vm_command(CLI::App& app) {
    auto options = std::make_shared<VmOptions>();
    CLI::App* cmd = app.add_subcommand(
        "vm", "Boot an emulated NUMA machine (QEMU) whose topology matches SPEC and run COMMAND in it");
    cmd->add_option("--machine", options->machine,
                    "Machine to emulate: a synthetic description, an hwloc .xml, a numaware .json, @file or live")
        ->required();
    cmd->add_option("--kernel", options->kernel,
                    "Guest kernel: 6.1, 6.12, an exact cached release, or a kernel directory (default: newest cached)");
    cmd->add_option("--kernel-args", options->kernel_args,
                    "Extra guest kernel command line, e.g. 'numa_balancing=disable transparent_hugepage=never'");
    cmd->add_option("--mem-per-node", options->mem_per_node, "Give every guest node this much memory (e.g. 512M)");
    auto* cpus = cmd->add_option("--cpus-per-node", options->cpus_per_node,
                                 "Give every node that has CPUs this many vCPUs");
    cmd->add_option("--timeout", options->timeout, "Kill the guest after this many seconds")
        ->capture_default_str();
    cmd->add_option("--boot-timeout", options->boot_timeout,
                    "Boot again, once, when the command has not started after this many seconds")
        ->capture_default_str();
    cmd->add_option("--share", options->shares,
                    "Export a host directory writable at the same path in the guest (repeatable)")
        ->allow_extra_args(false);   // one value per flag, so "--" still ends the options
    cmd->add_option("--env", options->env,
                    "Set NAME=VALUE in the guest, or pass the host's NAME (repeatable; GTEST_*, NUMAWARE_*, LANG, "
                    "LC_*, TERM, TZ pass by default)")
        ->allow_extra_args(false);
    cmd->add_flag("--json", options->json,
                  "Print exit_code, stdout, stderr, boot/run seconds, kernel and the guest machine as JSON");
    cmd->add_flag("--verbose", options->verbose, "Show the QEMU command line, the guest console and timings");
    cmd->add_flag("--keep", options->keep, "Keep the run's directory (console log, command script, outputs)");
    cmd->add_option("command", options->command, "Command to run in the guest (after --)")->required();
    cmd->footer(
        "The guest sees the host's files read-only (its /tmp is its own; a /tmp/DIR holding the working\n"
        "directory or a path argument is exported writable, as with --share), runs COMMAND in the current\n"
        "directory with NUMAWARE_VM=1, NUMAWARE_VM_MACHINE=<guest machine JSON> and NUMAWARE_VM_SPEC set,\n"
        "and this command exits with COMMAND's status. Guest node ids are the node positions in SPEC (0..n-1).\n"
        "Kernels come from scripts/fetch-guest-kernel.\n\n"
        "Example: numaware vm --machine 'nodes=4 cpus-per-node=1 mem-per-node=256M "
        "distances=10,21,31,31/21,10,21,31/31,21,10,21/31,31,21,10' -- cat /sys/devices/system/node/online");
    cmd->callback([options, cpus] { run(*options, cpus->count() > 0); });
}

}  // namespace numaware::cli
