"""fio's output from a simulated run: the numbers as fio keeps them (:mod:`.view`, per
reporting unit and group; :mod:`.numbers`, fio's number formatting and statistics), the terse
format (:mod:`.terse`) and the log files (:mod:`.logs`). The normal report is
:mod:`ssdlab.report`, the JSON :meth:`ssdlab.results.RunResult.to_fio_json`."""
