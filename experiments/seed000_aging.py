"""Seed 000, item 3: the "tooth-missing" aging of a file system; its free extents against the
blog's statement, and 4 KiB random reads and writes on a fresh and an aged file system."""

from ssdlab.experiments.seed000_aging import main

if __name__ == "__main__":
    raise SystemExit(main())
