// sim/memory/tile_ops.hpp — one operation of a tiled dense factorisation
// (a BLAS or LAPACK call on b × b tiles) as the accesses of the memory
// simulator: the tiled kernels `cholesky` and `qr` (cholesky_kernel.cpp,
// qr_kernel.cpp) are lists of these.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "sim/memory/loop_kernel.hpp"

namespace numaware::sim::memory::detail {

// A tile the operation reads or updates: its first byte and its size in
// 64-byte lines.
struct TileOperand {
    std::uint64_t addr = 0;
    std::uint64_t lines = 0;
};

// The arithmetic of a tile kernel, as instructions: a 4-wide double fused
// multiply-add (AVX2) does 8 flops.
inline constexpr std::uint64_t tile_flops_per_instruction = 8;

// One tile operation at 64-byte lines: every line of each input once (PC
// pc + i for input i), then every line of each output loaded and stored
// (PCs pc + 10 + 2j and pc + 11 + 2j for output j), the operation's `flops`
// spread evenly over those accesses as instruction gaps. This is the
// traffic of a kernel whose tiles stay in the L2 while it computes, not
// the loads of a BLAS micro-kernel, which re-reads its tiles from the L1
// and the L2 many times; a line-level model leaves those hits out.
void emit_tile_op(Emitter& e, std::uint64_t flops, std::initializer_list<TileOperand> inputs,
                  std::initializer_list<TileOperand> outputs, std::uint32_t pc);

}  // namespace numaware::sim::memory::detail
