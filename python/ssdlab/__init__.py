"""ssdlab: a calibrated, deterministic simulator of SSDs behind a Linux-like block layer.

    >>> import ssdlab
    >>> r = ssdlab.run("job.fio", profile="samsung-850-pro", seed=1)
    >>> r.to_pandas(); r.to_fio_json(); r.iostat_table()
    >>> md = ssdlab.run("job.fio", system=ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="64k"))
"""

from .api import DEFAULT_PROFILE, RunSpec, SimulationError, build, execute, run
from .config import ProfileError, host_names, load_host, load_profile, profile_names
from .results import RunResult
from .system import SystemFileError, load_system, raid

__all__ = [
    "DEFAULT_PROFILE",
    "ProfileError",
    "RunResult",
    "RunSpec",
    "SimulationError",
    "SystemFileError",
    "build",
    "execute",
    "host_names",
    "load_host",
    "load_profile",
    "load_system",
    "profile_names",
    "raid",
    "run",
]
