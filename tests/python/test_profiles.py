"""Profiles: every built-in parameter names its source; bad keys are named in the error."""

import tomllib
from importlib import resources

import pytest

from ssdlab.config import ProfileError, engine_names, host_names, load_host, load_profile, profile_names


def _leaves(table, prefix=""):
    for k, v in table.items():
        if isinstance(v, dict) and "value" in v:
            yield prefix + k, v
        elif isinstance(v, dict):
            yield from _leaves(v, prefix + k + ".")
        else:
            yield prefix + k, v


NOT_PARAMETERS = {"name", "description", "kind", "interface.kind"}


@pytest.mark.parametrize("path", [
    *(resources.files("ssdlab") / "profiles" / f"{n}.toml" for n in profile_names()),
    *(resources.files("ssdlab") / "profiles" / "hosts" / f"{n}.toml" for n in host_names()),
    *(resources.files("ssdlab") / "profiles" / "engines" / f"{n}.toml" for n in engine_names()),
])
def test_every_builtin_parameter_has_a_source(path):
    data = tomllib.loads(path.read_text())
    for key, v in _leaves(data):
        if key in NOT_PARAMETERS:
            continue
        assert isinstance(v, dict) and v.get("source", "").strip(), f"{path.name}: {key} has no source"


def test_builtin_profiles_load_and_are_consistent():
    assert "samsung-850-pro" in profile_names()
    p, sources = load_profile("samsung-850-pro")
    assert p.capacity == 256060514304
    assert p.raw_bytes > p.capacity
    assert "controller.write_busy" in sources
    load_host(p.default_host)


def test_unknown_profile_lists_the_builtins():
    with pytest.raises(ProfileError, match="unknown profile 'no-such-drive'.*samsung-850-pro"):
        load_profile("no-such-drive")


def _write_variant(tmp_path, old, new):
    text = (resources.files("ssdlab") / "profiles" / "samsung-850-pro.toml").read_text()
    assert old in text
    f = tmp_path / "variant.toml"
    f.write_text(text.replace(old, new, 1))
    return f


def _line_of(f, needle):
    return next(i for i, line in enumerate(f.read_text().splitlines(), start=1) if needle in line)


def test_unknown_key_is_named_with_its_line(tmp_path):
    f = _write_variant(tmp_path, "[nand]\n", "[nand]\npage_sise = 4096\n")
    line = _line_of(f, "page_sise")
    with pytest.raises(ProfileError, match=rf"variant.toml:{line}: unknown key 'nand.page_sise'"):
        load_profile(f)


def test_bad_unit_is_named_with_its_line(tmp_path):
    f = _write_variant(tmp_path, 'read_time = { value = "50us"', 'read_time = { value = "50 parsecs"')
    line = _line_of(f, "parsecs")
    with pytest.raises(ProfileError, match=rf"variant.toml:{line}: key 'nand.read_time': unknown time unit 'parsecs'"):
        load_profile(f)


def test_invalid_toml_is_reported_with_the_file(tmp_path):
    f = tmp_path / "broken.toml"
    f.write_text("name = \n")
    with pytest.raises(ProfileError, match="broken.toml: not valid TOML"):
        load_profile(f)


def test_in_place_drives_are_their_own_kind_without_nand_fields(tmp_path):
    p, _ = load_profile("intel-optane-905p-480")
    assert p.kind == "in-place" and p.write_buffer == 0 and p.dies == 35
    assert p.to_core()["kind"] == "in-place"
    text = (resources.files("ssdlab") / "profiles" / "intel-optane-905p-480.toml").read_text()
    # NAND and FTL fields have no place in it: a key from them is an unknown key, at its line.
    f = tmp_path / "xp.toml"
    f.write_text(text.replace("[media]\n", "[ftl]\ngc_threshold_blocks = 3\n[media]\n"))
    line = f.read_text().splitlines().index("[ftl]") + 1  # the unknown key is the section
    with pytest.raises(ProfileError, match=rf"xp.toml:{line}: unknown key 'ftl'"):
        load_profile(f)
    f.write_text(text.replace("queue_depth =", "write_buffer = 0\nqueue_depth ="))
    with pytest.raises(ProfileError, match="unknown key 'write_buffer'"):
        load_profile(f)


def test_the_old_in_place_nand_media_says_what_to_write_instead(tmp_path):
    f = _write_variant(tmp_path, "[nand]\n", '[nand]\nmedia = "in-place"\n')
    with pytest.raises(ProfileError, match=r"key 'nand.media': in-place media is a profile kind of its own"):
        load_profile(f)
