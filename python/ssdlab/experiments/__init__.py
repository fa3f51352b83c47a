"""Reproductions of the seeds' published measurements (see shared/SEEDS.md).

Each module has ``PUBLISHED`` (the paper's numbers), ``reproduce(...)`` returning a table of
published vs simulated with the error of each row, and ``main()`` that prints it and plots.
"""
