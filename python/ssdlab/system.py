"""A system: one host and the devices behind it, described in TOML or by a profile alone.

    host = "xeon-x5650-ubuntu1404"      # optional: a host profile (default: the first
                                        # drive's calibration host)
    [[drive]]
    name = "sda"                        # fio's filename=/dev/sda selects it
    profile = "samsung-850-pro"         # a built-in profile name or a profile TOML path
    # optional per drive: scale = 0.1, precondition = "random:2",
    # profile_set = { "thermal.ambient_temperature" = "40" }, scheduler = "none"

Profile and host paths (``*.toml``) are relative to the system file. Every mistake is an error naming the file,
the line and the key as written.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .config import ProfileError, load_host
from .config.profile import _describe, device_core, place

DEVICE_NAME = r"^[A-Za-z][A-Za-z0-9_.\-]*$"


class SystemFileError(ValueError):
    """A system description that cannot be used; the message names file:line and key."""


class DriveEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=DEVICE_NAME, description="device name, as in /dev/NAME")
    profile: str = Field(min_length=1, description="built-in profile name or profile TOML path")
    scale: float | None = Field(default=None, gt=0, le=1, description="fraction of the flash simulated")
    precondition: str | None = Field(default=None, description="none | sequential | random[:PASSES]")
    profile_set: dict[str, str | int | float | bool] = Field(default_factory=dict,
                                                            description="profile keys overridden")
    scheduler: Literal["none"] = "none"


class SystemFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str | None = None
    drive: list[DriveEntry] = Field(min_length=1)

    @field_validator("drive")
    @classmethod
    def _names_once(cls, drives: list[DriveEntry]) -> list[DriveEntry]:
        seen: set[str] = set()
        for d in drives:
            if d.name in seen:
                raise ValueError(f"device name '{d.name}' is used twice")
            seen.add(d.name)
        return drives


@dataclass
class Drive:
    """One drive of a system, resolved: its profile and the description the core runs."""

    name: str
    profile: Any  # an SsdProfile or InPlaceProfile
    sources: dict[str, str]
    core: dict[str, Any]
    scale: float
    precondition: str | dict[str, Any] | None = None
    scheduler: str = "none"


@dataclass
class System:
    drives: list[Drive]
    host: str | None = None  # None: the first drive's calibration host
    origin: str = "<system>"

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.drives]


def default_device_name(core: dict[str, Any]) -> str:
    """The name Linux gives the first drive of its interface: sda (SATA) or nvme0n1."""
    return "sda" if core["interface"]["kind"] == "sata" else "nvme0n1"


def single(profile: str | Path, *, profile_set: dict[str, str] | None = None, scale: float | None = None,
           precondition: str | dict[str, Any] | None = None) -> System:
    """The one-drive system that ``--profile NAME`` stands for."""
    parse_precondition(precondition)
    prof, sources, core, eff = device_core(profile, profile_set or None, scale)
    name = default_device_name(core)
    return System([Drive(name, prof, sources, core, eff, precondition)], origin=f"profile '{profile}'")


def load_system(path: str | Path, *, scale: float | None = None, precondition: str | dict[str, Any] | None = None,
                profile_set: dict[str, str] | None = None) -> System:
    """A system file. ``scale``, ``precondition`` and ``profile_set`` given here apply to
    every drive that does not set its own (the command line's options)."""
    p = Path(path)
    if not p.is_file():
        raise SystemFileError(f"{p}: no such system file")
    text = p.read_text()
    origin = str(p)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SystemFileError(f"{origin}: not valid TOML: {e}") from None
    try:
        sf = SystemFile.model_validate(data)
    except ValidationError as e:
        raise SystemFileError(_describe(e, origin, text)) from None
    drives = []
    for i, d in enumerate(sf.drive):
        ref = d.profile
        if ref.endswith(".toml") and not Path(ref).is_absolute():
            ref = str(p.parent / ref)
        sets = {**(profile_set or {}), **{k: str(v) for k, v in d.profile_set.items()}}
        try:
            prof, sources, core, eff = device_core(ref, sets or None, d.scale if d.scale is not None else scale)
        except ProfileError as e:
            where = place(origin, text, ("drive", i, "profile"))
            raise SystemFileError(f"{where}: drive '{d.name}': {e}") from None
        pre = d.precondition if d.precondition is not None else precondition
        try:
            parse_precondition(pre)
        except ValueError as e:
            raise SystemFileError(f"{place(origin, text, ('drive', i, 'precondition'))}: {e}") from None
        drives.append(Drive(d.name, prof, sources, core, eff, pre, d.scheduler))
    host = sf.host
    if host is not None:
        if host.endswith(".toml") and not Path(host).is_absolute():
            host = str(p.parent / host)
        try:
            load_host(host)
        except ProfileError as e:
            raise SystemFileError(f"{place(origin, text, ('host',))}: {e}") from None
    return System(drives, host=host, origin=origin)


def parse_precondition(value: str | dict[str, Any] | None) -> dict[str, Any]:
    """``none``, ``sequential`` or ``random[:PASSES]`` (default 2 passes of random overwrite)."""
    if value is None:
        return {"kind": "none"}
    if isinstance(value, dict):
        return dict(value)
    kind, _, arg = str(value).partition(":")
    kind = kind.strip().lower()
    if kind in ("none", "sequential") and not arg:
        return {"kind": kind}
    if kind == "random":
        try:
            passes = float(arg) if arg else 2.0
        except ValueError:
            passes = -1.0
        if not passes >= 0:
            raise ValueError(f"precondition random:{arg}: expected a number of passes >= 0")
        return {"kind": "random", "passes": passes}
    raise ValueError(f"precondition {value!r}: expected none, sequential or random[:PASSES]")
