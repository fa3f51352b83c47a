"""Seed 004: write amplification from a 16 KiB indirection unit, by write size and alignment.

Runs ssdlab.experiments.large_iu and prints analytic vs simulated WAF, with a plot.
"""

from ssdlab.experiments.large_iu import main

if __name__ == "__main__":
    raise SystemExit(main())
