// capi/capi_util.hpp — the one way C entry points turn C++ failures into
// -1 + errno + nw_error_message().
//
// Usage in a C function:
//     int nw_thing_do(nw_thing_t* t, unsigned n) {
//         return numaware::capi::guarded([&] {
//             numaware::capi::require(t, "thing");
//             return t->impl.do_it(n);      // returns an int >= 0
//         });
//     }
// No exception ever crosses into C.
#pragma once

#include <cerrno>
#include <new>
#include <string>
#include <system_error>
#include <utility>

#include "numaware/error.hpp"

namespace numaware::capi {

// Sets errno and the calling thread's nw_error_message() text.
void set_last_error(int code, std::string message);

// Records the failure and returns -1, for early returns.
inline int fail(int code, std::string message) {
    set_last_error(code, std::move(message));
    return -1;
}

// Throws Error(EINVAL) naming `what` when a pointer argument is NULL.
template <class T>
void require(const T* pointer, const char* what) {
    if (pointer == nullptr) throw Error(what, "is NULL");
}

// Runs fn (which returns an int >= 0 or throws) and maps exceptions:
// numaware::Error -> its code(); std::bad_alloc -> ENOMEM;
// std::system_error -> its error value; any other exception -> EIO.
template <class Fn>
int guarded(Fn&& fn) noexcept {
    try {
        return std::forward<Fn>(fn)();
    } catch (const Error& e) {
        return fail(e.code(), e.what());
    } catch (const std::bad_alloc&) {
        return fail(ENOMEM, "out of memory");
    } catch (const std::system_error& e) {
        return fail(e.code().value() != 0 ? e.code().value() : EIO, e.what());
    } catch (const std::exception& e) {
        return fail(EIO, e.what());
    } catch (...) {
        return fail(EIO, "unknown C++ exception");
    }
}

}  // namespace numaware::capi
