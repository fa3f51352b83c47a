"""Seed 002: sustained sequential write of five NVMe drives (BittWare's data-recorder white
paper "NVMe SSD Write Performance").

Runs ssdlab.experiments.seed002 (fill each drive from empty, then overwrite it, one thread
keeping the queue full), prints published vs simulated with the error of each row and the drive
counts for 100 Gb/s, and writes a throughput-over-time plot per drive. Drives whose profile is
not available yet are reported as such. ``--drives NAME ...`` or ``--size 64GiB`` for a
quicker run.
"""

from ssdlab.experiments.seed002 import main

if __name__ == "__main__":
    raise SystemExit(main())
