"""numaware's Python side.

It reads what the ``numaware`` command prints (JSON documents) and never
links the C++ library. Modules:

- ``numaware.memsim_plot``: the plot of a ``numaware sim memory --json``
  document (speedup and bytes moved per prefetcher), also behind
  ``numaware sim memory --plot FILE``.
- ``numaware.advisor``: the configuration advisor's space, result store and
  sweep engine (``python3 -m numaware.advisor sweep``; docs/ADVISOR.md). It
  runs the ``numaware`` command to get its documents.
"""
