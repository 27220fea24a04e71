// capi/team_handle.hpp — what an nw_team_t is, for other C areas.
//
// C functions in tasks, ... that take an nw_team_t use team_of() to reach
// the C++ Team.
#pragma once

#include "numaware/c/team.h"
#include "numaware/error.hpp"
#include "numaware/team.hpp"

struct nw_team {
    numaware::Team team;
};

namespace numaware::capi {

// Throws Error(EINVAL) naming `what` when the handle is NULL.
inline Team& team_of(nw_team_t* handle, const char* what = "team") {
    if (handle == nullptr) throw Error(what, "is NULL");
    return handle->team;
}
inline const Team& team_of(const nw_team_t* handle, const char* what = "team") {
    if (handle == nullptr) throw Error(what, "is NULL");
    return handle->team;
}

}  // namespace numaware::capi
