"""Reproductions of the seeds' published measurements, and experiments built on them.

The published figures live in :mod:`ssdlab.reference`, each naming its source (the seed
publications are listed there and in ``docs/references.md``); seed002 and
seed003 re-export their table as ``PUBLISHED``. A module's ``reproduce(...)`` returns a table of
published (or modelled) vs simulated with the error of each row, and ``main()`` prints it and
plots. ``catalog`` registers them all with the reproduction gallery (``ssdlab reproduce``),
which loads it only when asked; no other product code imports from here.
"""
