"""Hard disk profiles: their datasheet figures come out of the mechanics, and their reports say
where the head's time went."""

import pytest

import ssdlab
from ssdlab.config.profile import ProfileError, device_core, load_profile

BARRACUDA = "seagate-barracuda-7200.11-1tb"
EXOS = "seagate-exos-x18-18tb"


def _job(rw: str, bs: str, qd: int, io_size: str, offset: str = "0") -> str:
    return f"[j]\nioengine=libaio\ndirect=1\nrw={rw}\nbs={bs}\niodepth={qd}\nsize=100%\noffset={offset}\nio_size={io_size}\n"


@pytest.mark.parametrize("name,outer", [(BARRACUDA, 120e6), (EXOS, 270e6)])
def test_sequential_read_streams_at_the_datasheet_outer_rate(name, outer):
    r = ssdlab.run(_job("read", "128k", 1, "256m"), profile=name, seed=1)
    bw = r.to_fio_json()["jobs"][0]["read"]["bw_bytes"]
    assert abs(bw / outer - 1) < 0.03, f"{name}: {bw / 1e6:.1f} MB/s vs {outer / 1e6:.0f}"
    assert r.internal("sda")["read_ahead_hits"] > 1_900


def test_random_reads_take_a_seek_and_half_a_revolution():
    prof, _ = load_profile(BARRACUDA)
    r = ssdlab.run(_job("randread", "4k", 1, "8m"), profile=BARRACUDA, seed=1)
    iops = r.to_fio_json()["jobs"][0]["read"]["iops"]
    m = prof.mechanics
    expect = 1e9 / (m.average_seek + m.revolution_ns() / 2)
    assert abs(iops / expect - 1) < 0.10, f"{iops:.1f} IOPS vs {expect:.1f}"
    i = r.internal("sda")
    assert i["kind"] == "hdd" and i["media_accesses"] == 2048
    assert 3.0 < i["mean_rotation_ms"] < 5.3
    from ssdlab.fioout.normal import format_normal
    text = format_normal(r)
    assert "media accesses" in text and "mean seek" in text


def test_ncq_lifts_random_reads_at_depth():
    qd1 = ssdlab.run(_job("randread", "4k", 1, "4m"), profile=BARRACUDA, seed=1)
    qd32 = ssdlab.run(_job("randread", "4k", 32, "4m"), profile=BARRACUDA, seed=1)
    a, b = (x.to_fio_json()["jobs"][0]["read"]["iops"] for x in (qd1, qd32))
    assert b > 2 * a, f"QD1 {a:.0f} vs QD32 {b:.0f} IOPS"
    # Without reordering a deep queue does not help.
    fifo = ssdlab.run(_job("randread", "4k", 32, "4m"), profile=BARRACUDA, seed=1,
                      profile_set={"ncq.reorder": "false"})
    c = fifo.to_fio_json()["jobs"][0]["read"]["iops"]
    assert abs(c / a - 1) < 0.1


def test_a_seek_curve_that_cannot_exist_is_named_in_the_profile(tmp_path):
    text = load_text(BARRACUDA).replace('average_seek = { value = "8.5ms"', 'average_seek = { value = "16.9ms"')
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ProfileError) as e:
        device_core(p)
    msg = str(e.value)
    assert "bad.toml:" in msg and "mechanics.average_seek" in msg and "α, β ≥ 0" in msg


def load_text(name: str) -> str:
    from ssdlab.config.profile import profile_text
    return profile_text(name)


def test_write_cache_off_writes_through():
    job = _job("randwrite", "4k", 1, "1m")
    cached = ssdlab.run(job, profile=BARRACUDA, seed=1)
    direct = ssdlab.run(job, profile=BARRACUDA, seed=1, profile_set={"cache.write_back": "false"})
    a, b = (x.to_fio_json()["jobs"][0]["write"]["clat_ns"]["mean"] for x in (cached, direct))
    assert a < 0.2 * b
    assert cached.internal("sda")["cached_writes"] == 256
