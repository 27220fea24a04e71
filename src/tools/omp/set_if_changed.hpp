// tools/omp/set_if_changed.hpp — writes that leave an unchanged value
// alone. What the encountering thread writes before a fork (a team's
// fields, its barriers', its worksharing slots), the team's threads read:
// a line written with the value it already held is still taken from their
// caches, so a region run again with the same team should write nothing
// there (BENCHMARKS.md, 2026-12-06 06:51 UTC).
#pragma once

#include <atomic>

namespace numaware::omp {

template <class T, class U>
void set_if_changed(T& field, const U& value) {
    if (field != value) field = value;
}

// An atomic field, read and written relaxed: for fields set while no other
// thread of the team runs (the fork that follows publishes them).
template <class T, class U>
void set_if_changed(std::atomic<T>& field, const U& value) {
    if (field.load(std::memory_order_relaxed) != value) field.store(value, std::memory_order_relaxed);
}

}  // namespace numaware::omp
