# SPDX-License-Identifier: Apache-2.0
"""A GPU backend run by a device-memory plan, on the device: MSMs in passes
over resident points and over points streamed through the chunk ring equal
the CPU's, msm_shared takes its MSMs apart where an array streams, a proof
under a plan that streams every array verifies and moves what the plan
says, and the budget refuses an allocation past it."""
import dataclasses

import pytest

from gpu_inputs import random_fr, random_points
from porep_prover import G1Array, G2Array
from porep_prover.backend import get_backend, gpu_available
from porep_prover.circuits import porep_like
from porep_prover.cuda.arrays import DeviceScalars
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.errors import DeviceMemoryError, InvalidInputError
from porep_prover.groth16 import insecure_setup, verify
from porep_prover.groth16.prover import finish, prove_device, synthesize
from porep_prover.memory.device_plan import plan
from porep_prover.memory.layout import Layout, layout_of
from porep_prover.memory.sizes import GIB, MARGIN
from porep_prover.memory.workload import Workload

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="no CUDA device")]

CPU = get_backend("cpu")


@pytest.fixture
def planned(gpu):
    """The GPU backend; its plan, passes and streamed arrays dropped after the test."""
    yield gpu
    gpu.release_plan()
    store = gpu.memory.resident
    assert store.pass_points == 0 and not store._streamed and store.budget == gpu.memory.default_resident_budget


@pytest.mark.parametrize("onto", [False, True], ids=["into", "onto"])
@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
@pytest.mark.parametrize("streamed", [False, True], ids=["resident", "streamed"])
def test_msm_in_passes_matches_cpu(planned, cls, streamed, onto, rng, monkeypatch):
    """An MSM in passes (over its resident copy, or streamed), each later
    pass's entries added to the buckets as a run ends (into) or the runs
    started from the buckets (onto): the CPU's sums."""
    monkeypatch.setattr(planned.msm_ops, "onto", onto)
    n = rng.randrange(20000, 40000)
    pts, sc = random_points(cls, rng, n), random_fr(n, rng)
    want = CPU.msm(pts, sc, 2)[0]
    store = planned.memory.resident
    store.pass_points = rng.randrange(3000, 9000)
    if streamed:
        store.stream_arrays([pts.limbs], pts.limbs.shape[1] * 8 * rng.randrange(1000, 4000))
        assert store.is_streamed(pts) and not store.is_resident(pts.limbs)
    spans = [(a, b) for a, b, _ in planned.memory.resident.point_chunks(pts)]
    assert spans[0][0] == 0 and spans[-1][1] == n and all(b == c for (_, b), (c, _) in zip(spans, spans[1:]))
    assert len(spans) > 1 and max(b - a for a, b in spans) <= store.pass_points
    assert planned.msm(pts, sc, 1)[0] == want
    on_device = DeviceScalars(planned.memory, planned.memory.upload(sc.limbs), n)
    try:
        assert planned.msm(pts, on_device, 1)[0] == want
    finally:
        on_device.close()
    assert planned.batch_sum(pts, 1) == CPU.batch_sum(pts, 1)
    if streamed:
        assert store.ring is not None and store.ring.uploaded >= 3 * pts.limbs.nbytes
        assert not store.is_resident(pts.limbs)


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
def test_one_streamed_pass_serves_two_scalar_sets(planned, cls, rng):
    """msm_sets over a streamed array: each set's sum is the CPU's, and the
    array crosses the bus once for both sets (what two msm calls move twice)."""
    n = rng.randrange(20000, 40000)
    pts, sets = random_points(cls, rng, n), [random_fr(n, rng) for _ in range(2)]
    want = [CPU.msm(pts, sc, 2)[0] for sc in sets]
    store = planned.memory.resident
    store.pass_points = rng.randrange(3000, 9000)
    store.stream_arrays([pts.limbs], pts.limbs.shape[1] * 8 * rng.randrange(1000, 4000))
    planned.msm(pts, sets[0], 1)                          # the ring made and warm
    store.ring.forget()                                   # no first chunks uploaded ahead of a reading
    before = store.ring.uploaded
    got = planned.msm_ops.msm_sets(pts, sets)
    once = store.ring.uploaded - before
    assert [total for total, _ in got] == want and once == pts.limbs.nbytes
    for sc in sets:
        store.ring.forget()
        planned.msm(pts, sc, 1)
    assert store.ring.uploaded - before - once == 2 * pts.limbs.nbytes


def test_msm_shared_takes_its_msms_apart_where_an_array_streams(planned, rng):
    n = rng.randrange(5000, 9000)
    a, b = random_points(G1Array, rng, n), random_points(G1Array, rng, n)
    sc = random_fr(n, rng)
    want = [CPU.msm(a, sc, 2)[0], CPU.msm(b, sc, 2)[0]]
    planned.memory.resident.stream_arrays([b.limbs], 96 * 1000)
    assert planned.msm_ops.msm_shared([(a, None), (b, None)], sc) is None
    assert planned.msm_shared([(a, None), (b, None)], sc, 1) == want


def _streaming_plan(gpu, params, r1cs, rng, gathers=False):
    """A plan for params that streams every array in small chunks and sorts small passes."""
    made = plan(Workload.of(params, r1cs, on_device=r1cs is not None), 8 * GIB, workers=1, matrices=r1cs is not None,
                gathers=gathers)
    assert made.gathers == gathers
    names = tuple(a.name for a in made.arrays)
    return dataclasses.replace(made, resident=(), streamed=names, pass_points=rng.randrange(700, 1500),
                               chunk_bytes=192 * rng.randrange(300, 900))


@pytest.mark.parametrize("mode", ["host", "device", "gathers"], ids=["host matvec", "device matvec", "gathers"])
def test_proof_under_a_streaming_plan_verifies(planned, mode, rng):
    """prove_device(plan=...): the region lays the memory out by the plan
    (every array streamed and pinned, small passes) and the proof verifies;
    a second region by the same plan lays nothing out again. gathers: a, b,
    c from the host, the witness uploaded and the queries' scalars taken
    from it on the device."""
    on_device = mode == "device"
    r1cs, witness, public = porep_like(rng.randrange(2500, 4000))
    params = insecure_setup(r1cs, rng=rng)
    chosen = _streaming_plan(planned, params, r1cs if on_device else None, rng, gathers=mode == "gathers")
    store = planned.memory.resident
    ring = store.ring
    before = ring.uploaded if ring is not None else 0
    layouts = []
    for _ in range(2):
        synth = synthesize(params, r1cs, witness, 2, abc_on_device=on_device, gathers=mode == "gathers")
        sums = prove_device(planned, params, synth, 1, b_g2=True, host=CPU, plan=chosen)
        layouts.append(planned.memory.layout)
        assert layouts[-1] == layout_of(chosen, params) and layouts[-1] is layouts[0]
        assert planned.memory.pins.pinned_bytes() >= chosen.streamed_bytes
        proof = finish(planned, params, synth, sums, 1, rng=rng)
        assert verify(params.vk, public, proof)
    # the plan's chunks may make a new ring, whose count starts from nothing
    assert store.ring.uploaded - (before if store.ring is ring else 0) >= 2 * chosen.streamed_bytes
    assert not any(store.is_resident(getattr(params, n).limbs) for n in chosen.streamed)


def test_budget_refuses_what_passes_it(planned):
    """A layout's budget bounds what the device hands out while it is laid
    out (a large card standing in for a small one); a budget inside the
    margin is refused; released, the card's memory is the budget again."""
    planned.memory.lay_out(Layout(MARGIN + (256 << 20)))
    status = planned.memory_status()
    assert status["budget"] == MARGIN + (256 << 20) and planned.device.ctx.limit == 256 << 20
    with pytest.raises(DeviceMemoryError, match="budget"):
        planned.memory.alloc(512 << 20)
    buf = planned.memory.alloc(64 << 20)
    assert planned.memory_status()["allocated"] >= 64 << 20
    planned.memory.free(buf)
    with pytest.raises(InvalidInputError, match="budget"):
        planned.device_budget(MARGIN // 2)
    planned.release_plan()
    assert planned.memory_status()["budget"] == planned.memory_status()["total"] == planned.device_budget()


def test_engine_proves_under_a_device_budget_and_reports_it(rng):
    r1cs, witness, public = porep_like(3001)
    params = insecure_setup(r1cs, rng=rng)
    cfg = load_config(overrides={"engine.devices": ["gpu:0"], "engine.device_memory_gib": 3.0,
                                 "engine.partition_workers": 2})
    try:
        with Engine(cfg) as engine:
            result = engine.prove(inline_job(params, r1cs, [witness] * 3), timeout=300)
            memory = engine.devices[0].backend.memory_status()
            (key,) = [s["key"] for s in engine.srs.status()]
            chosen = engine.plans.get(key)
        assert result.ok and all(verify(params.vk, public, p) for p in result.proofs)
        assert memory["budget"] == 3 * GIB and 0 < memory["peak"] <= 3 * GIB - MARGIN
        assert memory["planned"] is not None and memory["planned"] <= 3 * GIB
        assert chosen.device is not None and chosen.device.budget == 3 * GIB and memory["dropped"] == 0
    finally:
        gpu = get_backend("gpu")                        # the engine left the process's backend unplanned
        assert gpu.memory.resident.pass_points == 0 and gpu.memory.layout.planned is None
