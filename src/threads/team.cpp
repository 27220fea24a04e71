// threads/team.cpp — the mechanism half of the threads layer: start the
// planned threads, pin them, hand them work, wait for them.
//
// Kept deliberately plain (one mutex, condition variables, a generation
// counter) so that ThreadSanitizer can check every hand-off; a team's job
// is to place work, not to be the fastest barrier in town.
#include <cstring>
#include <exception>
#include <mutex>
#include <condition_variable>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"

namespace numaware {

namespace {

// Thrown out of barrier() on ranks whose peer's work threw, so they unwind
// instead of waiting forever. Deliberately not a std::exception: user code
// that catches std::exception must not swallow it.
struct RunAborted {};

// The team whose work the calling thread is running, to refuse a nested
// run() that would wait for itself.
thread_local const void* t_running_team = nullptr;

}  // namespace

// A reusable barrier that can be broken. Generation counting makes it
// reusable: a waiter leaves when the generation it arrived in has ended,
// so a fast rank re-entering the next barrier cannot be confused with a
// slow one leaving the previous.
struct TeamContext::Sync {
    explicit Sync(std::size_t n) : parties(n) {}

    void wait() {
        std::unique_lock lock(mutex);
        if (broken) throw RunAborted{};
        const std::uint64_t mine = generation;
        if (++arrived == parties) {
            arrived = 0;
            ++generation;
            released.notify_all();
            return;
        }
        released.wait(lock, [&] { return generation != mine || broken; });
        if (generation == mine) throw RunAborted{};
    }

    void break_all() {
        {
            std::lock_guard lock(mutex);
            broken = true;
        }
        released.notify_all();
    }

    // Only between runs, when no rank is inside wait().
    void reset() {
        std::lock_guard lock(mutex);
        arrived = 0;
        broken = false;
    }

    std::mutex mutex;
    std::condition_variable released;
    const std::size_t parties;
    std::size_t arrived = 0;
    std::uint64_t generation = 0;
    bool broken = false;
};

void TeamContext::barrier() const { sync_->wait(); }

struct Team::Impl {
    Impl(const Machine& m, TeamLayout planned)
        : machine(m), layout(std::move(planned)), sync(layout.size()), pin_status(layout.size(), 0) {}

    void worker(unsigned rank, os::Os& os);
    void stop_and_join();

    const Machine machine;
    const TeamLayout layout;
    TeamContext::Sync sync;

    std::mutex mutex;                 // guards everything below
    std::condition_variable wake;     // workers wait here for a round or stop
    std::condition_variable settled;  // the owner waits here for pins / round end
    std::vector<int> pin_status;      // per rank: 0 or the kernel's errno
    std::size_t pins_reported = 0;
    std::uint64_t round = 0;
    bool stopping = false;
    const std::function<void(TeamContext&)>* job = nullptr;
    std::size_t running = 0;
    std::exception_ptr first_error;

    std::mutex run_mutex;             // one run() at a time
    std::vector<std::thread> threads;
};

void Team::Impl::worker(unsigned rank, os::Os& os) {
    const RankPlace place = layout.ranks[rank];
    // Pin before doing anything else, so no work and no first touch ever
    // happens on the wrong CPU.
    const int rc = os.set_affinity(0, {place.cpu});
    {
        std::lock_guard lock(mutex);
        pin_status[rank] = rc;
        ++pins_reported;
    }
    settled.notify_all();
    if (rc != 0) return;   // the constructor stops the team and throws

    TeamContext ctx(place, layout.size(), &sync);
    std::uint64_t seen = 0;
    for (;;) {
        const std::function<void(TeamContext&)>* fn = nullptr;
        {
            std::unique_lock lock(mutex);
            wake.wait(lock, [&] { return stopping || round != seen; });
            if (stopping) return;
            seen = round;
            fn = job;
        }
        t_running_team = this;
        try {
            (*fn)(ctx);
        } catch (const RunAborted&) {
            // A peer failed; its exception is the one run() reports.
        } catch (...) {
            {
                std::lock_guard lock(mutex);
                if (!first_error) first_error = std::current_exception();
            }
            sync.break_all();
        }
        t_running_team = nullptr;
        bool last = false;
        {
            std::lock_guard lock(mutex);
            last = --running == 0;
        }
        if (last) settled.notify_all();
    }
}

void Team::Impl::stop_and_join() {
    {
        std::lock_guard lock(mutex);
        stopping = true;
    }
    wake.notify_all();
    for (std::thread& t : threads)
        if (t.joinable()) t.join();
    threads.clear();
}

Team::Team(const Machine& machine, const TeamMapping& mapping)
    : Team(machine, mapping, os::linux_os()) {}

Team::Team(const Machine& machine, const TeamMapping& mapping, os::Os& os)
    : impl_(std::make_unique<Impl>(machine, plan_team(machine, mapping))) {
    Impl& im = *impl_;
    const std::size_t n = im.layout.size();
    im.threads.reserve(n);
    try {
        for (unsigned r = 0; r < n; ++r) im.threads.emplace_back(&Impl::worker, &im, r, std::ref(os));
    } catch (...) {
        // Thread creation failed part way: wait for the ones that started
        // so none outlives this constructor, then report.
        im.stop_and_join();
        throw;
    }
    std::size_t failed = n;
    {
        std::unique_lock lock(im.mutex);
        im.settled.wait(lock, [&] { return im.pins_reported == n; });
        for (std::size_t r = 0; r < n && failed == n; ++r)
            if (im.pin_status[r] != 0) failed = r;
    }
    if (failed != n) {
        const RankPlace p = im.layout.ranks[failed];
        const int err = im.pin_status[failed];
        im.stop_and_join();
        throw Error(fmt::format("cpu {}", p.cpu),
                    fmt::format("cannot pin rank {} to CPU {} (node {}): {}", p.rank, p.cpu, p.node,
                                std::strerror(err)),
                    err);
    }
}

Team::~Team() {
    if (impl_) impl_->stop_and_join();
}

void Team::run(const std::function<void(TeamContext&)>& fn) {
    Impl& im = *impl_;
    if (t_running_team == &im)
        throw Error("run", "called from inside this team's own work; it would wait for itself");
    if (!fn) throw Error("run", "empty function");
    std::lock_guard one_at_a_time(im.run_mutex);
    im.sync.reset();
    {
        std::lock_guard lock(im.mutex);
        im.job = &fn;
        im.first_error = nullptr;
        im.running = im.layout.size();
        ++im.round;
    }
    im.wake.notify_all();
    std::exception_ptr error;
    {
        std::unique_lock lock(im.mutex);
        im.settled.wait(lock, [&] { return im.running == 0; });
        im.job = nullptr;
        error = std::exchange(im.first_error, nullptr);
    }
    if (error) std::rethrow_exception(error);
}

std::size_t Team::size() const { return impl_->layout.size(); }

const TeamLayout& Team::layout() const { return impl_->layout; }
const Machine& Team::machine() const { return impl_->machine; }

}  // namespace numaware
