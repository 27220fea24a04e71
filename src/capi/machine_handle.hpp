// capi/machine_handle.hpp — what an nw_machine_t is, for other C areas.
//
// C functions in placement, team, ... that take an nw_machine_t use
// machine_of() to reach the C++ Machine.
#pragma once

#include "numaware/c/machine.h"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"

struct nw_machine {
    numaware::Machine machine;
};

namespace numaware::capi {

// Throws Error(EINVAL) naming `what` when the handle is NULL.
inline const Machine& machine_of(const nw_machine_t* handle, const char* what = "machine") {
    if (handle == nullptr) throw Error(what, "is NULL");
    return handle->machine;
}

}  // namespace numaware::capi
