"""Ring-buffer recorder (seed 002): one wrap over a full drive without TRIM and with TRIM ahead
of the write pointer, on the PM1725b, 970 PRO and 970 EVO Plus at 1/16 of their flash.

Runs ssdlab.experiments.ring_buffer: prints, per drive and scenario, the sustained or
recorder-paced write rate, the shortfall against the recorder rate, p99 write latency, WAF and
GC copies, each beside the model's value and its error, and plots throughput over time.
``--drives NAME ...``, ``--scenarios A B C10`` or ``--scale 0.03125`` for a quicker run.
"""

from ssdlab.experiments.ring_buffer import main

if __name__ == "__main__":
    raise SystemExit(main())
