"""ssdlab: a calibrated, deterministic simulator of SSDs behind a Linux-like block layer.

    >>> import ssdlab
    >>> r = ssdlab.run("job.fio", profile="samsung-850-pro", seed=1)
    >>> r.to_pandas(); r.to_fio_json(); r.iostat_table()
    >>> md = ssdlab.run("job.fio", system=ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="64k"))
"""


def _version() -> str:
    """The package's version: the compiled core's (both come from the same Cargo version)."""
    try:
        from ._core import core_version

        return core_version()
    except ImportError:  # the core is not built: what the installed metadata says
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("ssdlab")
        except PackageNotFoundError:
            return "unknown"


__version__ = _version()

from .api import DEFAULT_PROFILE, Progress, RunSpec, SimulationError, build, execute, observe, run
from .config import ProfileError, host_names, load_host, load_profile, profile_names
from .analysis.compare import compare
from .analysis.fit import fit
from .analysis.measure import MeasuredResult, MeasureError, measure
from .results import RunResult
from .system import SystemFileError, load_system, raid

__all__ = [
    "__version__",
    "DEFAULT_PROFILE",
    "MeasureError",
    "MeasuredResult",
    "ProfileError",
    "Progress",
    "RunResult",
    "RunSpec",
    "SimulationError",
    "SystemFileError",
    "build",
    "compare",
    "execute",
    "fit",
    "host_names",
    "load_host",
    "load_profile",
    "load_system",
    "measure",
    "observe",
    "profile_names",
    "raid",
    "run",
]
