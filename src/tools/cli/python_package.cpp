// tools/cli/python_package.cpp — finding and running numaware's Python
// package; the rule is in python_package.hpp.
#include "tools/cli/python_package.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include <unistd.h>

#include <fmt/core.h>

#include "numaware/error.hpp"
#include "tools/cli/self_path.hpp"
#include "tools/vm/process.hpp"

namespace numaware::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* debian_python = "/usr/bin/python3";
constexpr const char* install_hint = "scripts/bootstrap, or apt-get install python3-matplotlib";

std::string env_value(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
}

bool holds_package(const fs::path& dir) {
    std::error_code ec;
    return fs::is_regular_file(dir / "numaware" / "__init__.py", ec);
}

std::string last_line(const std::string& text) {
    const std::size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) return "";
    const std::size_t newline = text.rfind('\n', end);
    const std::size_t start = newline == std::string::npos ? 0 : newline + 1;
    return text.substr(start, end + 1 - start);
}

std::string find_interpreter(const std::string& option) {
    if (const std::string env = env_value("NUMAWARE_PYTHON"); !env.empty()) {
        const std::string found = vm::find_in_path(env);
        if (found.empty()) throw Error(option, fmt::format("NUMAWARE_PYTHON='{}' is not an executable", env));
        return found;
    }
    if (vm::find_in_path(debian_python).empty())
        throw Error(option, fmt::format("python3 is not installed ({} is missing; {})", debian_python, install_hint));
    return debian_python;
}

std::string find_package_dir(const std::string& option) {
    if (const std::string env = env_value("NUMAWARE_PYTHONPATH"); !env.empty()) {
        if (!holds_package(env))
            throw Error(option, fmt::format("NUMAWARE_PYTHONPATH='{}' holds no numaware/__init__.py", env));
        return env;
    }
    const fs::path exe =
        self_executable(option, "set NUMAWARE_PYTHONPATH to the folder holding numaware's Python package (numaware/)");
    const fs::path installed = (exe.parent_path() / NUMAWARE_PYTHON_FROM_INSTALL).lexically_normal();
    const fs::path source = (exe.parent_path() / NUMAWARE_PYTHON_FROM_BUILD).lexically_normal();
    if (holds_package(installed)) return installed.string();
    if (holds_package(source)) return source.string();
    throw Error(option, fmt::format("numaware's Python package is in neither {} (installed) nor {} (build tree); set "
                                    "NUMAWARE_PYTHONPATH to the folder holding numaware/",
                                    installed.string(), source.string()));
}

}  // namespace

PythonPackage find_python_package(const std::string& option) {
    return {find_interpreter(option), find_package_dir(option)};
}

namespace {

// The environment a module runs in: the package first on the path; no
// __pycache__ written into the source tree or the install prefix; the
// working directory kept off sys.path (Python 3.11's PYTHONSAFEPATH), so a
// numaware/ folder there cannot stand in for the package.
std::vector<std::string> module_environment(const PythonPackage& package) {
    const std::string pythonpath = env_value("PYTHONPATH");
    return {"PYTHONPATH=" + package.dir + (pythonpath.empty() ? "" : ":" + pythonpath), "PYTHONDONTWRITEBYTECODE=1",
            "PYTHONSAFEPATH=1"};
}

}  // namespace

void exec_python_module(const PythonPackage& package, const std::string& option, const std::string& module,
                        const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::vector<std::string> argv{package.interpreter, "-m", "numaware." + module};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> assignments = module_environment(package);
    assignments.insert(assignments.end(), env.begin(), env.end());
    const std::vector<std::string> envs = vm::environment_with(assignments);
    std::vector<char*> cargv, cenv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const std::string& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    std::fflush(nullptr);
    ::execve(package.interpreter.c_str(), cargv.data(), cenv.data());
    throw Error(option, fmt::format("cannot run {}: {}", package.interpreter, std::strerror(errno)), errno);
}

void run_python_module(const PythonPackage& package, const std::string& option, const std::string& module,
                       const std::vector<std::string>& args) {
    const vm::TempDir tmp("numaware-python");
    const std::string output = tmp.path() + "/output";
    std::vector<std::string> argv{package.interpreter, "-m", "numaware." + module};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::vector<std::string> env = module_environment(package);
    const vm::ProcessResult r = vm::run_process(argv, output, output, std::nullopt, env);
    if (r.status == 0) return;
    const std::string line = last_line(vm::read_file(output));
    if (!line.empty()) throw Error(option, line);
    throw Error(option, fmt::format("{} -m numaware.{} exited with status {} and printed nothing", package.interpreter,
                                    module, r.status));
}

}  // namespace numaware::cli
