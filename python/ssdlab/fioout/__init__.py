"""fio's output from a simulated run, every format fio writes, in one package: the numbers
as fio keeps them (:mod:`.view`, per reporting unit and group; :mod:`.numbers`, fio's number
formatting and statistics) and, printed from them, the normal text report (:mod:`.normal`),
the JSON and json+ (:mod:`.json`, behind :meth:`ssdlab.results.RunResult.to_fio_json`), the
terse format (:mod:`.terse`) and the log files (:mod:`.logs`, behind
:meth:`~ssdlab.results.RunResult.write_fio_logs`). :func:`format_report` picks one by the name
``--output-format`` gives it.

A measured run (:mod:`ssdlab.analysis.measure`) is reported by the real fio itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..results import RunResult

#: The names ``--output-format`` takes.
FORMATS = ("normal", "json", "json+", "terse")


def format_report(result: "RunResult", output_format: str) -> str:
    """The report of ``result`` as fio prints it in ``output_format`` (one of :data:`FORMATS`),
    ending with a newline. JSON is strict (non-finite numbers are null), indented by 2."""
    if output_format in ("json", "json+"):
        from ..jsonout import dumps

        return dumps(result.to_fio_json(plus=output_format == "json+"), indent=2) + "\n"
    if output_format == "terse":
        from .terse import format_terse

        return format_terse(result)
    if output_format == "normal":
        from .normal import format_normal

        return format_normal(result)
    raise ValueError(f"unknown output format {output_format!r}: expected one of {', '.join(FORMATS)}")
