// tests/omp/cxx.cpp — OpenMP in C++ as C++ programs use it: loops over
// random-access iterators, a user-defined reduction on a class, lastprivate
// std::string, tasks with firstprivate class objects (copy constructors
// through GOMP_task's cpyfn, destructors counted) whose bodies throw and
// catch, recursive tasks, a taskloop over iterators, thread_local with
// dynamic initialisation beside threadprivate, tasks over a std::list and a
// firstprivate shared_ptr. Compared with libgomp's output (run_suite.sh).
#include <omp.h>
#include <cstdio>
#include <vector>
#include <list>
#include <map>
#include <string>
#include <numeric>
#include <stdexcept>
#include <algorithm>
#include <memory>

struct Acc {
    std::vector<long> v;
    Acc() : v(8, 0) {}
};
#pragma omp declare reduction(merge : Acc : \
    std::transform(omp_out.v.begin(), omp_out.v.end(), omp_in.v.begin(), omp_out.v.begin(), std::plus<long>())) \
    initializer(omp_priv = Acc())

struct Counted {
    static int live;
    std::string name;
    Counted(std::string n) : name(std::move(n)) { ++live; }
    Counted(const Counted& o) : name(o.name + "'") {
#pragma omp atomic
        ++live;
    }
    ~Counted() {
#pragma omp atomic
        --live;
    }
};
int Counted::live = 0;

static thread_local std::vector<int> tl_scratch;   // C++ thread_local with dynamic init
static int tp_val;
#pragma omp threadprivate(tp_val)

long fib(int n) {
    if (n < 2) return n;
    long a, b;
#pragma omp task shared(a) if (n > 12)
    a = fib(n - 1);
#pragma omp task shared(b) if (n > 12)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main() {
    std::vector<double> x(10000);
    std::iota(x.begin(), x.end(), 0.0);
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (auto it = x.begin(); it < x.end(); ++it) s += *it;
    std::printf("iterator loop %.0f\n", s);

    Acc acc;
#pragma omp parallel for reduction(merge : acc)
    for (int i = 0; i < 10000; ++i) acc.v[i % 8] += i;
    std::printf("declare reduction %ld %ld\n", acc.v[0], acc.v[7]);

    std::string last;
#pragma omp parallel for lastprivate(last)
    for (int i = 0; i < 100; ++i) last = "item" + std::to_string(i);
    std::printf("lastprivate %s\n", last.c_str());

    int caught = 0;
    {
        Counted c("c");
#pragma omp parallel
#pragma omp single
        for (int i = 0; i < 50; ++i) {
#pragma omp task firstprivate(c, i) shared(caught)
            {
                try {
                    if (i % 5 == 0) throw std::runtime_error(c.name);
                } catch (const std::exception& e) {
#pragma omp atomic
                    caught++;
                }
                tl_scratch.push_back(i);
            }
        }
    }
    std::printf("exceptions caught %d, live copies %d\n", caught, Counted::live);

    long f = 0;
#pragma omp parallel
#pragma omp single
    f = fib(25);
    std::printf("fib %ld\n", f);

    std::map<int, long> m;
    for (int i = 0; i < 64; ++i) m[i] = 0;
    std::vector<std::map<int, long>::iterator> its;
    for (auto it = m.begin(); it != m.end(); ++it) its.push_back(it);
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(4)
    for (auto i = its.begin(); i < its.end(); ++i) (*i)->second = (*i)->first * 2;
    long ms = 0;
    for (auto& kv : m) ms += kv.second;
    std::printf("taskloop over iterators %ld\n", ms);

    int names_ok = 1;
#pragma omp parallel reduction(&& : names_ok)
    {
        tp_val = 100 + omp_get_thread_num();
        tl_scratch.push_back(tp_val);
        names_ok = tp_val == 100 + omp_get_thread_num() && tl_scratch.back() == tp_val;
    }
    std::printf("threadprivate and thread_local %s\n", names_ok ? "ok" : "WRONG");

    std::list<int> lst(1000, 1);
    long ls = 0;
#pragma omp parallel
#pragma omp single
    for (auto it = lst.begin(); it != lst.end(); ++it)
#pragma omp task firstprivate(it) shared(ls)
    {
#pragma omp atomic
        ls += *it;
    }
    std::printf("tasks over a list %ld\n", ls);

    auto sp = std::make_shared<int>(7);
    int total = 0;
#pragma omp parallel for reduction(+ : total) firstprivate(sp)
    for (int i = 0; i < 1000; ++i) total += *sp;
    std::printf("shared_ptr firstprivate %d use_count back to %ld\n", total, sp.use_count());
    return 0;
}
