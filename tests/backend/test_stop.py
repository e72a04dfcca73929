# SPDX-License-Identifier: Apache-2.0
"""A job's stop flag (backend.stop) as the host's kernels read it: an MSM,
an H polynomial and a kernel region whose flag is set end with
JobCancelledError (an MSM set from another thread while it runs ends
within a window task, long before it would have finished); a clear flag
changes no result; a device's region that does not stop between its
steps (a GPU's by default) runs to its end."""
import contextlib
import threading
import time
import types

import numpy as np
import pytest

from porep_prover import FrArray, G1Array, G2Array, config
from porep_prover.backend import Capabilities, get_backend
from porep_prover.backend.stop import StopFlag, current_stop, raise_if_stopped, stop_scope
from porep_prover.errors import InvalidInputError, JobCancelledError
from porep_prover.field.constants import R
from porep_prover.groth16.region import MsmStep, run_region
from porep_prover.groth16.prover import Stopwatch

CPU = get_backend("cpu")


def _points(cls, rng, n: int, distinct: int = 64):
    """n points, `distinct` random ones repeated (an MSM's cost, not its setup's)."""
    base = cls.generator().scale([rng.randrange(1, R) for _ in range(distinct)])
    return cls(np.ascontiguousarray(np.tile(base.limbs, (n // distinct, 1))))


@pytest.mark.parametrize("cls", [G1Array, G2Array])
def test_a_clear_flag_changes_no_msm_and_a_set_one_stops_it(cls, rng):
    points, scalars = _points(cls, rng, 4096), FrArray.random(4096, rng)
    plain = CPU.msm(points, scalars, 2)[0]
    flag = StopFlag()
    with stop_scope(flag):
        assert current_stop() is flag
        assert CPU.msm(points, scalars, 2)[0] == plain
        flag.set()
        with pytest.raises(JobCancelledError, match="stopped"):
            CPU.msm(points, scalars, 2)
    assert current_stop() is None
    assert CPU.msm(points, scalars, 2)[0] == plain          # outside the scope nothing reads it


def test_a_set_flag_stops_the_h_polynomial(rng):
    n = 1 << 12
    a, b, c = (FrArray.random(n, rng) for _ in range(3))
    want = CPU.h_poly(a.copy(), b.copy(), c.copy(), 2)
    flag = StopFlag()
    with stop_scope(flag):
        assert CPU.h_poly(a.copy(), b.copy(), c.copy(), 2) == want
        flag.set()
        with pytest.raises(JobCancelledError):
            CPU.h_poly(a.copy(), b.copy(), c.copy(), 2)
    with stop_scope(flag), pytest.raises(JobCancelledError):
        raise_if_stopped()


def test_a_set_flag_stops_a_region_before_its_next_step(rng):
    points, scalars = _points(G1Array, rng, 256), FrArray.random(256, rng)
    steps = [MsmStep(("a",), ((points, None),), scalars)]
    flag = StopFlag()
    with stop_scope(flag):
        assert run_region(CPU, steps, 1, Stopwatch(None))["a"] == CPU.msm(points, scalars, 1)[0]
        flag.set()
        with pytest.raises(JobCancelledError, match="kernel region"):
            run_region(CPU, steps, 1, Stopwatch(None))


def test_a_flag_set_while_an_msm_runs_ends_it_early(rng):
    """An MSM of 2^20 full scalars, its flag set 50 ms in: it ends, stopped,
    in a small part of the time it takes whole."""
    points, scalars = _points(G1Array, rng, 1 << 20), FrArray.random(1 << 20, rng)
    start = time.perf_counter()
    CPU.msm(points, scalars, 2)
    whole = time.perf_counter() - start
    flag = StopFlag()
    timer = threading.Timer(0.05, flag.set)
    start = time.perf_counter()
    timer.start()
    with stop_scope(flag), pytest.raises(JobCancelledError):
        CPU.msm(points, scalars, 2)
    stopped = time.perf_counter() - start
    timer.join()
    assert stopped < 0.05 + max(0.5, whole / 3), f"stopped after {stopped:.2f} s, the whole MSM takes {whole:.2f} s"


class _RunsToEnd:
    """A device double whose region does not stop between steps (a GPU's,
    unless POREP_PROVER_GPU_REGION_STOP=1): its lane sums on the host's
    MSM, which reads the flag of the scope it runs in (run_region clears it)."""

    capabilities = Capabilities(evaluates_witness=False, reference=False, stops_between_steps=False)

    def __init__(self):
        self.calls = 0

    def msm(self, points, scalars, threads):
        self.calls += 1
        return CPU.msm(points, scalars, threads)

    @contextlib.contextmanager
    def region(self, plan=None, arrays=None, options=None, overlap=False):
        yield types.SimpleNamespace(main=self, side=None, join=lambda: None)


def test_a_device_that_does_not_stop_between_steps_runs_its_region_to_the_end(rng):
    points, scalars = _points(G1Array, rng, 256), FrArray.random(256, rng)
    steps = [MsmStep(("a",), ((points, None),), scalars), MsmStep(("b",), ((points, None),), scalars)]
    device, flag = _RunsToEnd(), StopFlag()
    flag.set()
    with stop_scope(flag):
        sums = run_region(device, steps, 1, Stopwatch(None))
    assert device.calls == 2 and sums["a"] == sums["b"] == CPU.msm(points, scalars, 1)[0]


@pytest.mark.parametrize("value, stops", [(None, False), ("0", False), ("1", True)])
def test_the_gpu_region_stop_setting(monkeypatch, value, stops):
    if value is None:
        monkeypatch.delenv("POREP_PROVER_GPU_REGION_STOP", raising=False)
    else:
        monkeypatch.setenv("POREP_PROVER_GPU_REGION_STOP", value)
    assert config.gpu_region_stop() is stops
    monkeypatch.setenv("POREP_PROVER_GPU_REGION_STOP", "2")
    with pytest.raises(InvalidInputError, match="POREP_PROVER_GPU_REGION_STOP"):
        config.gpu_region_stop()
