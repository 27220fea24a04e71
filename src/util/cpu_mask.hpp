// util/cpu_mask.hpp — reading a thread's CPU affinity whatever the number of
// CPUs the kernel allows for (header-only).
#pragma once

#include <sched.h>

#include <cerrno>
#include <vector>

namespace numaware {

// The CPUs of an affinity mask read by `read(bytes, set)` (a
// sched_getaffinity of one thread: 0 or an errno value). The kernel
// refuses a buffer shorter than its possible CPUs (nr_cpu_ids) with
// EINVAL: a cpu_set_t holds 1,024, and a machine or a kernel command line
// (possible_cpus=) may allow more, so the buffer starts there and doubles
// up to 2^20 CPUs. Returns 0 and fills `cpus`, or the error.
template <class Read>
int read_cpu_mask(Read&& read, std::vector<unsigned>& cpus) {
    for (int ncpus = 1024; ncpus <= (1 << 20); ncpus *= 2) {
        cpu_set_t* set = CPU_ALLOC(ncpus);
        if (set == nullptr) return ENOMEM;
        const std::size_t size = CPU_ALLOC_SIZE(ncpus);
        CPU_ZERO_S(size, set);
        const int err = read(size, set);
        if (err == 0) {
            cpus.clear();
            for (int c = 0; c < ncpus; ++c)
                if (CPU_ISSET_S(c, size, set)) cpus.push_back(static_cast<unsigned>(c));
            CPU_FREE(set);
            return 0;
        }
        CPU_FREE(set);
        if (err != EINVAL) return err;
    }
    return EINVAL;
}

}  // namespace numaware
