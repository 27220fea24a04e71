/* tests/omp/teams.c — the host teams construct (OpenMP 5.0; GCC lowers it
 * to GOMP_teams_reg): a league with num_teams, distribute over the teams,
 * a parallel region inside each team under a thread_limit, the team and
 * league numbers everywhere, and the nteams-var and teams-thread-limit-var
 * ICVs, initial and set. Deterministic: the suite compares the output
 * with libgomp's. */
#include <omp.h>
#include <stdio.h>

enum { N = 1000 };

int main(void) {
    static long part[8];
    static int seen_teams[8], seen_limit[8], seen_threads[8], inner_team[8];
    long total = 0;
    /* Unset, nteams-var is 0 (the standard's initial value), whatever a
     * teams construct then makes. */
    printf("initial ICVs: max teams %d, teams thread limit %d\n", omp_get_max_teams(), omp_get_teams_thread_limit());
#pragma omp teams num_teams(3) thread_limit(2) reduction(+ : total)
    {
        const int t = omp_get_team_num();
        seen_teams[t] = omp_get_num_teams();
#pragma omp distribute
        for (int i = 0; i < N; ++i) total += i;
        long mine = 0;
#pragma omp parallel shared(mine)
        {
#pragma omp single
            {
                seen_threads[t] = omp_get_num_threads() <= 2;
                seen_limit[t] = omp_get_thread_limit();
                inner_team[t] = omp_get_team_num();
            }
#pragma omp for reduction(+ : mine)
            for (int i = 0; i < 100; ++i) mine += i * (t + 1);
        }
        part[t] = mine;
    }
    printf("distribute sum: %ld\n", total);
    for (int t = 0; t < 3; ++t)
        printf("team %d: league of %d, thread limit %d, parallel within it: %d, team number there %d, sum %ld\n", t,
               seen_teams[t], seen_limit[t], seen_threads[t], inner_team[t], part[t]);
    printf("outside: team %d of %d\n", omp_get_team_num(), omp_get_num_teams());
    omp_set_num_teams(2);
    omp_set_teams_thread_limit(3);
    printf("ICVs: max teams %d, teams thread limit %d\n", omp_get_max_teams(), omp_get_teams_thread_limit());
    int league = 0, limit = 0;
#pragma omp teams
    {
        if (omp_get_team_num() == 0) {
            league = omp_get_num_teams();
#pragma omp parallel num_threads(1)
            limit = omp_get_thread_limit();
        }
    }
    printf("default league after omp_set_num_teams(2): %d teams, thread limit %d\n", league, limit);
    return 0;
}
