"""numaware's configuration advisor (the brief's layer 9, issue 15).

Which thread mapping, page mapping and prefetcher setting suit a program
region, learned from brute-force sweeps in the memory-hierarchy simulator.
It calls the ``numaware`` command by subprocess and links nothing.

- ``space``: the configuration space of a preset, and ``Configuration``;
- ``simulator``: the one door to the ``numaware`` command (its flags, its
  version, one job's run and its checked JSON);
- ``store``: the SQLite result store, keyed by region, configuration,
  preset and simulator version;
- ``sizes``: the workloads and configurations of ``--size test`` and
  ``--size full``;
- ``sweep``: jobs on a local process pool or a Dask cluster, results into
  the store exactly once, resumable;
- ``python3 -m numaware.advisor sweep ...``: the command line.

docs/ADVISOR.md describes them.
"""
