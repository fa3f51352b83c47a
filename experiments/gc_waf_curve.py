"""Steady-state WAF of uniform random writes vs spare area: simulated greedy GC against the
Desnoyers (2012) analytic model, with a plot."""

from ssdlab.experiments.gc_waf import main

if __name__ == "__main__":
    raise SystemExit(main())
