// tools/vm/runner.cpp — one guest boot, one command.
#include "tools/vm/runner.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "tools/vm/guest_init.hpp"
#include "tools/vm/initramfs.hpp"
#include "tools/vm/kernel_cache.hpp"
#include "tools/vm/process.hpp"

extern char** environ;

namespace numaware::vm {
namespace fs = std::filesystem;
namespace {

constexpr const char* sane_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr const char* guest_machine_path = "/tmp/numaware-vm/machine.json";

bool valid_env_name(const std::string& name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string read_optional(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec) ? read_file(p.string()) : std::string{};
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
    return s;
}

// A failed run keeps its directory so the console log can be inspected.
// (result.stall is already set.)
void set_failure(VmResult& result, const std::string& field, const std::string& what, const std::string& console) {
    result.failure_field = field;
    result.failure = fmt::format("{}{}\n--- last guest console lines ---\n{}\n--- files kept in {} ---", what,
                                 result.stall.empty() ? "" : "; the guest kernel reported a stalled CPU: " + result.stall,
                                 tail_lines(console, 25), result.results_dir);
}

// The whole line of `text` that holds position `at`, trimmed.
std::string line_at(const std::string& text, std::size_t at) {
    const auto newline = text.rfind('\n', at);
    const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
    const auto end = text.find('\n', at);
    return trim(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
}

}  // namespace

std::string boot_failure_before_command(const std::string& console, int qemu_status, bool command_started,
                                        bool init_failed) {
    if (command_started || init_failed) return {};
    const auto at = console.find("Kernel panic");
    // init exiting is init's failure, not the kernel's: booting again would repeat it.
    if (at != std::string::npos && console.find("Attempted to kill init", at) != std::string::npos) return {};
    if (at == std::string::npos) {
        if (qemu_status > 128) return fmt::format("QEMU was killed by signal {} before the command started", qemu_status - 128);
        return {};
    }
    return line_at(console, at);
}

std::string guest_stall(const std::string& console) {
    static constexpr const char* signs[] = {"detected stalls on CPUs", "timer wakeup didn't happen",
                                            "soft lockup - CPU"};
    std::size_t first = std::string::npos;
    for (const char* sign : signs) first = std::min(first, console.find(sign));
    return first == std::string::npos ? std::string() : line_at(console, first);
}

bool boot_stalled(double elapsed_seconds, double limit_seconds, bool command_started) {
    return !command_started && elapsed_seconds >= limit_seconds;
}

std::string tail_lines(const std::string& text, std::size_t lines) {
    std::size_t end = text.size();
    while (end > 0 && text[end - 1] == '\n') --end;
    std::size_t pos = end;
    for (std::size_t n = 0; n < lines && pos > 0; ++n) {
        pos = text.rfind('\n', pos - 1);
        if (pos == std::string::npos) {
            pos = 0;
            break;
        }
        if (n + 1 == lines) ++pos;
    }
    return text.substr(pos, end - pos);
}

bool hidden_in_guest(const std::string& path, const std::vector<std::string>& shares) {
    auto under = [&](const std::string& dir) {
        return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                               (dir.back() == '/' || path[dir.size()] == '/'));
    };
    if (!under("/tmp")) return false;
    return std::none_of(shares.begin(), shares.end(), under);
}

bool passes_through(const std::string& name) {
    for (const char* prefix : {"GTEST_", "NUMAWARE_", "LC_"})
        if (name.rfind(prefix, 0) == 0) return true;
    return name == "LANG" || name == "TERM" || name == "TZ";
}

std::vector<std::pair<std::string, std::string>> guest_environment(const std::vector<std::string>& host_env,
                                                                   const std::vector<std::string>& extra,
                                                                   const std::string& spec,
                                                                   const std::string& kernel_release) {
    std::map<std::string, std::string> env;
    std::map<std::string, std::string> host;
    for (const auto& entry : host_env) {
        const auto eq = entry.find('=');
        if (eq == std::string::npos) continue;
        host[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    for (const auto& [name, value] : host)
        if (passes_through(name)) env[name] = value;
    env["PATH"] = sane_path;
    env["HOME"] = "/tmp";
    env["NUMAWARE_VM"] = "1";
    env["NUMAWARE_VM_SPEC"] = spec;
    env["NUMAWARE_VM_MACHINE"] = guest_machine_path;
    env["NUMAWARE_VM_KERNEL"] = kernel_release;
    for (const auto& entry : extra) {
        const auto eq = entry.find('=');
        const std::string name = entry.substr(0, eq);
        if (!valid_env_name(name))
            throw Error("--env", fmt::format("'{}' is not NAME or NAME=VALUE with a shell variable name", entry));
        if (eq != std::string::npos) {
            env[name] = entry.substr(eq + 1);
        } else if (auto it = host.find(name); it != host.end()) {
            env[name] = it->second;
        } else {
            throw Error("--env", fmt::format("{} is not set on the host; pass {}=VALUE", name, name));
        }
    }
    return {env.begin(), env.end()};
}

VmResult run_in_vm(const VmRequest& request) {
    if (request.command.empty()) throw Error("command", "is missing: numaware vm --machine SPEC -- COMMAND...");
    // A week bounds both: beyond it the deadline arithmetic is no longer exact.
    constexpr double most_seconds = 7 * 24 * 3600.0;
    for (const auto& [field, value] : {std::pair{"--timeout", request.timeout_seconds},
                                       std::pair{"--boot-timeout", request.boot_timeout_seconds}})
        if (!(value > 0 && value <= most_seconds))
            throw Error(field, fmt::format("must be a number of seconds above 0 and at most {:.0f} (a week), not {}",
                                           most_seconds, value));

    // Decide everything that can be wrong with the request before touching files.
    const GuestLayout layout = guest_layout(request.machine, request.overrides);
    const std::string qemu = find_in_path("qemu-system-x86_64");
    if (qemu.empty())
        throw Error("", "qemu-system-x86_64 not found: install Debian package qemu-system-x86 (scripts/bootstrap does)");
    const std::string root = cache_root();
    const GuestKernel kernel = find_kernel(request.kernel, root);
    std::vector<std::string> shares;
    for (const auto& s : request.shares) {
        std::error_code ec;
        const fs::path p = fs::canonical(s, ec);
        if (ec || !fs::is_directory(p, ec)) throw Error("--share", fmt::format("{} is not a directory", s));
        if (p.string().find('\n') != std::string::npos) throw Error("--share", "path contains a newline");
        shares.push_back(p.string());
    }
    std::error_code cwd_ec;
    const std::string cwd = request.cwd.empty() ? fs::current_path(cwd_ec).string() : request.cwd;
    // The guest's /tmp is its own tmpfs, so a working directory or an
    // argument path under the host's /tmp (a build tree in a CI checkout
    // there, say) would vanish. Export its top-level /tmp/<dir> like --share.
    std::vector<std::string> wanted{cwd};
    wanted.insert(wanted.end(), request.command.begin(), request.command.end());
    for (const std::string& p : wanted) {
        if (p.empty() || p.front() != '/' || !hidden_in_guest(p, shares)) continue;
        const auto slash = p.find('/', 5);   // after "/tmp/"
        const std::string top = p.substr(0, slash);
        std::error_code ec;
        if (top.size() > 5 && fs::is_directory(top, ec) && top.find('\n') == std::string::npos)
            shares.push_back(top);
    }
    std::vector<std::string> host_env;
    for (char** e = environ; *e != nullptr; ++e) host_env.emplace_back(*e);
    const auto env = guest_environment(host_env, request.env, request.spec, kernel.release);

    VmResult result;
    result.kernel_release = kernel.release;
    result.guest = guest_machine(request.machine, layout);
    const std::string initramfs = initramfs_for(kernel, root, find_static_busybox());

    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/numaware-vm.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw Error(pattern, "cannot create the results directory");
    const std::string workdir = pattern;
    const std::string out = workdir + "/out";
    fs::create_directory(out);
    result.results_dir = workdir;

    std::string share_lines;
    for (std::size_t i = 0; i < shares.size(); ++i) share_lines += share_tag(i) + " " + shares[i] + "\n";
    write_file(out + "/shares", share_lines);
    write_file(out + "/machine.json", result.guest.to_json());
    write_file(out + "/command.sh", command_script({request.command, cwd, env}));

    QemuPaths paths;
    paths.qemu = qemu;
    paths.kernel = kernel.boot_image();
    paths.initramfs = initramfs;
    paths.serial_log = workdir + "/console.log";
    paths.results_dir = out;
    paths.shares = shares;
    paths.kernel_args = request.kernel_args;
    result.qemu_argv = qemu_command(layout, paths);

    // Asked every 20 ms: the results directory is looked at until the
    // command has started (a few hundred times in a boot), then no more.
    bool started = false;
    const auto hung = [&](double elapsed) {
        std::error_code ec;
        if (!started) started = fs::exists(out + "/started", ec);
        return boot_stalled(elapsed, request.boot_timeout_seconds, started);
    };
    const auto boot = [&] {
        return run_process(result.qemu_argv, workdir + "/qemu.log", workdir + "/qemu.log", request.timeout_seconds,
                           {}, hung);
    };
    ProcessResult run = boot();
    if (!run.timed_out) {
        std::error_code ec;
        const std::string failure =
            run.given_up ? fmt::format("the command had not started after {} s", request.boot_timeout_seconds)
                         : boot_failure_before_command(read_optional(paths.serial_log), run.status,
                                                       fs::exists(out + "/started", ec),
                                                       fs::exists(out + "/init-error", ec));
        if (!failure.empty()) {
            // Nothing of the command ran: boot again, once, keeping the first console.
            fs::rename(paths.serial_log, workdir + "/console-boot1.log", ec);
            fs::rename(workdir + "/qemu.log", workdir + "/qemu-boot1.log", ec);
            result.boot_retry = failure;
            run = boot();
        }
    }
    result.total_seconds = run.seconds;
    result.serial_log = read_optional(paths.serial_log);
    const std::string qemu_log = trim(read_optional(workdir + "/qemu.log"));
    const std::string console = qemu_log.empty() ? result.serial_log : result.serial_log + "\n[qemu] " + qemu_log;

    result.stall = guest_stall(console);
    result.stdout_text = read_optional(out + "/stdout");
    result.stderr_text = read_optional(out + "/stderr");
    const std::string status = trim(read_optional(out + "/status"));
    if (run.given_up) {
        set_failure(result, "--boot-timeout",
                    fmt::format("the guest had not started the command after {} s, in two boots, so QEMU was killed",
                                request.boot_timeout_seconds),
                    console);
        return result;
    }
    if (run.timed_out) {
        set_failure(result, "--timeout",
                    fmt::format("the guest did not finish within {} s, so QEMU was killed", request.timeout_seconds),
                    console);
        return result;
    }
    if (status.empty()) {
        const std::string init_error = trim(read_optional(out + "/init-error"));
        set_failure(result, "guest",
                    fmt::format("did not report an exit status (QEMU exited with {}{})", run.status,
                                init_error.empty() ? "" : "; guest init: " + init_error),
                    console);
        return result;
    }
    try {
        result.exit_code = std::stoi(status);
        result.run_seconds = std::stod(read_file(out + "/finished")) - std::stod(read_file(out + "/started"));
    } catch (const std::logic_error&) {
        set_failure(result, "guest", fmt::format("reported an unreadable status '{}'", status), console);
        return result;
    }
    result.boot_seconds = std::max(0.0, result.total_seconds - result.run_seconds);

    if (!request.keep && result.boot_retry.empty()) {
        std::error_code ec;
        fs::remove_all(workdir, ec);
        result.results_dir.clear();
    }
    return result;
}

}  // namespace numaware::vm
