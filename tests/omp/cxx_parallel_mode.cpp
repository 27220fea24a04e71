// tests/omp/cxx_parallel_mode.cpp — OpenMP code that a C++ programmer did
// not write: libstdc++'s parallel mode, which `g++ -fopenmp
// -D_GLIBCXX_PARALLEL` puts behind the standard algorithms of an unchanged
// program. Its headers fork teams with num_threads clauses and nest
// regions, use single, barrier, dynamic loops, atomics, omp_lock_t and
// omp_get_* calls, and steal work between threads (for_each's balanced
// mode, the balanced quicksort). Every algorithm is forced parallel, and
// each runs under every parallel strategy the library offers where it
// names them (sort's tags, for_each's _Parallelism values). Printed:
// results that do not depend on the order in which threads meet (sorted
// arrays, counts, positions, sums of integers), compared with libgomp's
// output at the same thread count by run_suite.sh.
#include <parallel/algorithm>
#include <parallel/numeric>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

namespace {

using Vec = std::vector<std::uint64_t>;

std::uint64_t digest(const Vec& v) {
    std::uint64_t h = v.size();
    for (std::uint64_t x : v) h = (h ^ x) * 0x100000001b3ull;
    return h;
}

void line(const char* what, std::uint64_t value) { std::printf("%s %llu\n", what, static_cast<unsigned long long>(value)); }

}  // namespace

int main() {
    __gnu_parallel::_Settings s = __gnu_parallel::_Settings::get();
    s.algorithm_strategy = __gnu_parallel::force_parallel;
    __gnu_parallel::_Settings::set(s);

    std::mt19937_64 gen(11);
    Vec v(200000);
    for (auto& x : v) x = gen() % 50000;   // duplicates: stable and unstable sorts differ in order, not in values
    const std::less<std::uint64_t> less;

    // ---- sorts, under each strategy ----
    Vec sorted = v;
    std::sort(sorted.begin(), sorted.end());
    line("sort", digest(sorted));
    const auto sort_with = [&](const char* what, auto tag) {
        Vec a = v;
        std::sort(a.begin(), a.end(), less, tag);
        line(what, digest(a));
    };
    sort_with("sort-balanced-quicksort", __gnu_parallel::balanced_quicksort_tag());
    sort_with("sort-quicksort", __gnu_parallel::quicksort_tag());
    sort_with("sort-mergesort-exact", __gnu_parallel::multiway_mergesort_exact_tag());
    sort_with("sort-mergesort-sampling", __gnu_parallel::multiway_mergesort_sampling_tag());
    sort_with("sort-3-threads", __gnu_parallel::default_parallel_tag(3));   // three threads, asked for
    {
        // Stable: pairs (key, position) keep their positions' order.
        std::vector<std::pair<std::uint64_t, std::uint64_t>> p(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) p[i] = {v[i] % 1000, i};
        std::stable_sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        std::uint64_t h = 0;
        for (const auto& [k, i] : p) h = (h ^ (k << 32 | i)) * 0x100000001b3ull;
        line("stable_sort", h);
    }
    {
        Vec a = v;
        std::partial_sort(a.begin(), a.begin() + 1000, a.end());
        line("partial_sort", digest(Vec(a.begin(), a.begin() + 1000)));
        a = v;
        std::nth_element(a.begin(), a.begin() + a.size() / 3, a.end());
        line("nth_element", a[a.size() / 3] == sorted[sorted.size() / 3] ? 1 : 0);
    }

    // ---- for_each under each _Parallelism, and transform ----
    const __gnu_parallel::_Parallelism modes[] = {
        __gnu_parallel::parallel_unbalanced, __gnu_parallel::parallel_balanced, __gnu_parallel::parallel_omp_loop,
        __gnu_parallel::parallel_omp_loop_static};
    for (const __gnu_parallel::_Parallelism m : modes) {
        Vec a = v;
        std::for_each(a.begin(), a.end(), [](std::uint64_t& x) { x = x * x + 7; }, m);
        std::printf("for_each-mode-%d %llu\n", static_cast<int>(m), static_cast<unsigned long long>(digest(a)));
    }
    {
        Vec t(v.size());
        std::transform(v.begin(), v.end(), t.begin(), [](std::uint64_t x) { return 3 * x + 1; });
        line("transform", digest(t));
        std::transform(v.begin(), v.end(), sorted.begin(), t.begin(), std::plus<std::uint64_t>());
        line("transform-binary", digest(t));
    }

    // ---- reductions and scans (integers: any order gives the same sum) ----
    line("accumulate", std::accumulate(v.begin(), v.end(), std::uint64_t{0}));
    line("inner_product", std::inner_product(v.begin(), v.end(), sorted.begin(), std::uint64_t{0}));
    {
        Vec ps(v.size());
        std::partial_sum(v.begin(), v.end(), ps.begin());
        line("partial_sum", digest(ps));
        Vec d(v.size());
        std::adjacent_difference(sorted.begin(), sorted.end(), d.begin());
        line("adjacent_difference", digest(d));
    }
    line("count", static_cast<std::uint64_t>(std::count(v.begin(), v.end(), v[777])));
    line("count_if", static_cast<std::uint64_t>(std::count_if(v.begin(), v.end(), [](std::uint64_t x) { return x % 7 == 0; })));
    // Values: which of several equal extremes is returned is the threads'.
    line("max_element", *std::max_element(v.begin(), v.end()));
    line("min_element", *std::min_element(v.begin(), v.end()));

    // ---- searches: the first match wins whichever thread finds one ----
    line("find", static_cast<std::uint64_t>(std::find(v.begin(), v.end(), v[150000]) - v.begin()));
    line("find_if", static_cast<std::uint64_t>(std::find_if(v.begin(), v.end(), [](std::uint64_t x) { return x == 49999; }) - v.begin()));
    {
        const Vec pattern(sorted.begin() + 120000, sorted.begin() + 120005);
        line("search", static_cast<std::uint64_t>(std::search(sorted.begin(), sorted.end(), pattern.begin(), pattern.end()) - sorted.begin()));
        Vec b = v;
        b[123456] += 1;
        line("mismatch", static_cast<std::uint64_t>(std::mismatch(v.begin(), v.end(), b.begin()).first - v.begin()));
        line("equal", std::equal(v.begin(), v.end(), b.begin()) ? 1 : 0);
        line("adjacent_find", static_cast<std::uint64_t>(std::adjacent_find(sorted.begin(), sorted.end()) - sorted.begin()));
        line("lexicographical_compare", std::lexicographical_compare(v.begin(), v.end(), b.begin(), b.end()) ? 1 : 0);
    }

    // ---- merges and set operations on sorted ranges ----
    {
        Vec shifted = sorted;
        for (auto& x : shifted) x += 3;
        // OP(first1, last1, first2, last2, out) into room for both ranges.
        const auto combined = [&](const char* what, auto op) {
            Vec out(sorted.size() + shifted.size());
            out.resize(static_cast<std::size_t>(
                op(sorted.begin(), sorted.end(), shifted.begin(), shifted.end(), out.begin()) - out.begin()));
            line(what, digest(out));
        };
        using It = Vec::iterator;
        combined("merge", [](It a, It b, It c, It d, It o) { return std::merge(a, b, c, d, o); });
        combined("set_union", [](It a, It b, It c, It d, It o) { return std::set_union(a, b, c, d, o); });
        combined("set_intersection", [](It a, It b, It c, It d, It o) { return std::set_intersection(a, b, c, d, o); });
        combined("set_difference", [](It a, It b, It c, It d, It o) { return std::set_difference(a, b, c, d, o); });
        combined("set_symmetric_difference",
                 [](It a, It b, It c, It d, It o) { return std::set_symmetric_difference(a, b, c, d, o); });
        Vec q(sorted.size());
        q.resize(static_cast<std::size_t>(std::unique_copy(sorted.begin(), sorted.end(), q.begin()) - q.begin()));
        line("unique_copy", digest(q));
    }

    // ---- partition (its count; the order within each side is the
    // threads'), replace, generate ----
    {
        Vec a = v;
        const auto mid = std::partition(a.begin(), a.end(), [](std::uint64_t x) { return x % 3 == 0; });
        bool ok = std::all_of(a.begin(), mid, [](std::uint64_t x) { return x % 3 == 0; }) &&
                  std::none_of(mid, a.end(), [](std::uint64_t x) { return x % 3 == 0; });
        std::sort(a.begin(), a.end());
        std::printf("partition %lld %d %d\n", static_cast<long long>(mid - a.begin()), ok ? 1 : 0, a == sorted ? 1 : 0);
        a = v;
        std::replace_if(a.begin(), a.end(), [](std::uint64_t x) { return x < 100; }, std::uint64_t{7});
        line("replace_if", digest(a));
        std::generate(a.begin(), a.end(), [] { return std::uint64_t{5}; });
        line("generate", digest(a));
    }
    {
        // A shuffle is a permutation: its sorted copy is the input's.
        Vec a = v;
        std::random_shuffle(a.begin(), a.end());
        std::sort(a.begin(), a.end());
        line("random_shuffle-is-permutation", a == sorted ? 1 : 0);
    }
    return 0;
}
