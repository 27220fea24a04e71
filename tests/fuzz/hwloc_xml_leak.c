/* tests/fuzz/hwloc_xml_leak.c — hwloc alone, on an XML file: init,
 * set_xml, load, destroy. Under LeakSanitizer it shows that hwloc 2.9
 * leaks objects and bitmaps (hwloc_alloc_setup_object, hwloc_bitmap_alloc)
 * while loading some malformed files that the fuzzer found (kept as
 * corpus/hwloc_xml/repro-hwloc-leaks-on-load): the leak is hwloc's, not
 * numaware's loader, which destroys every topology it makes. lsan.supp
 * names this program next to its one suppression. */
#include <hwloc.h>
#include <stdio.h>

int main(int argc, char** argv) {
    hwloc_topology_t t;
    if (argc < 2 || hwloc_topology_init(&t) != 0) return 2;
    if (hwloc_topology_set_xml(t, argv[1]) != 0) {
        hwloc_topology_destroy(t);
        return 3;
    }
    printf("load returned %d\n", hwloc_topology_load(t));
    hwloc_topology_destroy(t);
    return 0;
}
