"""The reproduction gallery: every published-measurement experiment in one registry, with one
result type and one pass/fail rule (:mod:`.core`), a terminal table and an HTML page
(:mod:`.render`). ``ssdlab reproduce`` runs it."""

from .core import Context, Experiment, ExperimentResult, Figure, Row, Status, Tolerance, judge, pct_error
from .registry import REGISTRY, UnknownExperiment, register, registered, run_experiment, select
from .render import page, rows_json, summary, text_table

__all__ = ["Context", "Experiment", "ExperimentResult", "Figure", "REGISTRY", "Row", "Status", "Tolerance",
           "UnknownExperiment", "registered", "judge", "page", "pct_error", "register", "run_experiment",
           "rows_json", "select", "summary", "text_table"]
