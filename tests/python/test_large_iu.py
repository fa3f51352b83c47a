"""Seed 004's large indirection unit: WAF from read-modify-write matches the analytic count."""

import pytest

from ssdlab.experiments.large_iu import analytic_waf, reproduce


def test_analytic_counts():
    iu = 16384
    assert analytic_waf(4096, 0, iu) == 4.0
    assert analytic_waf(16384, 0, iu) == 1.0
    assert analytic_waf(16384, 4096, iu) == 2.0
    assert analytic_waf(65536, 4096, iu) == 1.25


def test_simulated_waf_equals_analytic_on_the_qlc_drive():
    table = reproduce(writes=600)
    assert len(table) == 12
    for row in table.itertuples():
        assert row.waf_simulated == pytest.approx(row.waf_analytic, rel=0.01), row
    # 4 KiB random writes on a 16 KiB IU: WAF 4 from RMW alone; aligned 16 KiB: 1.
    four = table[(table.write_size_kib == 4) & (table.offset_kib == 0)].waf_simulated.item()
    sixteen = table[(table.write_size_kib == 16) & (table.offset_kib == 0)].waf_simulated.item()
    assert four == pytest.approx(4.0, rel=0.01) and sixteen == pytest.approx(1.0, rel=0.01)
