"""Seed 000, item 3: mkfs of ext3 with 20 million inodes on a 2008 disk and a 2008 MLC SSD,
timed (mke2fs 1.41's writes through the block device's page cache, then fsync)."""

from ssdlab.experiments.seed000_mkfs import main

if __name__ == "__main__":
    raise SystemExit(main())
