"""Thermal throttling: the 970 PRO in a fanless case (TechPowerUp) and the PM1725b's dips in
seed 002 under several coolings, published vs simulated, with a plot."""

from ssdlab.experiments.thermal import main

if __name__ == "__main__":
    raise SystemExit(main())
