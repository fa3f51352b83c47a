"""Typed configuration: device and host profiles loaded from TOML, with a source per value."""

from .profile import (
    HostProfile,
    HddProfile,
    InPlaceProfile,
    MdEngine,
    ProfileError,
    SsdProfile,
    engine_names,
    host_names,
    load_engine,
    load_host,
    load_profile,
    profile_names,
)

__all__ = [
    "HostProfile",
    "HddProfile",
    "InPlaceProfile",
    "MdEngine",
    "ProfileError",
    "SsdProfile",
    "engine_names",
    "host_names",
    "load_engine",
    "load_host",
    "load_profile",
    "profile_names",
]
