/* scotch_map_leak.c: Scotch alone, no numaware. Maps 10 vertices without
   edges onto a 4-node target graph (SCOTCH_archBuild2) with
   SCOTCH_graphMap and frees every object; under LeakSanitizer, Scotch 7.0.3
   (Debian 12) leaks a strategy that _SCOTCHkgraphMapFm parses during the
   mapping (tests/lsan.supp, tests/scotch/leak_check.sh). */
#include <stdio.h>
#include <scotch.h>
int main(void) {
    SCOTCH_Num sv[11] = {0}, tv[5], te[8], part[10], term[4] = {0, 1, 2, 3};
    for (SCOTCH_Num v = 0; v < 4; ++v) { tv[v] = 2 * v; te[2 * v] = (v + 3) % 4; te[2 * v + 1] = (v + 1) % 4; }
    tv[4] = 8;
    SCOTCH_Graph source, target; SCOTCH_Arch arch; SCOTCH_Strat strat;
    SCOTCH_graphInit(&source); SCOTCH_graphInit(&target); SCOTCH_archInit(&arch); SCOTCH_stratInit(&strat);
    if (SCOTCH_graphBuild(&source, 0, 10, sv, NULL, NULL, NULL, 0, NULL, NULL) != 0) return 1;
    if (SCOTCH_graphBuild(&target, 0, 4, tv, NULL, NULL, NULL, 8, te, NULL) != 0) return 2;
    if (SCOTCH_archBuild2(&arch, &target, 4, term) != 0) return 3;
    if (SCOTCH_stratGraphMapBuild(&strat, SCOTCH_STRATBALANCE, 4, 0.05) != 0) return 4;
    if (SCOTCH_graphMap(&source, &arch, &strat, part) != 0) return 5;
    SCOTCH_stratExit(&strat); SCOTCH_archExit(&arch); SCOTCH_graphExit(&target); SCOTCH_graphExit(&source);
    printf("mapped 10 vertices without edges onto a 4-node target graph\n");
    return 0;
}
