"""Seed 003: iostat %util vs IOPS of 4 KiB random writes on a Samsung 850 PRO (Lee & Lee,
"Limitations of IOSTAT Metrics on Flash Memory SSDs", KIISE).

Runs ssdlab.experiments.seed003 (the paper's fio job for numjobs 1-16), prints published vs
simulated with the error of each row and writes a plot. ``--runtime 30`` for a quicker run.
"""

from ssdlab.experiments.seed003 import main

if __name__ == "__main__":
    raise SystemExit(main())
