// tests/unit/support.hpp — small helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "numaware/error.hpp"

namespace numaware::test {

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

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace numaware::test
