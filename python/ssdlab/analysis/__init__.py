"""What ssdlab works out on top of runs, apart from the plumbing that makes a run (``api``,
``config``, ``fio``, ``system``, ``results``, ``fioout``): sizing an array for a sustained
write stream (:mod:`.sizing`, :mod:`.sustained`), an array's rebuild and its data-loss exposure
(:mod:`.rebuild`, :mod:`.waf_projection`, :mod:`.reliability`), fio's steady-state test
(:mod:`.steadystate`), a run's memory estimate (:mod:`.memory`), and real measurements, their
comparison with simulated runs and the fitting of a profile to them (:mod:`.measure`,
:mod:`.compare`, :mod:`.fit`).

Nothing is imported here: ``ssdlab.api`` loads :mod:`.memory` and :mod:`.steadystate` for
every run, the rest only where a command needs it."""
