// tests/unit/support.hpp — small helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "heap/engine.hpp"
#include "numaware/error.hpp"
#include "numaware/task_policy.hpp"

namespace numaware::test {

// A new owner arena of the heap engine on node 0, so that a test sees only
// its own spans and regions; one counter keeps every test's owner tag apart.
inline heap::ArenaId fresh_heap_arena() {
    static std::uint32_t tag = 7000;
    const heap::ArenaId a = heap::create_arena(0, ++tag);
    EXPECT_NE(a, heap::no_arena);
    return a;
}

// Runs `fn`, expects a numaware::Error, and returns it so the test can
// check its field and text.
template <class Fn>
Error expect_error(Fn fn) {
    try {
        fn();
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "no numaware::Error thrown";
    return Error("", "none");
}

// A parameterised test's name for a string parameter: every character but
// letters and digits becomes '_' ("rip-dep" -> "rip_dep").
inline std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
    std::string name = info.param;
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return name;
}

// Every built-in task policy's name, as test parameters.
inline std::vector<std::string> all_policy_names() {
    std::vector<std::string> names;
    for (std::string_view n : tasks::policy_names()) names.emplace_back(n);
    return names;
}

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Exactly one line, ending in a newline: how the CLI reports a failure.
inline bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == s.size() - 1; }

// The same, and checks the error's field and that its text contains `part`.
template <class Fn>
void expect_error(Fn fn, const std::string& field, const std::string& part) {
    const Error e = expect_error(fn);
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_TRUE(contains(e.what(), part)) << "'" << e.what() << "' lacks '" << part << "'";
}

// Runs the built `numaware` command (NUMAWARE_CLI) with `args` through the
// shell and returns its exit status and standard output (with standard
// error too when merge_stderr).
struct CliResult {
    int status = -1;
    std::string out;
};

#ifdef NUMAWARE_CLI
// `env` is an optional environment assignment for the command
// ("PATH=/nonexistent"), run through env(1).
inline CliResult run_cli(const std::string& args, bool merge_stderr = true, const std::string& env = "") {
    CliResult r;
    const std::string command = (env.empty() ? std::string() : "env " + env + " ") + "'" + NUMAWARE_CLI + "' " + args +
                                (merge_stderr ? " 2>&1" : " 2>/dev/null");
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) return r;
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
    const int raw = ::pclose(pipe);
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return r;
}
#endif

}  // namespace numaware::test
