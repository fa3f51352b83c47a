"""Seed 000, item 3: MFT host-side write remapping on a 2008 MLC SSD and a 2008 disk, alone and
through the layer, and a power cut during fsync'd writes."""

from ssdlab.experiments.seed000_mft import main

if __name__ == "__main__":
    raise SystemExit(main())
