// tools/omp/depend.hpp — GCC's dependence arrays, read into the task
// runtime's dependencies (depend.cpp).
//
// GCC passes `depend` clauses as an array of words in one of two layouts:
//   [n, n_out, out..., in...]                    (only in, out and inout)
//   [0, n, n_out, n_mutexinoutset, n_in,
//    out..., mutexinoutset..., in..., depobj...]  (otherwise)
// where out covers out and inout, and a depobj entry points to an
// omp_depend_t: {address, kind} with kind 1 in, 2 out, 3 inout,
// 4 mutexinoutset, 5 inoutset.
//
// The rule (docs/OPENMP.md): OpenMP matches dependences by address alone,
// so each address is the one-byte range at it, in the scope of the
// parent's children; two names of one address in one task become one
// dependency of the stronger access. out, inout, mutexinoutset and
// inoutset are all writes (inout): the runtime orders them as OpenMP
// orders inout, which serialises the mutually exclusive sets in creation
// order, an order those sets allow. A null address (omp_all_memory, which
// GCC 12 does not emit) marks the list as depending on every sibling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "numaware/tasks.hpp"
#include "util/small_vec.hpp"

namespace numaware::omp {

class DependList {
public:
    bool empty() const { return list_.empty(); }
    bool all_memory() const { return all_memory_; }
    std::span<const tasks::Dep> span() const { return list_; }
    // Adds `addr` with `access`, merging a second name of the same address.
    void add(const void* addr, tasks::AccessMode access, std::uint16_t scope);

private:
    // A task's few dependences need no allocation (a list is made for
    // every task with a depend clause): eight inline, more on the heap.
    SmallVec<tasks::Dep, 8> list_;
    bool all_memory_ = false;
};

// Reads GCC's array; an unknown depobj kind stops the program with a message.
void read_depend(void* const* depend, std::uint16_t scope, DependList& out);

}  // namespace numaware::omp
