# SPDX-License-Identifier: Apache-2.0
"""The device lane's speed guard: the small kernel region of
porep_prover.bench.speed_guard at the card's budget is no more than 10 %
slower than the figure recorded for this card (benchmarks/device_figures.json;
benchmarks/speed_guard.py --record writes one), so that a change made
without a GPU that slows the GPU fails here the next time one is lent. A
card without a recorded figure is skipped, naming how to record one."""
import json
import pathlib

import pytest

from porep_prover.backend import gpu_available
from porep_prover.bench.speed_guard import TOLERANCE, read_figures, record, region_ms

FIGURES = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "device_figures.json"


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="no CUDA device")
def test_the_card_s_region_is_no_slower_than_its_recorded_figure(gpu):
    known = read_figures(FIGURES).get(gpu.info.name)
    if known is None:
        pytest.skip(f"no figure recorded for {gpu.info.name}: python3 benchmarks/speed_guard.py --record")
    ms = region_ms(gpu)
    assert ms <= known["region_ms"] * (1 + TOLERANCE), (
        f"{gpu.info.name}: the guard's region took {ms:.2f} ms, {ms / known['region_ms'] - 1:+.1%} against the "
        f"{known['region_ms']:.2f} ms recorded at {known['tree']} on {known['date']}")


def test_figures_are_recorded_per_card_and_kept(tmp_path):
    """The table: one entry a card, written beside the others (no device needed)."""
    path = tmp_path / "figures.json"
    assert read_figures(path) == {}
    record(path, "NVIDIA H100 80GB HBM3", 41.25, "abc1234", "2026-12-07")
    record(path, "NVIDIA H200", 30.5, "def5678", "2026-12-07")
    record(path, "NVIDIA H100 80GB HBM3", 40.0, "0123abc", "2026-12-08")
    got = json.loads(path.read_text())
    assert got["NVIDIA H200"]["region_ms"] == 30.5 and got["NVIDIA H100 80GB HBM3"]["tree"] == "0123abc"
    assert read_figures(FIGURES) == {} or all("region_ms" in v for v in read_figures(FIGURES).values())
