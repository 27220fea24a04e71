// sim/memory/loop_kernel.hpp — workloads written as the parallel loops of a
// real kernel (the NAS kernels, nas_kernels.hpp), emitting each thread's
// accesses directly, no trace file.
//
// A LoopKernel is a list of parallel loops, one phase each: an OpenMP
// `for` ends in an implicit barrier, and a phase of the simulator is
// exactly that (every thread starts when the last one of the previous
// phase has finished). A thread's share of a loop is a number of segments
// (a row, a grid line, a block of keys) that emit their accesses only when
// the simulator asks for them, so a stream never holds more than one
// segment in memory however large the kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory::detail {

// Iterations [begin, end) of a loop.
struct Range {
    std::uint64_t begin = 0, end = 0;
    std::uint64_t size() const { return end - begin; }
    bool empty() const { return end <= begin; }
    bool contains(std::uint64_t i) const { return i >= begin && i < end; }
};

// OpenMP's schedule(static) without a chunk size, as libgomp cuts it: `n`
// iterations in one contiguous block per thread, the first n mod threads
// threads one iteration more. With fewer iterations than threads, the
// last threads get none.
Range static_block(std::uint64_t n, unsigned threads, unsigned rank);

// A growable array of accesses whose append is a store and a compare,
// inline (std::vector's push_back stayed a call in every kernel body: 9%
// of the simulator's host time on cg:A).
class AccessBuffer {
public:
    std::size_t size() const { return size_; }
    const Access* data() const { return data_.get(); }
    void clear() { size_ = 0; }
    void push(const Access& a) {
        if (size_ == capacity_) grow();
        data_[size_++] = a;
    }

private:
    [[gnu::noinline]] void grow();
    std::unique_ptr<Access[]> data_;
    std::size_t size_ = 0, capacity_ = 0;
};

// The accesses of one segment, appended in program order. `gap` is the
// non-memory instructions since the previous access (Access::gap).
class Emitter {
public:
    explicit Emitter(AccessBuffer& out) : out_(out) {}
    void load(std::uint64_t addr, std::uint32_t pc, std::uint32_t gap, std::uint8_t size = 8) {
        out_.push(Access{addr, gap, pc, size, false, false});
    }
    void store(std::uint64_t addr, std::uint32_t pc, std::uint32_t gap, std::uint8_t size = 8) {
        out_.push(Access{addr, gap, pc, size, true, false});
    }
    // A load whose address is the data of the access just before it (an
    // indirect gather: x[col[k]] right after col[k]).
    void load_indirect(std::uint64_t addr, std::uint32_t pc, std::uint32_t gap, std::uint8_t size = 8) {
        out_.push(Access{addr, gap, pc, size, false, true});
    }
    void store_indirect(std::uint64_t addr, std::uint32_t pc, std::uint32_t gap, std::uint8_t size = 8) {
        out_.push(Access{addr, gap, pc, size, true, true});
    }
    // One read-modify-write instruction (x86's `xor m64, r64`): a load,
    // then the store that the same instruction makes.
    void update(std::uint64_t addr, std::uint32_t pc, std::uint32_t gap, std::uint8_t size = 8) {
        out_.push(Access{addr, gap, pc, size, false, false});
        out_.push(Access{addr, 0, pc, size, true, false, true});
    }

private:
    AccessBuffer& out_;
};

// One thread's share of a parallel loop: segments 0 .. segments-1, in
// order. An empty share (a thread with no iterations) emits nothing.
struct Share {
    std::uint64_t segments = 0;
    std::function<void(std::uint64_t segment, Emitter&)> emit;
};

// A share that runs body(i, emitter) for every i of `r` in order,
// `per_segment` iterations to a segment.
template <class Body>
Share each(Range r, std::uint64_t per_segment, Body body) {
    if (r.empty()) return {};
    const std::uint64_t segments = (r.size() + per_segment - 1) / per_segment;
    return {segments, [r, per_segment, body](std::uint64_t s, Emitter& e) {
                const std::uint64_t b = r.begin + s * per_segment;
                const std::uint64_t end = b + per_segment < r.end ? b + per_segment : r.end;
                for (std::uint64_t i = b; i < end; ++i) body(i, e);
            }};
}

// A thread's first touch of the bytes [begin, end) of an array: one store
// a line (64 B; the first and the last may be partial), as a vectorised
// fill or a read() into the array writes it. The init phases of kernels
// with large arrays use it: the unmeasured phase stays short while every
// page still gets its first touch from the thread that owns it.
inline constexpr std::uint64_t fill_line_bytes = 64;
Share fill_bytes(std::uint64_t begin, std::uint64_t end, std::uint32_t pc);
// The same first touch of [begin, end) emitted in place, within a segment
// (a row's part of an array, say).
void fill_range(Emitter& e, std::uint64_t begin, std::uint64_t end, std::uint32_t pc);

// The shares one after the other, as one share (a thread running several
// loops with no barrier between them, or one loop over several arrays).
Share concat(std::vector<Share> parts);

// A thread's stream over its share.
std::unique_ptr<AccessStream> share_stream(Share share);

// The share of rank `rank` of `threads` in one parallel loop. It must
// capture what it needs by value: streams may outlive the call that made
// them.
using ShareOf = std::function<Share(unsigned rank, unsigned threads)>;

// Grids with a boundary (or ghost) layer: `planes` planes, 0 and planes-1
// the boundary. interior_block: the interior planes 1 .. planes-2 of a
// loop over them, static_block-cut; owner_block: the same planes plus the
// boundary plane beside them (plane 0 to the thread holding plane 1, plane
// planes-1 to the one holding plane planes-2), for the loops over every
// plane (initialisation, pointwise updates), so that every plane has the
// same thread in every loop of a kernel.
Range interior_block(std::uint64_t planes, unsigned threads, unsigned rank);
Range owner_block(std::uint64_t planes, unsigned threads, unsigned rank);

class LoopKernel : public Workload {
public:
    std::string name() const override { return name_; }
    unsigned phases() const override { return static_cast<unsigned>(loops_.size()); }
    std::string phase_name(unsigned phase) const override { return loops_.at(phase).name; }
    bool measured(unsigned phase) const override { return loops_.at(phase).measured; }
    // One stream per rank of `layout`, rank r on its CPU: loop `phase`'s
    // share of rank r of layout.size() threads.
    std::vector<ThreadStream> streams(unsigned phase, const HierarchyPreset& p,
                                      const TeamLayout& layout) const override;

protected:
    explicit LoopKernel(std::string name) : name_(std::move(name)) {}
    // Appends a parallel loop, the next phase.
    void add_loop(std::string name, bool measured, ShareOf share);

private:
    struct Loop {
        std::string name;
        bool measured = true;
        ShareOf share;
    };
    std::string name_;
    std::vector<Loop> loops_;
};

}  // namespace numaware::sim::memory::detail
