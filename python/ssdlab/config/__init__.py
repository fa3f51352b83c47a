"""Typed configuration: device and host profiles loaded from TOML, with a source per value."""

from .profile import (
    HostProfile,
    InPlaceProfile,
    ProfileError,
    SsdProfile,
    host_names,
    load_host,
    load_profile,
    profile_names,
)

__all__ = [
    "HostProfile",
    "InPlaceProfile",
    "ProfileError",
    "SsdProfile",
    "host_names",
    "load_host",
    "load_profile",
    "profile_names",
]
