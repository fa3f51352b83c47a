"""A table of values for fio 3.33's boolean options that ssdlab only warns about, shared by
the parser's tests and the comparison with the real fio."""

from __future__ import annotations

from ssdlab.fio.options import NOT_MODELLED_BOOLEANS, fio_option_names

# fio 3.33's boolean options that ssdlab only warns about, every value written as the job file
# holds it (None: the bare name) and whether ``fio --parse-only`` takes it. fio reads each part
# of the value (at ',', else ':', else '-') with sscanf %u (%x with 0x) into an int, keeps the
# first that reads, and refuses it above 1 (-1 is not checked against the minimum of 0) or
# with no value at all. test_fio_parser.py checks ssdlab against it, test_fio_vs_real.py the
# real fio.
BOOLEAN_VALUES: dict[str | None, bool] = {
    None: False, "": False, "0": True, "1": True, "2": False, "10": False, "-1": True, "-2": True,
    "-0": True, "+1": True, "00": True, "01": True, "1k": True, "1m": True, "1.5": True, "0.5": True,
    ".5": False, "1e3": True, "1abc": True, "abc": False, "k": False, "on": False, "true": False,
    "yes": False, "x1": False, "0x1": True, "0X1": True, "0x0": True, "0x2": False, "0x10": False,
    "0x1k": True, "0x": True, "0xg": True, "0xffffffff": True, "4294967295": True, "4294967296": True,
    "4294967297": True, "99999999999999999999": True, "2,1": True, "1,2": True, "1,2,3,4": True,
    "2:1": True, "2:0": True, "2-1": True, "2-3": False, "-3": True, "1-": True, "a-1": True, "a,1": True,
    ",1": True, "1,": True, "2,": False, "-": False, ",": False, "(1)": False, "(0+1)": False,
}

#: those judged by the resolver, which says nothing of them on a device
ON_FILES = {"create_on_open", "end_fsync", "unlink"}


def not_modelled_booleans() -> list[str]:
    """The options (aliases too) ssdlab only warns about among fio's booleans."""
    return sorted(n for n, canon in fio_option_names().items() if canon in NOT_MODELLED_BOOLEANS)
