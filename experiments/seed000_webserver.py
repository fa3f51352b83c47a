"""Seed 000, item 7: a web download server's 127 clients on 9 disks and on 8 SSDs in RAID 0,
behind bonded 1 GbE ports or a 10 GbE port; served Mb/s published vs simulated, per-class
rates, CPU, iowait and load ranges, and what bounded each server. ``--quick``: 60 s runs."""

from ssdlab.experiments.seed000_webserver import main

if __name__ == "__main__":
    raise SystemExit(main())
