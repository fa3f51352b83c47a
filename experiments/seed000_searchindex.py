"""Seed 000, item 8: a search-index server on 9 disks and on 8 SSDs in RAID 0, its queries
warming the page cache over 300 s, then moving to a new index: mean query time per 10 s,
published vs simulated (cold and warm on disks), and whether the SSD server stays fast."""

from ssdlab.experiments.seed000_searchindex import main

if __name__ == "__main__":
    raise SystemExit(main())
