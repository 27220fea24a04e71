// Fuzzes the OpenMP drop-in's environment parsers (OMP_PLACES,
// OMP_NUM_THREADS, OMP_PROC_BIND, OMP_STACKSIZE, OMP_SCHEDULE and
// read_settings over all of them). The first byte picks the variable.
// Oracle: a parser that refuses a value leaves its output as it was.
#include "harness.hpp"
#include "tools/omp/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    using namespace numaware::omp;
    if (size < 1 || size > 4096) return 0;
    const std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
    switch (data[0] % 6) {
    case 0: {
        Places p;
        p.kind = PlaceKind::sockets;
        if (!parse_places(value, p)) fuzz::require(p.kind == PlaceKind::sockets);
        break;
    }
    case 1: {
        unsigned first = 7;
        std::vector<unsigned> nested;
        if (!parse_num_threads(value, first, nested)) fuzz::require(first == 7);
        break;
    }
    case 2: {
        Bind b = Bind::close;
        std::vector<Bind> nested{Bind::spread};
        if (!parse_proc_bind(value, b, nested)) fuzz::require(b == Bind::close && nested.size() == 1);
        else fuzz::require(b != Bind::false_ && b != Bind::true_ ? true : nested.empty());
        break;
    }
    case 3: {
        std::size_t s = 12345;
        if (!parse_stack_size(value, s)) fuzz::require(s == 12345);
        break;
    }
    case 4: {
        Schedule s;
        (void)parse_schedule(value, s);
        break;
    }
    default: {
        static const char* const names[] = {"OMP_NUM_THREADS", "OMP_PLACES", "OMP_PROC_BIND", "OMP_STACKSIZE",
                                            "OMP_SCHEDULE", "NUMAWARE_POLICY", "NUMAWARE_RIP_WINDOW",
                                            "NUMAWARE_REPORT", "OMP_DYNAMIC", "OMP_MAX_ACTIVE_LEVELS"};
        const char* name = names[value.size() % 10];
        (void)fuzz::accepts([&] {
            (void)read_settings([&](const char* n) { return std::string_view(n) == name ? value.c_str() : nullptr; },
                                [](const std::string&) {});
        });
        break;
    }
    }
    return 0;
}
