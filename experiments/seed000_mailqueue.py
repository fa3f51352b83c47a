"""Seed 000, item 5: a mail queue of a million files on a 2008 disk and a 2008 SSD; run times
published vs simulated, with the CPU, iowait and load ranges. ``--scale 20`` queues 1/20 of
the files and projects the run time."""

from ssdlab.experiments.seed000_mailqueue import main

if __name__ == "__main__":
    raise SystemExit(main())
