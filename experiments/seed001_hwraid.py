"""Seed 001: hardware RAID 5 of Samsung 830 SSDs behind an Adaptec 6805 (512 MB cache);
each trend the paper reports checked on the simulator's runs, and its four figures drawn.
The paper: Lee & Shin, "Performance Analysis on SSD RAID Device" (KIISE 2012)."""

from ssdlab.experiments.seed001 import main

if __name__ == "__main__":
    raise SystemExit(main())
