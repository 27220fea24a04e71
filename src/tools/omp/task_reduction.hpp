// tools/omp/task_reduction.hpp — task reductions as GCC lowers them: the
// descriptors its code builds for `taskgroup task_reduction`, `taskloop
// reduction`, and `reduction(task, ...)` on parallel and worksharing
// constructs, and the lookup that GOMP_task_reduction_remap answers
// (task_reduction.cpp). Plain data and no runtime: the entry points
// (gomp_task.cpp, gomp_parallel.cpp, gomp_loop.cpp) find the descriptor of
// the calling task's taskgroup and call these.
//
// A descriptor is an array of words that GCC fills in, one per reduction
// clause set, chained through word 4:
//   [0] count of list items      [1] bytes of one thread's copies
//   [2] alignment in, on output the copies' array (thread t's at [2] + t·[1])
//   [3] allocator (not used)     [4] the next descriptor of the chain
//   [5] this runtime's lookup    [6] the end of the copies' array
//   then per item: the original's address, its copy's offset within a
//   thread's copies (ascending), and a word for the runtime.
// GCC's code zeroes nothing and reads word 2 back to initialise and
// combine the copies of every thread (the copies start zeroed: a flag in
// them says which threads touched them).
#pragma once

#include <cstddef>
#include <cstdint>

namespace numaware::omp {

// Registers the chain `data` for a team of `threads`: gives each
// descriptor its copies (zeroed, aligned as word 2 asks), or, with `orig`
// (a worksharing construct's follower), the copies of the first thread's
// chain `orig`, and chains `outer` (the enclosing registration, or null)
// behind it, so that a lookup also finds the outer items. Throws
// numaware::Error naming the bad word (an alignment not a power of two, a
// size that overflows) or the allocation that failed; then nothing is
// registered and no memory is kept.
void register_task_reductions(std::uintptr_t* data, std::uintptr_t* outer, const std::uintptr_t* orig,
                              unsigned threads);

// Undoes register_task_reductions(): the lookup, and with `free_copies`
// the copies of every descriptor of `data`'s own chain (the thread that
// registered without `orig`, or thread 0 of a worksharing construct).
void unregister_task_reductions(std::uintptr_t* data, bool free_copies);

// GOMP_task_reduction_remap: ptrs[0..cnt) hold original items' addresses,
// or addresses inside some thread's copies; each becomes the address of
// thread `thread`'s copy of that item. For i < cntorig, ptrs[cnt + i]
// receives the original's address too. Throws numaware::Error naming the
// address when `data` (the innermost registration) does not know it.
void remap_task_reductions(const std::uintptr_t* data, unsigned thread, std::size_t cnt, std::size_t cntorig,
                           void** ptrs);

}  // namespace numaware::omp
