"""Seed 004: rebuild of a RAID 5 of nine 61.44 TB QLC drives with md and with a streaming
engine (xiRAID), idle and under the brief's host job; published vs simulated. The brief:
Solidigm/Xinnor, "Accelerating RAID Rebuild and Reducing Write Amplification on High Density
Solidigm QLC Drives with xiRAID" (2025)."""

from ssdlab.experiments.seed004 import main

if __name__ == "__main__":
    raise SystemExit(main())
