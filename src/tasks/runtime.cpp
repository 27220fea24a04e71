// tasks/runtime.cpp — numaware/tasks.hpp's Runtime: the facade. It checks
// arguments, names what is wrong, and hands the work to the executor
// (executor.hpp, which lists the objects of a run and how they fit).
#include <algorithm>
#include <limits>
#include <string>
#include <thread>

#include "numaware/error.hpp"
#include "numaware/tasks.hpp"
#include "os/os.hpp"
#include "tasks/executor.hpp"

namespace numaware::tasks {

using detail::tls;

// The executor, by the name the public header gives it (hidden as it is).
struct __attribute__((visibility("hidden"))) Runtime::Impl : detail::Executor {
    using Executor::Executor;
};

namespace {

std::string node_list(const std::vector<unsigned>& nodes) {
    std::string s;
    for (unsigned n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
    return s;
}

}  // namespace

Runtime::Runtime(Team& team, std::unique_ptr<Policy> policy, RuntimeOptions options) {
    if (!policy) throw Error("policy", "is null; pass a policy (make_policy()) or a policy name");
    impl_ = std::make_unique<Impl>(&team, team.machine(), team.layout(), std::move(policy), options, os::linux_os());
    impl_->start();
}

Runtime::Runtime(const Machine& machine, const TeamLayout& layout, std::unique_ptr<Policy> policy,
                 RuntimeOptions options) {
    if (!policy) throw Error("policy", "is null; pass a policy (make_policy()) or a policy name");
    if (layout.ranks.empty()) throw Error("layout", "has no ranks; a runtime needs at least one worker");
    for (std::size_t r = 0; r < layout.ranks.size(); ++r) {
        const RankPlace& p = layout.ranks[r];
        if (p.rank != r) throw Error("layout", "rank " + std::to_string(r) + " is numbered " + std::to_string(p.rank));
        if (!std::any_of(machine.nodes.begin(), machine.nodes.end(),
                         [&](const Node& n) { return n.os_index == p.node; }))
            throw Error("layout", "rank " + std::to_string(r) + " is on node " + std::to_string(p.node) +
                                      ", which is not a node of the machine");
    }
    if (options.held_stall.count() < 0)
        throw Error("held_stall", std::to_string(options.held_stall.count()) + " us is negative; 0 or more");
    impl_ = std::make_unique<Impl>(nullptr, machine, layout, std::move(policy), options, os::linux_os());
    impl_->start();
}

Runtime::Runtime(Team& team, std::string_view policy, const PolicyOptions& policy_options, RuntimeOptions options)
    : Runtime(team, make_policy(policy, policy_options), options) {}

Runtime::~Runtime() {
    if (!impl_) return;
    impl_->shutdown();
    while (impl_->fulfilling.load(std::memory_order_acquire) != 0) std::this_thread::yield();   // see fulfill()
}

TaskId Runtime::submit(detail::TaskFn fn, std::span<const Dep> deps, int hint, Group* group) {
    if (!fn) throw Error("fn", "is empty; a task needs a callable");
    return impl_->submit(std::move(fn), deps, hint, group != nullptr ? &group->state() : nullptr);
}

int Runtime::checked_node(unsigned node) const {
    const auto& nodes = impl_->ctx.nodes;
    if (!std::binary_search(nodes.begin(), nodes.end(), node))
        throw Error("node", "node " + std::to_string(node) + " has no workers in this runtime (nodes with workers: " +
                                node_list(nodes) + ")");
    return static_cast<int>(node);
}

void Runtime::taskwait() { impl_->taskwait(); }

void Runtime::barrier() {
    if (tls.rt == impl_.get() && tls.current != nullptr)
        throw Error("barrier", "called from inside a task; a task waits for its children with taskwait()");
    impl_->wait_all();
    impl_->rethrow_runtime_error();
}

void Runtime::register_region(const void* addr, std::size_t bytes, unsigned node) {
    if (addr == nullptr) throw Error("addr", "is null; register a non-empty range");
    if (bytes == 0) throw Error("bytes", "is 0; register a non-empty range");
    const auto start = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(addr));
    if (bytes > std::numeric_limits<std::uint64_t>::max() - start)
        throw Error("bytes", std::to_string(bytes) + " bytes from this address wrap around the address space");
    const Machine& m = impl_->machine;
    const bool known = std::any_of(m.nodes.begin(), m.nodes.end(), [&](const Node& n) { return n.os_index == node; });
    if (!known) {
        std::vector<unsigned> all;
        for (const Node& n : m.nodes) all.push_back(n.os_index);
        throw Error("node", "node " + std::to_string(node) + " is not a node of the runtime's machine (nodes: " +
                                node_list(all) + ")");
    }
    m.check_placement_target(node, "node");
    std::lock_guard g(impl_->sched);
    impl_->region_homes.register_range(start, bytes, node);
}

RunReport Runtime::report() const { return impl_->report(); }
void Runtime::reset_metrics() { impl_->reset_metrics(); }
const TaskGraph& Runtime::graph() const { return impl_->graph; }
std::size_t Runtime::workers() const { return impl_->workers.size(); }
const std::vector<unsigned>& Runtime::nodes() const { return impl_->ctx.nodes; }
std::string_view Runtime::policy_name() const { return impl_->policy->name(); }

// ---- hosted workers -------------------------------------------------------------
namespace {
void check_hosted(const detail::Executor& ex, const char* what) {
    if (ex.team != nullptr)
        throw Error(what, "this runtime's workers are its team's threads; only a runtime built on a layout "
                          "(hosted workers) lets threads take their seats");
}
}  // namespace

void Runtime::host(unsigned worker) {
    check_hosted(*impl_, "host");
    if (worker >= impl_->workers.size())
        throw Error("worker", "worker " + std::to_string(worker) + " does not exist; this runtime has " +
                                  std::to_string(impl_->workers.size()) + " (0 to " +
                                  std::to_string(impl_->workers.size() - 1) + ")");
    if (tls.rt != nullptr && (tls.rt != impl_.get() || tls.worker->id != worker))
        throw Error("host", "the calling thread already has a worker's seat; unhost() first");
    tls = detail::Tls{impl_.get(), impl_->workers[worker].get(), nullptr};
}

void Runtime::unhost() {
    check_hosted(*impl_, "unhost");
    if (tls.rt == impl_.get()) {
        if (tls.current != nullptr) throw Error("unhost", "called from inside a task");
        tls = detail::Tls{};
    }
}

Runtime::SetAside Runtime::set_seat_aside() noexcept {
    SetAside s;
    s.rt_ = tls.rt;
    s.worker_ = tls.worker;
    s.current_ = tls.current;
    tls = detail::Tls{};
    return s;
}

void Runtime::restore_seat(const SetAside& seat) {
    if (!seat) return;
    if (tls.rt != nullptr)
        throw Error("restore_seat", "the calling thread holds a seat; it must leave it (unhost()) first");
    tls = detail::Tls{static_cast<const detail::Executor*>(seat.rt_), static_cast<detail::Worker*>(seat.worker_),
                      static_cast<detail::Task*>(seat.current_)};
}

void Runtime::run_until(bool (*done)(void*), void* arg, Sleep sleep) {
    check_hosted(*impl_, "run_until");
    if (done == nullptr) throw Error("done", "is null; run_until needs a condition");
    if (tls.rt != impl_.get() || tls.worker == nullptr)
        throw Error("run_until", "the calling thread has no worker's seat in this runtime; call host() first");
    tls.worker->wait_hosted(done, arg, sleep == Sleep::allowed);
}

std::size_t Runtime::help(std::size_t max_tasks) {
    check_hosted(*impl_, "help");
    if (tls.rt != impl_.get() || tls.worker == nullptr)
        throw Error("help", "the calling thread has no worker's seat in this runtime; call host() first");
    if (impl_->policy_may_hold || max_tasks == 0) return 0;
    return tls.worker->run_ready(max_tasks);
}

void Runtime::wake() { impl_->wake_workers(); }

std::uintptr_t Runtime::detach() {
    if (tls.rt != impl_.get() || tls.current == nullptr)
        throw Error("detach", "called outside a task of this runtime; only a running task can detach itself");
    detail::Task* t = tls.current;
    std::uint32_t none = 0;
    if (!t->detach_pending.compare_exchange_strong(none, 2, std::memory_order_acq_rel))
        throw Error("detach", "task " + std::to_string(t->id) + " is detached already");
    return reinterpret_cast<std::uintptr_t>(t);
}

void Runtime::fulfill(std::uintptr_t token) {
    auto* t = reinterpret_cast<detail::Task*>(token);
    if (t->detach_pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;   // its body completes it
    if (tls.rt == impl_.get() && tls.worker != nullptr) {
        tls.worker->complete_fulfilled(t);
        return;
    }
    // Once the task is handed over it may complete, the last wait return
    // and the runtime be destroyed: `fulfilling` keeps the destructor
    // waiting until this thread has woken the workers.
    impl_->fulfilling.fetch_add(1, std::memory_order_acq_rel);
    {
        std::lock_guard g(impl_->fulfilled_mutex);
        impl_->fulfilled.push_back(t);
        impl_->fulfilled_count.store(impl_->fulfilled.size(), std::memory_order_release);
    }
    impl_->wake_workers();
    impl_->fulfilling.fetch_sub(1, std::memory_order_release);
}

bool Runtime::quiescent() const { return impl_->quiescent(); }
std::uint64_t Runtime::unfinished() const { return impl_->unfinished(); }

std::uint16_t Runtime::open_scope() {
    std::lock_guard g(impl_->scope_mutex);
    auto& ex = *impl_;
    if (!ex.free_scopes.empty()) {
        const std::uint16_t s = ex.free_scopes.front();
        ex.free_scopes.pop_front();
        return s;
    }
    if (ex.scopes_made == 0xffff)
        throw Error("scope", "65,535 dependency scopes are open; close the scopes whose tasks have finished");
    return ++ex.scopes_made;
}

void Runtime::close_scope(std::uint16_t scope) {
    std::lock_guard g(impl_->scope_mutex);
    if (scope == 0 || scope > impl_->scopes_made)
        throw Error("scope", "scope " + std::to_string(scope) + " was never opened");
    impl_->free_scopes.push_back(scope);
}

int Runtime::current_worker() {
    return tls.current != nullptr && tls.worker != nullptr ? static_cast<int>(tls.worker->id) : -1;
}

// ---- groups -------------------------------------------------------------------
Runtime::Group::Group(Runtime& rt) : rt_(rt), state_(std::make_unique<State>()) {}

Runtime::Group::~Group() {
    try {
        wait();
    } catch (...) {
    }
}

void Runtime::Group::wait() { rt_.impl_->wait_group(*state_); }

}  // namespace numaware::tasks
