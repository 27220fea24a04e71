// tools/vm/runner.hpp — boot an emulated NUMA machine, run one command, collect it.
//
// run_in_vm() prepares a results directory (the writable "nwout" export),
// writes command.sh / machine.json / shares there, builds or reuses the
// initramfs, runs QEMU with a timeout and reads back the guest's stdout,
// stderr and exit status.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numaware/machine.hpp"
#include "tools/vm/qemu_command.hpp"

namespace numaware::vm {

struct VmRequest {
    Machine machine;
    std::string spec;                    // as the user gave it; exported as NUMAWARE_VM_SPEC
    LayoutOverrides overrides;
    std::string kernel;                  // --kernel request ("" = newest cached)
    std::string kernel_args;             // extra guest kernel command line
    std::vector<std::string> command;    // argv run in the guest
    std::string cwd;                     // host working directory ("" = current)
    std::vector<std::string> shares;     // host directories exported writable at the same path
    // Extra environment: "NAME=VALUE", or "NAME" to pass the host's value.
    std::vector<std::string> env;
    double timeout_seconds = 600;
    // A boot that has not started the command after this long is taken
    // for hung and booted again, once (see boot_stalled()).
    double boot_timeout_seconds = 120;
    bool keep = false;                   // keep the results directory
};

struct VmResult {
    int exit_code = 0;
    std::string stdout_text;
    std::string stderr_text;
    double boot_seconds = 0;   // QEMU start to command start, plus power-off
    double run_seconds = 0;    // the command itself, by the guest's clock
    double total_seconds = 0;
    std::string kernel_release;
    std::string serial_log;    // the guest console
    std::vector<std::string> qemu_argv;
    std::string results_dir;   // removed unless VmRequest::keep
    Machine guest;             // the machine as the guest sees it
    // Set when the command did not finish (timeout, guest crash, init
    // failure): the field and message of the Error to report, console tail
    // included. stdout_text/stderr_text then hold what the command wrote
    // before that, and the run's directory is kept.
    std::string failure_field;
    std::string failure;
    // Set when the first boot failed before the command started (a kernel
    // panic, QEMU killed by a signal, a boot that hung) and the guest was
    // booted again (once): the panic's console line or what happened. The
    // first boot's console is kept as console-boot1.log in the results
    // directory, which is then kept.
    std::string boot_retry;
    // The guest kernel's report of a CPU that stopped running (guest_stall()),
    // or "".
    std::string stall;
};

// Host environment variables passed into the guest without being asked:
// GoogleTest's and numaware's own settings, locale and terminal.
bool passes_through(const std::string& name);

// The guest command's environment, sorted by name: PATH, HOME=/tmp,
// NUMAWARE_VM=1, NUMAWARE_VM_SPEC, NUMAWARE_VM_MACHINE (guest machine JSON
// path), NUMAWARE_VM_KERNEL, pass-through variables from `host_env`
// ("NAME=VALUE" strings), then `extra` (which wins). Pure.
std::vector<std::pair<std::string, std::string>> guest_environment(const std::vector<std::string>& host_env,
                                                                   const std::vector<std::string>& extra,
                                                                   const std::string& spec,
                                                                   const std::string& kernel_release);

// True when host `path` cannot be seen in the guest: it lies under /tmp,
// which the guest replaces with its own tmpfs, and no share covers it.
bool hidden_in_guest(const std::string& path, const std::vector<std::string>& shares);

// Why a boot failed before the command started, or "" when it did not, or
// when a new boot would fail the same way. A failure is the console line of
// a guest kernel panic ("Kernel panic - not syncing: ..."), or, without
// one, QEMU killed by a signal (`qemu_status` > 128: 128 + the signal, as
// ProcessResult gives it). "" when the command had started, when the
// guest's init reported an error, or when the panic is init's exit
// ("Attempted to kill init"). Such a boot ran nothing of the request, so
// run_in_vm() boots again, once: CI met a guest kernel panic at boot on a
// loaded host, and QEMU dying of SIGSEGV before the guest printed anything
// (BENCHMARKS.md, 2026-12-02). Pure.
std::string boot_failure_before_command(const std::string& console, int qemu_status, bool command_started,
                                        bool init_failed);

// True when a boot `elapsed_seconds` old has not started the command and
// `limit_seconds` have passed: the boot hung. A 4-node Debian 6.1 guest in
// CI once stayed silent (no console line, no command) until the 300 s
// timeout killed it, where such boots take 7-11 s (BENCHMARKS.md,
// 2026-12-03). run_in_vm() then kills QEMU and boots again, once. Pure.
bool boot_stalled(double elapsed_seconds, double limit_seconds, bool command_started);

// Runs the request. Throws Error when the guest cannot be started; a guest
// that starts but never reports a status returns with `failure` set. A
// boot that fails before the command starts (a kernel panic, QEMU killed by
// a signal, no command started within VmRequest::boot_timeout_seconds) is
// retried once (VmResult::boot_retry).
VmResult run_in_vm(const VmRequest& request);

// The first console line in which the guest kernel reports a CPU that
// stopped running: an RCU stall ("rcu_preempt detected stalls on CPUs",
// "... timer wakeup didn't happen ...") or a soft lockup; "" when there is
// none. In a 16-vCPU guest under QEMU's TCG, CPU 0's timer stopped firing
// and every program asleep there hung (BENCHMARKS.md, 2026-12-08): a hang
// inside such a guest may be the emulator's, and `numaware vm` says so.
// Pure.
std::string guest_stall(const std::string& console);

// The last `lines` lines of `text`.
std::string tail_lines(const std::string& text, std::size_t lines);

}  // namespace numaware::vm
