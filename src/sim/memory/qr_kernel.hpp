// sim/memory/qr_kernel.hpp — the tiled QR factorisation of the task
// application `qr` as a fork-join kernel: a serial panel and a parallel
// trailing update a step (qr_kernel.cpp).
#pragma once

#include <cstdint>
#include <memory>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory::detail {

// The tiles a side nt of a square matrix of at most `bytes` (tiles of
// 64 × 64 doubles, 32 KiB): the largest nt with nt² tiles in `bytes`.
std::uint64_t qr_tiles_per_side(std::uint64_t bytes);

// "qr[:MIB]": the factorisation of a matrix of MIB MiB (make_workload
// takes 1 to 1024; default 16), plus its T factors (half as much again).
std::unique_ptr<Workload> make_qr(std::uint64_t bytes);

}  // namespace numaware::sim::memory::detail
