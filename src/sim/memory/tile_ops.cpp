// sim/memory/tile_ops.cpp — a tile operation's accesses (tile_ops.hpp).
#include "sim/memory/tile_ops.hpp"

namespace numaware::sim::memory::detail {

void emit_tile_op(Emitter& e, std::uint64_t flops, std::initializer_list<TileOperand> inputs,
                  std::initializer_list<TileOperand> outputs, std::uint32_t pc) {
    std::uint64_t accesses = 0;
    for (const TileOperand& t : inputs) accesses += t.lines;
    for (const TileOperand& t : outputs) accesses += 2 * t.lines;
    if (accesses == 0) return;
    const auto gap = static_cast<std::uint32_t>(flops / tile_flops_per_instruction / accesses);
    std::uint32_t i = 0;
    for (const TileOperand& t : inputs) {
        for (std::uint64_t l = 0; l < t.lines; ++l) e.load(t.addr + l * 64, pc + i, gap, 64);
        ++i;
    }
    std::uint32_t j = 0;
    for (const TileOperand& t : outputs) {
        for (std::uint64_t l = 0; l < t.lines; ++l) {
            e.load(t.addr + l * 64, pc + 10 + 2 * j, gap, 64);
            e.store(t.addr + l * 64, pc + 11 + 2 * j, gap, 64);
        }
        ++j;
    }
}

}  // namespace numaware::sim::memory::detail
