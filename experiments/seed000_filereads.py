"""Seed 000 item 1 as file reads: `python experiments/seed000_filereads.py [--quick]`."""

from ssdlab.experiments.seed000_filereads import main

if __name__ == "__main__":
    raise SystemExit(main())
