# SPDX-License-Identifier: Apache-2.0
"""The device-memory plan (memory/device_plan.py), host arithmetic only:
whatever the budget, what the plan holds at its peak fits it; more memory
never streams more; the matrices and copies ahead give way before the SRS
does; a budget below the H phase is a named error; and `gpu plan` prints it."""
import math
import random

import pytest

from porep_prover.cli import main
from porep_prover.errors import DeviceMemoryError, InvalidInputError
from porep_prover.memory.costs import (UPLOAD_RATE, compact_twiddle_seconds, pass_bytes, pass_window_bits,
                                       region_seconds, twiddle_bytes)
from porep_prover.memory import device_plan
from porep_prover.memory.device_plan import RING, DevicePlan, plan
from porep_prover.memory.sizes import GIB, MARGIN, SMALL_BUFFERS
from porep_prover.memory.workload import SrsShape, Workload

STATS = dict(inputs=329, a_density=0.997, b_density=0.254, nonzeros=(2.4, 1.0, 2.2))


def porep(scale=1.0, on_device=True) -> Workload:
    return Workload.estimated(round(130_278_869 * scale), aux=round(130_169_893 * scale), on_device=on_device,
                              **STATS)


def planned(workload: Workload, gib: float, workers=2, copies=0, g2=True, **kw) -> DevicePlan:
    """workload's plan under gib GiB for workers device workers, copies H window-table copies wanted and g2."""
    return plan(workload, int(gib * GIB), workers, copies, g2, **kw)


def test_a_large_budget_keeps_everything_in_one_pass():
    p = planned(porep(), 139)
    assert set(p.resident) == {"h", "l", "a", "b_g1", "b_g2"} and not p.streamed
    assert p.matrices and p.ahead and p.pass_points == max(a.count for a in p.arrays)
    assert p.streamed_bytes == 0 and p.transfer_seconds() == 0


def test_an_80_gb_card_keeps_the_srs_and_sorts_h_in_passes():
    p = planned(porep(), 80)
    assert not p.streamed and p.matrices
    assert p.pass_points < len_h(p)                      # the whole H sort does not fit beside the SRS
    assert p.planned_bytes <= 80 * GIB


def len_h(p: DevicePlan) -> int:
    return p.workload.array("h").count


@pytest.mark.parametrize("gib", [14, 16, 24, 32, 48, 64, 80, 96, 139])
def test_the_planned_peak_fits_the_budget(gib):
    for on_device in (True, False):
        p = planned(porep(on_device=on_device), gib)
        assert p.planned_bytes <= p.budget
        assert p.resident_bytes + p.ring_bytes + MARGIN + SMALL_BUFFERS <= p.budget
        assert set(p.resident) | set(p.streamed) == {a.name for a in p.arrays}
        assert not set(p.resident) & set(p.streamed)
        if p.streamed:
            assert p.chunk_bytes >= 64 << 20 and p.chunk_points(2) <= p.pass_points


@pytest.mark.parametrize("on_device", [True, False])
def test_more_memory_never_costs_more(on_device):
    """The plan's estimated seconds never grow with the budget. (The bytes
    streamed may: at 25.25 GiB streaming B_1 and B_2 too in fewer, larger
    passes costs less than keeping them resident under smaller passes at 25.)"""
    rnd = random.Random()
    budgets = sorted(rnd.uniform(14, 160) for _ in range(24))
    plans = [planned(porep(on_device=on_device), b) for b in budgets]
    seconds = [p.seconds for p in plans]
    assert seconds == sorted(seconds, reverse=True), list(zip(budgets, seconds))
    assert planned(porep(on_device=on_device), 160).streamed_bytes == 0


def test_a_budget_below_the_h_phase_is_named():
    with pytest.raises(DeviceMemoryError, match="too small for a domain of 2\\^27: at least"):
        planned(porep(), 8)
    with pytest.raises(InvalidInputError):
        plan(porep(), 0)
    with pytest.raises(InvalidInputError):
        plan(Workload(SrsShape(0, 10, 10, 10, 10, 1)), 80 * GIB)        # a domain of 1
    with pytest.raises(InvalidInputError):
        plan(porep(), 80 * GIB, workers=0)
    with pytest.raises(InvalidInputError):
        Workload(SrsShape(10, 10, 10, 10, 10, 1), matrix_bytes=-1)


def test_the_ntt_twiddles_count_against_the_budget():
    """The NTT's twiddles (w^e for e < n/2, forward and inverse, kept for
    the device's life) are planned: whole, 4 GiB at 2^27, where the room
    is worth less than a product a butterfly more; compact (two small
    tables a direction, 1 MiB) where it is worth more, or needed: a
    scale-1 H phase (a, b, c: 12 GiB) beside whole tables takes 17.5 GiB."""
    assert twiddle_bytes(1 << 27) == 4 * GIB and twiddle_bytes(1 << 27, compact=True) == 2 * 32 * 2 * 8192
    assert twiddle_bytes(1 << 10) == 32 << 10 and twiddle_bytes(2, compact=True) == 2 * 32 * 3
    for gib in (16, 20, 32, 80, 139):
        p = planned(porep(), gib)
        h_phase = 3 * 32 * p.workload.domain + (p.upload_bytes if p.matrices else 0)
        held = MARGIN + SMALL_BUFFERS + twiddle_bytes(p.workload.domain, p.compact_twiddles) + h_phase \
            + p.resident_bytes + p.ring_bytes
        assert held <= p.planned_bytes <= p.budget
        if gib == 16:                    # whole tables leave no room for the H phase
            assert p.compact_twiddles
            assert p.seconds >= compact_twiddle_seconds(p.workload.domain)
        if gib == 139:                   # nothing to gain by their room
            assert not p.compact_twiddles
    least = math.ceil((MARGIN + SMALL_BUFFERS + twiddle_bytes(1 << 27, True) + RING * (64 << 20)
                       + 3 * 32 * (1 << 27)) / GIB * 10) / 10
    with pytest.raises(DeviceMemoryError, match=f"at least {least:.1f} GiB .*compact NTT twiddles"):
        planned(porep(), 13)
    assert planned(porep(), least).compact_twiddles         # the least it names is enough


def test_window_tables_only_beside_a_resident_h():
    roomy = planned(porep(), 139, copies=2)
    assert roomy.table_copies == 2 and roomy.planned_bytes <= roomy.budget
    assert planned(porep(), 16, copies=2).table_copies == 0


def test_a_pass_s_work_grows_with_its_points():
    sizes = [1 << k for k in range(16, 28)]
    work = [pass_bytes(n) for n in sizes]
    assert work == sorted(work)
    assert all(4 <= pass_window_bits(n) <= 22 for n in sizes)
    assert pass_bytes(1 << 27) > 8 * (1 << 27) * 12      # keys and entries of 12 windows at least


def test_the_ring_holds_three_chunks():
    p = planned(porep(), 24)
    assert p.streamed and p.ring_bytes == RING * p.chunk_bytes


@pytest.mark.parametrize("gib", [16, 24, 32, 48, 80])
def test_b_g2_on_the_host_leaves_its_points_out_of_the_plan(gib):
    """prover.b_g2 = host: the G2 points are neither held nor streamed, and
    the room they took goes to the G1 arrays: never more of them streamed,
    never a higher estimate, and a lower one wherever B_2 was held or
    streamed."""
    on, off = planned(porep(), gib), planned(porep(), gib, g2=False)
    assert "b_g2" not in off.resident + off.streamed and off.array("b_g2") is None
    assert off.planned_bytes <= off.budget
    g1 = {"h", "l", "a", "b_g1"}
    assert sum(off.workload.array(n).nbytes for n in g1 & set(off.streamed)) \
        <= sum(on.workload.array(n).nbytes for n in g1 & set(on.streamed))
    assert off.seconds < on.seconds


def test_a_streamed_array_s_passes_are_its_chunks():
    """A streamed chunk is sorted and summed as it arrives (a pass of its
    own), so the estimate of streaming H grows as its chunks shrink, and
    even 1 GiB chunks (11 M points) cost more passes than 2^25-point
    passes over a resident H; its first chunk is waited for whole."""
    arrays, points = device_plan.on_device(porep(), True), 1 << 25
    resident = region_seconds(arrays, points, 0, UPLOAD_RATE)
    large, small = (region_seconds(arrays, points, 0, UPLOAD_RATE, {"h"}, chunk) for chunk in (1 << 30, 64 << 20))
    assert small > large > resident
    # a chunk of a whole pass: the passes of a resident H, and the first chunk, which its kernels wait for
    whole = region_seconds(arrays, points, 0, UPLOAD_RATE, {"h"}, 96 * points)
    assert whole == pytest.approx(resident + 96 * points / UPLOAD_RATE)


def test_gpu_plan_prints_the_plan(capsys):
    host = ["--host-memory-gib", "256"]
    assert main(["gpu", "plan", "--device-memory-gib", "20", *host]) == 0
    out = capsys.readouterr().out
    assert "device budget 20.0 GiB" in out and "streamed:" in out and "GB/s" in out and "NTT twiddles compact" in out
    assert main(["gpu", "plan", "--scale", "0.0625", "--device-memory-gib", "32", *host]) == 0
    assert "streamed: nothing" in capsys.readouterr().out
    assert main(["gpu", "plan", "--device-memory-gib", "32", "--b-g2", "host", *host]) == 0
    out = capsys.readouterr().out
    assert "b_g2" not in out and "b_g1" in out
    assert main(["gpu", "plan", "--device-memory-gib", "4", *host]) == 2          # a named error, one line
    assert "too small" in capsys.readouterr().err


@pytest.mark.parametrize("gib", [22, 24])
def test_a_pair_sharing_each_streamed_pass_halves_a_partition_s_transfer(gib):
    """pairs: where arrays are streamed and a second partition's scalars
    fit, two partitions a region may upload each streamed chunk once for
    both (where the streamed bytes' exposed share outweighs the room the
    second partition takes: at 22-26 GiB, not at 28-48 GiB, where the
    matrices or resident arrays would leave the device):
    the chosen plan's streamed bytes a partition are half its arrays', its
    estimate below the best unpaired plan's, and its peak, the other
    partition's witness and H scalars included, within the budget."""
    w, budget = porep(), gib * GIB
    alone, paired = plan(w, budget), plan(w, budget, pairs=True)
    assert not alone.paired and paired.paired and paired.streamed
    assert paired.streamed_per_partition == paired.streamed_bytes / 2
    assert paired.seconds < alone.seconds and paired.transfer_seconds() < alone.transfer_seconds()
    assert paired.planned_bytes <= budget and not paired.ahead


@pytest.mark.parametrize("gib,workers", [(16, 2), (80, 2), (139, 2), (32, 1)])
def test_no_pair_where_it_does_not_fit_stream_or_have_a_second_worker(gib, workers):
    """16 GiB: a second partition's scalars do not fit beside the H phase;
    80 and 139 GiB: nothing, or too little, is streamed to gain; one worker:
    no second partition to pair. The unpaired plan, as without pairs."""
    w = porep()
    got = planned(w, gib, workers, pairs=True)
    assert not got.paired and got == planned(w, gib, workers)


def test_gpu_plan_weighs_pairs_when_asked(capsys):
    assert main(["gpu", "plan", "--device-memory-gib", "24", "--pairs", "--host-memory-gib", "256"]) == 0
    assert "paired: two partitions a region" in capsys.readouterr().out
    assert main(["gpu", "plan", "--device-memory-gib", "24", "--host-memory-gib", "256"]) == 0
    assert "paired" not in capsys.readouterr().out
