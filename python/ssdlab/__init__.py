"""ssdlab: a calibrated, deterministic simulator of SSDs behind a Linux-like block layer.

    >>> import ssdlab
    >>> r = ssdlab.run("job.fio", profile="samsung-850-pro", seed=1)
    >>> r.to_pandas(); r.to_fio_json(); r.iostat_table()
"""

from .api import DEFAULT_PROFILE, SimulationError, run
from .config import ProfileError, host_names, load_host, load_profile, profile_names
from .results import RunResult

__all__ = [
    "DEFAULT_PROFILE",
    "ProfileError",
    "RunResult",
    "SimulationError",
    "host_names",
    "load_host",
    "load_profile",
    "profile_names",
    "run",
]
