// capi/error.cpp — per-thread text of the last C API failure.
#include "capi/capi_util.hpp"
#include "numaware/c/error.h"

namespace numaware::capi {
namespace {
// Per thread, like errno, so concurrent callers never see each other's text.
thread_local std::string last_error;
}  // namespace

void set_last_error(int code, std::string message) {
    try {
        last_error = std::move(message);
    } catch (...) {
        // Keep the errno even if the message cannot be stored.
    }
    errno = code;
}

}  // namespace numaware::capi

extern "C" const char* nw_error_message(void) { return numaware::capi::last_error.c_str(); }
