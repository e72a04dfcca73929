# SPDX-License-Identifier: Apache-2.0
"""The GPU kernels' tuning without a device: MsmTuning and NttTuning default
to production's choices (the plan's, the measured best), are frozen, and
name a value out of range; the NTT's pass launches follow the tuning's
build and shape (recorded on a stand-in for the backend)."""
import contextlib
import dataclasses
import random
import types

import pytest

from porep_prover.errors import InvalidInputError
from porep_prover.field.constants import FR_GENERATOR
from porep_prover.msm.gpu import GpuMsm
from porep_prover.msm.gpu.plan import COMPACT_SHARE, MAX_CHUNK, OVERLAP_GROUPS, MsmTuning
from porep_prover.ntt import gpu as gpu_ntt
from porep_prover.ntt.gpu import GpuNtt, NttTuning, passes


def test_defaults_are_production_s_choices():
    plan = MsmTuning()
    assert (plan.variant, plan.window_bits, plan.table_bits, plan.fill_parts, plan.overlap, plan.grouped) == \
        ("", None, None, None, None, None)
    assert (plan.max_chunk, plan.compact_share, plan.groups) == (MAX_CHUNK, COMPACT_SHARE, OVERLAP_GROUPS)
    assert GpuMsm(None).tuning == plan
    assert NttTuning() == NttTuning("ntt", gpu_ntt.BLOCK_LOG, gpu_ntt.THREADS) == GpuNtt(None).tuning
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.fill_parts = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        NttTuning().block_log = 11
    assert dataclasses.replace(plan, fill_parts=3).fill_parts == 3 and plan.fill_parts is None


@pytest.mark.parametrize("field,value", [("variant", "a.b"), ("variant", 1), ("window_bits", 3), ("window_bits", 23),
                                         ("window_bits", 8.0), ("table_bits", 3), ("table_bits", 25),
                                         ("fill_parts", 0), ("fill_parts", True), ("max_chunk", 0),
                                         ("max_chunk", None), ("groups", 0), ("groups", 257), ("overlap", "yes"),
                                         ("grouped", 2), ("compact_share", -0.1), ("compact_share", 1.5),
                                         ("compact_share", "half")])
def test_msm_tuning_out_of_range_is_named(field, value):
    with pytest.raises(InvalidInputError, match=f"MsmTuning: {field} "):
        MsmTuning(**{field: value})


@pytest.mark.parametrize("field,low,high", [("window_bits", 4, 22), ("table_bits", 4, 24), ("fill_parts", 1, 64),
                                            ("max_chunk", 1, 4096), ("groups", 1, 256)])
def test_msm_tuning_takes_its_bounds(field, low, high):
    """Each bound's ends are taken: table_bits from 4, as window_bits (a table
    of windows narrower than table_plan's 8 is valid, only slow; the device
    tests' stretches without buckets take one of 4)."""
    for value in (low, high):
        assert getattr(MsmTuning(**{field: value}), field) == value


@pytest.mark.parametrize("field,value", [("module", "msm_g1"), ("module", None), ("block_log", 9),
                                         ("block_log", 13), ("threads", 0), ("threads", 1025), ("threads", 64.0)])
def test_ntt_tuning_out_of_range_is_named(field, value):
    with pytest.raises(InvalidInputError, match=f"NttTuning: {field} "):
        NttTuning(**{field: value})


def test_only_a_tuning_is_taken():
    with pytest.raises(InvalidInputError, match="MsmTuning"):
        GpuMsm(None, {"fill_parts": 2})
    with pytest.raises(InvalidInputError, match="NttTuning"):
        GpuNtt(None, MsmTuning())


class Kernel:
    def __init__(self, device, module):
        self.device, self.module, self.shared = device, module, None

    def set_max_dynamic_shared(self, nbytes):
        self.shared = nbytes

    def launch(self, grid, block, args, stream, shared=0):
        self.device.passes.append((self.module, grid[0], block[0], shared, *args[7:10]))   # b_lo, k, m
        self.device.twiddle_args.append((args[2], args[3], args[11]))                        # tw, tw_hi, tw_bits


class Device:
    """What GpuNtt asks of a GpuBackend's device, launches recorded (nothing computed); its memory its own."""

    def __init__(self):
        self.lock, self.stream, self.passes, self.kernels = contextlib.nullcontext(), object(), [], {}
        self.twiddle_args, self.allocs, self.freed, self.launched = [], [], [], []
        self.memory = self

    def kernel(self, module, name):
        assert name == "ntt_pass"
        return self.kernels.setdefault(module, Kernel(self, module))

    def alloc(self, nbytes):
        buf = types.SimpleNamespace(nbytes=nbytes)
        self.allocs.append(buf)
        return buf

    def upload(self, array):
        return self.alloc(array.nbytes)

    def launch(self, module, name, n, args):
        assert module == "ntt"                       # the tables come from the backend's own build
        self.launched.append(name)

    def free(self, *bufs):
        self.freed.extend(bufs)


def freed(dev, buf):
    return any(b is buf for b in dev.freed)


def test_compact_twiddles_hold_two_small_tables_a_direction():
    """compact_twiddles: a 2^27 transform's passes read w^e as lo[e & mask]
    hi[e >> bits] (no 2 GiB table made, no fr_powers launched), the whole
    table otherwise; switching frees the other kind's tables."""
    log_n = 27
    dev = Device()
    ntt = GpuNtt(dev)
    ntt.forward(object(), object(), log_n, FR_GENERATOR, None)
    whole = ntt.twiddles(FR_GENERATOR, log_n, False)
    assert whole.bits == 0 and whole.hi == 0 and whole.lo.nbytes == 32 << (log_n - 1)
    assert dev.launched == ["fr_powers"] and all(a[0] is whole.lo and a[1:] == (0, 0) for a in dev.twiddle_args)
    ntt.set_compact_twiddles(True)
    assert freed(dev, whole.lo)
    dev.twiddle_args.clear()
    ntt.forward(object(), object(), log_n, FR_GENERATOR, None)
    compact = ntt.twiddles(FR_GENERATOR, log_n, False)
    assert compact.bits == 13 and compact.lo.nbytes == 32 << 13 and compact.hi.nbytes == 32 << 13
    assert dev.launched == ["fr_powers"]                              # none more: the small tables are the twiddles
    assert dev.twiddle_args and all(a[0] is compact.lo and a[1] is compact.hi and a[2] == 13
                                    for a in dev.twiddle_args)
    ntt.set_compact_twiddles(True)                                    # no change: nothing freed
    assert not freed(dev, compact.lo)
    ntt.set_compact_twiddles(False)
    assert freed(dev, compact.lo) and freed(dev, compact.hi)


@pytest.mark.parametrize("tuning", [NttTuning(), NttTuning("ntt.align4", 12, 512), NttTuning("ntt", 11, 64)])
def test_ntt_passes_follow_the_tuning(tuning):
    """Each pass of a transform launches the tuning's build with blocks of at
    most its threads, half a block's elements each, and shared memory for
    2^(k + m) elements, at most 2^block_log; the passes' stages cover log n."""
    log_n = random.randrange(1, 27)
    dev = Device()
    GpuNtt(dev, tuning).forward(object(), object(), log_n, FR_GENERATOR, None)
    assert [p[0] for p in dev.passes] == [tuning.module] * len(passes(log_n))
    for (_module, grid, block, shared, b_lo, k, m), want in zip(dev.passes, passes(log_n)):
        assert (b_lo, k) == want and m == min(b_lo, tuning.block_log - k)    # as wide as a block holds
        elements = 2 ** (k + m)
        assert shared == 32 * elements and elements <= 2 ** tuning.block_log
        assert block == min(tuning.threads, max(1, elements // 2))
        assert grid * elements == 2 ** log_n
    assert sum(p[5] for p in dev.passes) == log_n
    want_shared = 32 << tuning.block_log if tuning.block_log > gpu_ntt.SHARED_LOG else None
    assert dev.kernels[tuning.module].shared == want_shared
