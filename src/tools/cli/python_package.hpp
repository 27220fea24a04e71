// tools/cli/python_package.hpp — running a module of numaware's Python
// package (python/, e.g. `numaware sim memory --plot`). The package only
// reads JSON the CLI writes for it; nothing is linked.
//
// The interpreter is $NUMAWARE_PYTHON, else Debian's /usr/bin/python3: the
// one that sees the packages scripts/bootstrap installs (python3-matplotlib),
// whatever python3 comes first in PATH (pyenv, a virtualenv).
//
// The package (the folder holding numaware/, put on PYTHONPATH) is
// $NUMAWARE_PYTHONPATH; else it is found from the running executable
// (/proc/self/exe): an installed numaware has it in
// <prefix>/share/numaware/python, a build-tree one in the source tree's
// python/. Both paths are relative to the executable's folder, computed by
// CMake (NUMAWARE_PYTHON_FROM_INSTALL, NUMAWARE_PYTHON_FROM_BUILD), so no
// absolute path is compiled in. docs/SIMULATOR.md, "Plots", has the rule.
#pragma once

#include <string>
#include <vector>

namespace numaware::cli {

struct PythonPackage {
    std::string interpreter;   // the python3 that runs it
    std::string dir;           // the folder holding numaware/
};

// Finds the interpreter and the package. `option` (e.g. "--plot") is the
// field of the Error thrown when either is missing, which says how to get it.
PythonPackage find_python_package(const std::string& option);

// Runs `interpreter -m numaware.MODULE ARGS...` with the package first on
// PYTHONPATH, its standard output and error captured. A non-zero exit
// throws Error(option, the module's last line of output): the modules print
// one line saying what failed.
void run_python_module(const PythonPackage& package, const std::string& option, const std::string& module,
                       const std::vector<std::string>& args);

// Replaces this process with `interpreter -m numaware.MODULE ARGS...` (its
// output goes straight to the terminal), with the same environment as
// run_python_module plus the "NAME=VALUE" assignments in `env`. Returns
// only by throwing Error(option, why) when the exec fails.
[[noreturn]] void exec_python_module(const PythonPackage& package, const std::string& option,
                                     const std::string& module, const std::vector<std::string>& args,
                                     const std::vector<std::string>& env);

}  // namespace numaware::cli
