"""Seed 000, item 8: an SSD cache tier in front of disk file servers — the SSDs a cache server
needs for more than 10 Gb/s, and what one cache server's failure does to the file servers at
50 % and at 100 % load. ``--quick``: 10 s runs."""

from ssdlab.experiments.seed000_cachetier import main

if __name__ == "__main__":
    raise SystemExit(main())
