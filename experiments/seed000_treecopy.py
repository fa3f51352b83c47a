"""Seed 000, item 4: a 1.5 GB tree copied by 1 ... 128 parallel cp -a onto RAID 0 of five SSDs
and of five disks; throughput per copier count and the blog's trends checked."""

from ssdlab.experiments.seed000_treecopy import main

if __name__ == "__main__":
    raise SystemExit(main())
