"""Garbage collection and tail latency: read p50/p99/p99.9/p99.99 alone, beside random writes on
a fresh drive, and beside the same writes on a drive in steady state (GC active), with a plot."""

from ssdlab.experiments.gc_tail import main

if __name__ == "__main__":
    raise SystemExit(main())
