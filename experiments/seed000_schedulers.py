"""Seed 000: Linux I/O schedulers on a 2008 hard disk and a 2008 SSD, alone and eight of each
in RAID 0; each trend the blog reports checked on the simulator's runs, and figures drawn.
The blog: Kim In-sung, "SSD story 7: SSDs and servers" (2008), http://minix.tistory.com/93."""

from ssdlab.experiments.seed000 import main

if __name__ == "__main__":
    raise SystemExit(main())
