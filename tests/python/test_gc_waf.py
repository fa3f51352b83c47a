"""The WAF-vs-spare experiment: simulated greedy GC near the Desnoyers model, less WAF with more spare."""

import math

import pytest

from ssdlab.experiments.gc_waf import desnoyers_waf, reproduce


def test_model_fixed_point_and_a_published_value():
    a = 1 - 1 / desnoyers_waf(1.3)
    assert a == pytest.approx(math.exp(-1.3 * (1 - a)), abs=1e-9)
    assert desnoyers_waf(1.3) == pytest.approx(2.36, abs=0.01)  # quoted by Xiang & Kurkoski 2012


def test_simulated_waf_follows_the_model(tmp_path):
    table = reproduce(blocks=[80, 130], runtime=2.0, workdir=tmp_path)
    assert (table.ratio > 0.80).all() and (table.ratio < 1.05).all(), table
    assert table.waf_simulated.iloc[0] > table.waf_simulated.iloc[1]
