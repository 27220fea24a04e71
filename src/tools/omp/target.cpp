// tools/omp/target.cpp — the device constructs and the device memory
// routines, on the one device the shim has: the host.
//
// omp_get_num_devices() is 0, so every device number a program can name
// validly is the initial device, and GCC's code for `target` regions runs
// there, as libgomp runs it when no offload device is present:
//   * a target region runs at once on the encountering thread, as the
//     initial thread of a new contention group: level 0, a league of one
//     team, thread-limit-var from the construct's thread_limit, the other
//     ICVs the host's initial ones (omp_set_num_threads before it does not
//     reach it, as under libgomp). Firstprivate variables are copied first,
//     so the region writes its copy, never the original;
//   * `nowait` makes the region a deferred task of the encountering team,
//     ordered by its `depend` clauses like any sibling task, carrying its
//     own copies of the address list and of the firstprivate variables (the
//     construct's arrays are gone when it runs); outside a parallel region
//     it runs at once, as libgomp runs it;
//   * a target region met inside an active parallel region (libgomp would
//     fork a new team for its parallel regions) runs its parallel regions
//     on one thread: the shim's task runtime has one seat per thread;
//   * `teams` inside a target region: the teams one after another, their
//     count the num_teams clause's lower bound (1 without the clause), as
//     libgomp's host fallback;
//   * data constructs (target data, enter/exit data, update) move nothing:
//     the host and its "device" share the memory. They wait for their
//     `depend` clauses' siblings;
//   * omp_target_alloc/free/memcpy/memcpy_rect/is_present work on the host
//     device and refuse any other as libgomp does (null, EINVAL, 0);
//     associating pointers is refused (EINVAL), as libgomp does for the
//     host.
// What is left in unsupported.cpp: registering device images (programs
// compiled with an offload compiler).
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "tools/omp/tasking.hpp"
#include "tools/omp/team.hpp"

namespace numaware::omp {
namespace {

// GCC's encoding (its gomp-constants.h): a map kind's low byte is the kind,
// the high byte of a 16-bit kind the log2 of the variable's alignment.
constexpr unsigned map_kind_mask = 0xff;
constexpr unsigned map_firstprivate = 12;   // GOMP_MAP_FIRSTPRIVATE: copied, not mapped
constexpr unsigned target_flag_nowait = 1u << 0;
// The target construct's launch arguments: a null-terminated list of
// identifiers, each with its value inline (bits 16 and up) or in the next
// element.
constexpr std::intptr_t arg_device_mask = (1 << 7) - 1;   // the device it is meant for
constexpr std::intptr_t arg_device_all = 0;
constexpr std::intptr_t arg_value_follows = 1 << 7;
constexpr std::intptr_t arg_id_mask = ((1 << 8) - 1) << 8;
constexpr std::intptr_t arg_thread_limit = 2 << 8;
constexpr int arg_value_shift = 16;

// The thread_limit that the construct passes in `args` (0: none).
unsigned thread_limit_arg(void** args) {
    if (args == nullptr) return 0;
    while (*args != nullptr) {
        const auto id = reinterpret_cast<std::intptr_t>(*args++);
        const std::intptr_t value = (id & arg_value_follows) ? reinterpret_cast<std::intptr_t>(*args++) : id >> arg_value_shift;
        if ((id & arg_device_mask) != arg_device_all || (id & arg_id_mask) != arg_thread_limit) continue;
        return value <= 0 ? 0 : static_cast<unsigned>(std::min<std::intptr_t>(value, INT_MAX));
    }
    return 0;
}

constexpr std::size_t round_up(std::size_t n, std::size_t align) { return (n + align - 1) / align * align; }

// A firstprivate variable's alignment, from its map kind's high byte.
std::size_t firstprivate_alignment(unsigned short kind) {
    const unsigned log2 = kind >> 8;
    if (log2 >= 24)
        fatal("GOMP_target_ext: a firstprivate variable asks for an alignment of 2^" + std::to_string(log2) +
              " bytes; at most 2^23 is supported");
    return std::size_t{1} << log2;
}

// fn(data) as the initial thread of a new contention group, on this thread;
// the encountering thread's state comes back afterwards.
void run_region(void (*fn)(void*), void* data, unsigned limit) {
    ThreadState& st = thread_state();
    const bool inside_team = st.active_level > 0 || st.serial_regions;
    auto team = std::make_unique<Team>();
    team->start(1);
    ThreadState outer = std::move(st);
    st = ThreadState{};
    st.nthreads_in_libgomp = false;   // a new contention group: the initial ICVs
    st.team = team.get();
    st.thread_limit = limit;
    st.serial_regions = inside_team;
    fn(data);
    leave_region(st);
    st = std::move(outer);
}

// A target region's launch as one block: the header, the address list,
// and the firstprivate variables' copies, at offsets from the block's start.
// A `nowait` region's task carries it (create_task copies the block to the
// task's own storage, where the offsets still resolve); a region that runs
// at once runs it in place.
struct TargetTask {
    void (*fn)(void*);
    std::size_t mapnum;
    unsigned limit;
    // then: void* addrs[mapnum]; std::size_t offsets[mapnum] (0: not a
    // copy); the copies
};

class TargetRegion {
public:
    TargetRegion(void (*fn)(void*), std::size_t mapnum, void* const* hostaddrs, const std::size_t* sizes,
                 const unsigned short* kinds, unsigned limit) {
        const std::size_t offsets_at = addrs_at + mapnum * sizeof(void*);
        std::size_t end = offsets_at + mapnum * sizeof(std::size_t);
        align_ = alignof(std::max_align_t);
        for (std::size_t i = 0; i < mapnum; ++i) {
            if ((kinds[i] & map_kind_mask) != map_firstprivate) continue;
            const std::size_t align = firstprivate_alignment(kinds[i]);
            end = round_up(end, align) + sizes[i];
            align_ = std::max(align_, align);
        }
        size_ = end;
        storage_ = std::make_unique<std::byte[]>(size_ + align_);
        block_ = storage_.get() + (align_ - reinterpret_cast<std::uintptr_t>(storage_.get()) % align_) % align_;
        new (block_) TargetTask{fn, mapnum, limit};
        auto* addrs = reinterpret_cast<void**>(block_ + addrs_at);
        auto* offsets = reinterpret_cast<std::size_t*>(block_ + offsets_at);
        std::size_t at = offsets_at + mapnum * sizeof(std::size_t);
        for (std::size_t i = 0; i < mapnum; ++i) {
            addrs[i] = hostaddrs[i];
            offsets[i] = 0;
            if ((kinds[i] & map_kind_mask) != map_firstprivate) continue;
            at = round_up(at, firstprivate_alignment(kinds[i]));
            if (sizes[i] > 0) std::memcpy(block_ + at, hostaddrs[i], sizes[i]);
            offsets[i] = at;
            at += sizes[i];
        }
    }
    void* data() const { return block_; }
    long size() const { return static_cast<long>(size_); }
    long align() const { return static_cast<long>(align_); }

    // Runs the region of the block at `arg`, wherever it was copied to
    // (a task's body).
    static void run(void* arg) {
        auto* block = static_cast<std::byte*>(arg);
        const auto* head = static_cast<const TargetTask*>(arg);
        auto* addrs = reinterpret_cast<void**>(block + addrs_at);
        const auto* offsets = reinterpret_cast<const std::size_t*>(block + addrs_at + head->mapnum * sizeof(void*));
        for (std::size_t i = 0; i < head->mapnum; ++i)
            if (offsets[i] != 0) addrs[i] = block + offsets[i];
        run_region(head->fn, addrs, head->limit);
    }

private:
    static constexpr std::size_t addrs_at = round_up(sizeof(TargetTask), alignof(void*));
    std::unique_ptr<std::byte[]> storage_;
    std::byte* block_ = nullptr;
    std::size_t size_ = 0, align_ = 1;
};

// The host device's numbers: the initial device (omp_get_initial_device(),
// which equals omp_get_num_devices()), and omp_initial_device (-1, OpenMP 5.2).
bool is_host(int device) { return device == 0 || device == -1; }

// The thread-limit-var that a `teams` region inside a target region
// replaced, for its last GOMP_teams4 call to put back.
thread_local unsigned t_limit_before_teams = 0;

}  // namespace
}  // namespace numaware::omp

using namespace numaware::omp;

#pragma GCC visibility push(default)   // the entry points: exports.map keeps only these
extern "C" {

// ---- target regions
// The OpenMP 4.0 entry point (objects built by GCC 4.9): no firstprivate
// copies, no launch arguments.
void GOMP_target(int /*device*/, void (*fn)(void*), const void* /*unused*/, std::size_t /*mapnum*/, void** hostaddrs,
                 std::size_t* /*sizes*/, unsigned char* /*kinds*/) {
    run_region(fn, hostaddrs, 0);
}

void GOMP_target_ext(int /*device*/, void (*fn)(void*), std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                     unsigned short* kinds, unsigned flags, void** depend, void** args) {
    const TargetRegion region(fn, mapnum, hostaddrs, sizes, kinds, thread_limit_arg(args));
    if (flags & target_flag_nowait) {
        create_task(TaskArgs{.fn = &TargetRegion::run, .data = region.data(), .cpyfn = nullptr,
                             .arg_size = region.size(), .arg_align = region.align(), .undeferred = false,
                             .final = false, .depend = depend});
        return;
    }
    if (depend != nullptr) wait_depend(depend);
    TargetRegion::run(region.data());
}

// ---- teams inside a target region
// OpenMP 4.5 (GCC before 12): only the thread limit; one team.
void GOMP_teams(unsigned /*num_teams*/, unsigned thread_limit) {
    if (thread_limit) thread_state().thread_limit = std::min<unsigned>(thread_limit, INT_MAX);
}

// GCC 12: the teams body runs while this returns true; `first` starts the
// league.
bool GOMP_teams4(unsigned num_teams_low, unsigned /*num_teams_high*/, unsigned thread_limit, bool first) {
    ThreadState& st = thread_state();
    if (first) {
        t_limit_before_teams = st.thread_limit;
        if (thread_limit) st.thread_limit = std::min<unsigned>(thread_limit, INT_MAX);
        st.league_size = std::max(num_teams_low, 1u);
        st.league_num = 0;
        return true;
    }
    if (st.league_num + 1 < st.league_size) {
        ++st.league_num;
        return true;
    }
    st.league_size = 1;
    st.league_num = 0;
    st.thread_limit = t_limit_before_teams;
    return false;
}

// ---- data constructs: nothing to move
void GOMP_target_data(int /*device*/, const void* /*unused*/, std::size_t /*mapnum*/, void** /*hostaddrs*/,
                      std::size_t* /*sizes*/, unsigned char* /*kinds*/) {}
void GOMP_target_data_ext(int /*device*/, std::size_t /*mapnum*/, void** /*hostaddrs*/, std::size_t* /*sizes*/,
                          unsigned short* /*kinds*/) {}
void GOMP_target_end_data(void) {}
void GOMP_target_update(int /*device*/, const void* /*unused*/, std::size_t /*mapnum*/, void** /*hostaddrs*/,
                        std::size_t* /*sizes*/, unsigned char* /*kinds*/) {}
void GOMP_target_update_ext(int /*device*/, std::size_t /*mapnum*/, void** /*hostaddrs*/, std::size_t* /*sizes*/,
                            unsigned short* /*kinds*/, unsigned /*flags*/, void** depend) {
    if (depend != nullptr) wait_depend(depend);
}
void GOMP_target_enter_exit_data(int /*device*/, std::size_t /*mapnum*/, void** /*hostaddrs*/, std::size_t* /*sizes*/,
                                 unsigned short* /*kinds*/, unsigned /*flags*/, void** depend) {
    if (depend != nullptr) wait_depend(depend);
}

// ---- device memory routines
void* omp_target_alloc(std::size_t size, int device_num) { return is_host(device_num) ? std::malloc(size) : nullptr; }

void omp_target_free(void* ptr, int device_num) {
    if (is_host(device_num)) std::free(ptr);
}

int omp_target_is_present(const void* ptr, int device_num) { return ptr == nullptr || is_host(device_num) ? 1 : 0; }

int omp_target_memcpy(void* dst, const void* src, std::size_t length, std::size_t dst_offset, std::size_t src_offset,
                      int dst_device_num, int src_device_num) {
    if (!is_host(dst_device_num) || !is_host(src_device_num)) return EINVAL;
    if (length > 0) std::memmove(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset, length);
    return 0;
}

}  // extern "C"
#pragma GCC visibility pop

namespace numaware::omp {
namespace {

// One dimension after another: dimension 0 varies slowest.
void copy_rect(char* dst, const char* src, std::size_t element_size, int dims, const std::size_t* volume,
               const std::size_t* dst_offsets, const std::size_t* src_offsets, const std::size_t* dst_dimensions,
               const std::size_t* src_dimensions) {
    if (dims == 1) {
        std::memmove(dst + dst_offsets[0] * element_size, src + src_offsets[0] * element_size, volume[0] * element_size);
        return;
    }
    // The bytes of one step along dimension 0: the product of the rest.
    std::size_t dst_step = element_size, src_step = element_size;
    for (int d = 1; d < dims; ++d) {
        dst_step *= dst_dimensions[d];
        src_step *= src_dimensions[d];
    }
    for (std::size_t k = 0; k < volume[0]; ++k)
        copy_rect(dst + (dst_offsets[0] + k) * dst_step, src + (src_offsets[0] + k) * src_step, element_size, dims - 1,
                  volume + 1, dst_offsets + 1, src_offsets + 1, dst_dimensions + 1, src_dimensions + 1);
}

}  // namespace
}  // namespace numaware::omp

#pragma GCC visibility push(default)
extern "C" {

int omp_target_memcpy_rect(void* dst, const void* src, std::size_t element_size, int num_dims,
                           const std::size_t* volume, const std::size_t* dst_offsets, const std::size_t* src_offsets,
                           const std::size_t* dst_dimensions, const std::size_t* src_dimensions, int dst_device_num,
                           int src_device_num) {
    // Both null: the number of dimensions supported.
    if (dst == nullptr && src == nullptr) return INT_MAX;
    if (dst == nullptr || src == nullptr || num_dims < 1) return EINVAL;
    if (!is_host(dst_device_num) || !is_host(src_device_num)) return EINVAL;
    copy_rect(static_cast<char*>(dst), static_cast<const char*>(src), element_size, num_dims, volume, dst_offsets,
              src_offsets, dst_dimensions, src_dimensions);
    return 0;
}

// The host's memory is the "device's": no pointer is associated.
int omp_target_associate_ptr(const void* /*host_ptr*/, const void* /*device_ptr*/, std::size_t /*size*/,
                             std::size_t /*device_offset*/, int /*device_num*/) {
    return EINVAL;
}
int omp_target_disassociate_ptr(const void* /*ptr*/, int /*device_num*/) { return EINVAL; }

}  // extern "C"
#pragma GCC visibility pop
