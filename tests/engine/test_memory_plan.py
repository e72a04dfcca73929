"""The host side of the memory plan (memory.host_plan), the admission by
it (engine.memory) and partitions laid out in arenas: on the CPU, no device."""
import random
import threading
import types

import numpy as np
import pytest

from porep_prover.circuits import porep_like
from porep_prover.cli import main
from porep_prover.cli.plan_cmds import POREP_32G
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.engine.memory import MemoryAdmission
from porep_prover.memory import budgets as host
from porep_prover.memory.budgets import cgroup_limit_bytes
from porep_prover.memory.device_plan import plan
from porep_prover.memory.host_plan import Synthesis, Workers, make_plan
from porep_prover.memory.sizes import GIB
from porep_prover.memory.workload import Workload
from porep_prover.errors import HostMemoryError, InvalidInputError, JobFailedError
from porep_prover.groth16 import insecure_setup, verify
from porep_prover.groth16.prover import (HostAssignment, assignment_bytes, finish, prove_device,
                                         synthesize)
from porep_prover.backend import get_backend

CPU = get_backend("cpu")


def scale(s: float, mapped: bool = False, circuit: int | None = None) -> Workload:
    stats = dict(POREP_32G, constraints=round(POREP_32G["constraints"] * s), aux=round(POREP_32G["aux"] * s))
    return Workload.estimated(**stats, mapped=mapped, circuit_bytes=circuit)


def device(s: float, gib: float, g2: bool = True):
    stats = dict(POREP_32G, constraints=round(POREP_32G["constraints"] * s), aux=round(POREP_32G["aux"] * s))
    return plan(Workload.estimated(**stats), int(gib * GIB), workers=2, g2=g2)


@pytest.mark.parametrize("s,gib,synth", [(1.0, 80, 8), (1.0, 16, 8), (0.25, 24, 2), (1 / 16, 80, 16)])
def test_a_plan_admits_as_many_partitions_as_its_budget_holds(s, gib, synth):
    """The plan's peak is its items' sum; it admits the most partitions whose
    arenas (and a synthesis's own witness beside each of as many as there
    are synthesis workers) fit beside the base and what the set holds: one
    more would not, unless the workers could hold no more."""
    workers = Workers(synth, 1, 2, b_g2_on_device=True)
    dev = device(s, gib)
    workload = scale(s, circuit=random.randrange(1, 8 * GIB))
    budget = random.randrange(int(70 * GIB * s) + 8 * GIB, int(140 * GIB * s) + 16 * GIB)
    try:
        chosen = make_plan(workload, workers, budget, (dev,), dev.matrices)
    except HostMemoryError as exc:
        assert "does not fit" in str(exc)
        return
    held = sum(i.total for i in chosen.held)
    assert chosen.held_bytes == held and chosen.peak_bytes <= budget
    assert chosen.partition.pinned and chosen.partition.nbytes == workload.arena_bytes(dev.matrices)
    assert chosen.synthesis.nbytes == workload.witness_bytes
    each = chosen.partition.nbytes
    more = chosen.base.total + held + (chosen.partitions + 1) * each \
        + min(chosen.partitions + 1, synth) * chosen.synthesis.nbytes
    assert more > budget or chosen.partitions == workers.pipeline
    assert any("admits" in line for line in chosen.describe())


def test_a_plan_that_does_not_fit_is_refused_naming_what_and_the_options():
    dev = device(1.0, 16, g2=False)
    workload = scale(1.0, circuit=8 * GIB)
    with pytest.raises(HostMemoryError) as caught:
        make_plan(workload, Workers(8, 1, 2), 64 * GIB, (dev,), dev.matrices, "scale 1 at 16 GiB")
    text = str(caught.value)
    assert "\n" not in text and text.startswith("scale 1 at 16 GiB does not fit a host budget of 64.0 GiB")
    for named in ("SRS points 44.1", "circuit 8.0", "a partition in flight 20.7", "fewer device workers",
                  "a larger device budget", "B's G2 MSM on the device", "engine.memory_budget_gib"):
        assert named in text


def test_a_mapped_set_counts_its_pinned_copy_and_the_page_cache_it_reads():
    """Mapped parameters: the streamed arrays are a page-locked copy, the
    arrays the host reads every partition (B's G2 points, for a G2 MSM on
    the host) page cache it relies on; on the CPU every array is read."""
    dev = device(1.0, 16, g2=False)
    on_gpu = make_plan(scale(1.0, mapped=True, circuit=GIB), Workers(4, 1, 2), 1 << 50, (dev,), dev.matrices)
    items = {i.name: i for i in on_gpu.held}
    streamed = sum(scale(1.0).array_bytes(n) for n in dev.streamed)
    assert items["SRS streamed arrays"].pinned and items["SRS streamed arrays"].nbytes == streamed
    assert items["SRS page cache"].nbytes == scale(1.0).array_bytes("b_g2")
    on_cpu = make_plan(scale(0.01, mapped=True, circuit=GIB), Workers(4, 0, 2), 1 << 50)
    items = {i.name: i for i in on_cpu.held}
    assert items["SRS page cache"].nbytes == scale(0.01).srs_bytes and on_cpu.synthesis is None
    anonymous = make_plan(scale(0.01, circuit=GIB), Workers(4, 0, 2), 1 << 50)
    assert {i.name: i.nbytes for i in anonymous.held}["SRS points"] == scale(0.01).srs_bytes


def test_the_cgroup_s_limit_is_read_where_one_is_set(tmp_path):
    assert cgroup_limit_bytes(str(tmp_path)) is None                  # no cgroup files: no limit
    (tmp_path / "memory.max").write_text("max\n")
    assert cgroup_limit_bytes(str(tmp_path)) is None
    limit = random.randrange(1 << 30, 1 << 40)
    (tmp_path / "memory.max").write_text(f"{limit}\n")
    assert cgroup_limit_bytes(str(tmp_path)) == limit
    (tmp_path / "memory.max").unlink()
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text(str((1 << 63) - 4096))     # v1's "no limit"
    assert cgroup_limit_bytes(str(tmp_path)) is None
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text(str(limit))
    assert cgroup_limit_bytes(str(tmp_path)) == limit


class Arenas:
    """An arena source on host memory: what it made and what it was given back."""

    def __init__(self):
        self.made, self.discarded = [], []

    def acquire(self, nbytes):
        arena = types.SimpleNamespace(nbytes=nbytes, view=np.zeros(nbytes, np.uint8))
        self.made.append(arena)
        return arena

    def discard(self, arena):
        self.discarded.append(arena)


def test_arenas_are_kept_for_the_next_partition_and_given_back_when_their_room_is_wanted():
    admission = MemoryAdmission(1000, True)
    source = Arenas()
    admission.set_arenas(source)
    first = admission.reserve(400, arena=300)
    assert first.arena.nbytes == 300 and len(source.made) == 1
    first.allocated(300)
    first.release()
    assert admission.status()["memory_idle_arenas"] == 300 and admission.room() == 700
    second = admission.reserve(450, arena=300)           # fits by taking the idle arena over
    assert second.arena is source.made[0] and len(source.made) == 1
    second.release()
    third = admission.reserve(900, arena=800)            # too large for it: the idle one goes back first
    assert source.discarded == [source.made[0]] and third.arena.nbytes == 800
    with pytest.raises(HostMemoryError, match="does not fit"):
        MemoryAdmission(1000, True).reserve(1001)          # nothing in flight: it never could
    admission.close()
    third.release()
    assert source.discarded[-1] is third.arena or third.arena is None


def test_an_idle_arena_taken_over_needs_only_the_scratch_of_the_host_s_memory(monkeypatch):
    """Under the default budget, with partitions in flight, the host's
    available memory must cover what a synthesis has yet to allocate: a
    reservation that takes an idle arena over needs only its scratch (the
    arena is in use already), and waiting for room gives back the idle
    arenas it would not take, never the one it would."""
    from porep_prover.engine import memory
    available = [10_000]
    monkeypatch.setattr(memory, "host_available_bytes", lambda: available[0])
    monkeypatch.setattr(memory, "host_margin", lambda limit: 0)
    admission = MemoryAdmission(10_000, False)
    source = Arenas()
    admission.set_arenas(source)
    running = admission.reserve(100)                        # in flight: the host's memory counts from here
    kept, spare = admission.reserve(400, arena=300), admission.reserve(700, arena=600)
    kept_arena, spare_arena = kept.arena, spare.arena
    for r in (kept, spare):
        r.allocated(r.arena.nbytes)
        r.release()
    assert admission.pending == 100
    available[0] = 250
    done = []
    t = threading.Thread(target=lambda: done.append(admission.reserve(400, arena=300)), daemon=True)
    t.start()                                               # 100 more for its scratch: 200 of 250 available
    t.join(5)
    assert done, "a reservation taking an idle arena over waited for the arena's bytes again"
    again = done[0]
    assert again.arena is kept_arena and source.discarded == [] and admission.pending == 200
    again.release()
    got, started = [], threading.Event()

    def wait():
        started.set()
        got.append(admission.reserve(400, arena=300))       # 100 pending + its 100 past 150: room wanted
    available[0] = 150
    t = threading.Thread(target=wait)
    t.start()
    started.wait(5)
    t.join(0.6)
    assert source.discarded == [spare_arena]                # the one it would not take went back
    available[0] = 400
    t.join(5)
    assert not t.is_alive() and got[0].arena is kept_arena
    running.release()
    got[0].release()


def test_a_synthesis_waits_for_room_and_never_passes_the_budget():
    admission = MemoryAdmission(1000, True)
    held = admission.reserve(700)
    got, started = [], threading.Event()

    def wait():
        started.set()
        got.append(admission.reserve(500))
    t = threading.Thread(target=wait)
    t.start()
    started.wait(5)
    t.join(0.6)
    assert t.is_alive() and admission.in_flight == 700     # waits: 700 + 500 > 1000
    held.release()
    t.join(5)
    assert not t.is_alive() and got[0] is not None and admission.in_flight == 500


def test_a_set_that_leaves_no_room_for_a_partition_is_refused_as_it_loads():
    admission = MemoryAdmission(10 * GIB, True, GIB)
    admission.hold("a", 5 * GIB, GIB, "set a")
    with pytest.raises(HostMemoryError, match="set b: holds 3.5 GiB and 1.0 GiB a partition.*other loaded"):
        admission.hold("b", 3 * GIB + GIB // 2, GIB, "set b")
    admission.release_held("a")
    admission.hold("b", 3 * GIB + GIB // 2, GIB, "set b")
    assert admission.status()["memory_held"] == GIB + 3 * GIB + GIB // 2


@pytest.fixture(scope="module")
def circuit():
    r1cs, _, _ = porep_like(700)
    params = insecure_setup(r1cs, warn=False)
    return params, r1cs, [porep_like(700, seed=s)[1] for s in range(5)]


@pytest.mark.parametrize("on_device", [False, True])
def test_a_partition_laid_out_in_an_arena_is_the_same_and_proves(circuit, on_device):
    params, r1cs, ws = circuit
    need = assignment_bytes(params, on_device)
    arena = np.full(need + random.randrange(512), 0xAB, np.uint8)       # its old bytes must not matter
    witness = ws[1].copy()
    laid = synthesize(params, r1cs, witness, 2, abc_on_device=on_device, arena=arena)
    plain = synthesize(params, r1cs, ws[1], 2, abc_on_device=on_device)
    for name, array in laid.arrays().items():
        assert np.shares_memory(array.limbs, arena), name
        assert np.array_equal(array.limbs, plain.arrays()[name].limbs), name
    assert not any(np.shares_memory(a.limbs, witness.limbs) for a in laid.arrays().values())
    if isinstance(laid, HostAssignment):
        sums = prove_device(CPU, params, laid, 1, host=CPU)
        proof = finish(CPU, params, laid, sums, 1)
        assert verify(params.vk, ws[1][1:r1cs.num_inputs].to_ints(), proof)
    with pytest.raises(InvalidInputError, match="contiguous bytes needed"):
        synthesize(params, r1cs, ws[1], 1, abc_on_device=on_device, arena=arena[:need - 1])


def config(**extra):
    base = {"engine.threads": 1, "engine.devices": ["cpu"]}
    base.update(extra)
    return load_config(overrides=base)


def test_an_engine_refuses_a_workload_its_host_budget_cannot_hold_and_goes_on(circuit):
    """A host budget far below the workload: its job fails as its parameters
    load (HostMemoryError naming what does not fit), before any synthesis;
    a workload that fits is proved after it."""
    params, r1cs, ws = circuit
    with Engine(config(**{"engine.memory_budget_gib": 1.0001})) as engine:      # the process alone takes 1 GiB
        with pytest.raises(JobFailedError, match="HostMemoryError.*does not fit a host budget of 1.0 GiB"):
            engine.prove(inline_job(params, r1cs, ws[:2]), timeout=60)
        assert not [e for e in engine.timeline.events() if e.event == "SYNTH_START"]
        assert engine.status()["memory_in_flight"] == 0 and not engine.srs.status()
    with Engine(config(**{"engine.memory_budget_gib": 4})) as engine:
        result = engine.prove(inline_job(params, r1cs, ws[:2]), timeout=120)
    assert result.ok


def test_an_engine_admits_what_its_plan_says_and_no_more(circuit, monkeypatch):
    """Four synthesis workers under a budget of the set and two partitions:
    at most two partitions are in flight at any moment (the admission's own
    count never passes its room), and every proof verifies."""
    params, r1cs, ws = circuit
    workload = Workload.of(params, r1cs)
    chosen = make_plan(workload, Workers(4, 0, 2), 1 << 50)
    budget = chosen.base.total + chosen.held_bytes + 2.5 * chosen.partition.total
    seen = []
    real = MemoryAdmission._settle

    def settle(self, allocated, released, arena=None):
        seen.append(self.in_flight)
        real(self, allocated, released, arena)
    monkeypatch.setattr(MemoryAdmission, "_settle", settle)
    cfg = config(**{"engine.memory_budget_gib": budget / GIB, "engine.partition_workers": 4})
    with Engine(cfg) as engine:
        result = engine.prove(inline_job(params, r1cs, ws[:5]), timeout=120)
        (key,) = [s["key"] for s in engine.srs.status()]
        admitted = engine.plans.get(key).partitions
    assert result.ok and all(verify(params.vk, p, proof) for p, proof in zip(result.public_inputs, result.proofs))
    assert admitted == 2 and max(seen) <= 2 * chosen.partition.total
    events = sorted(engine.timeline.events(), key=lambda e: e.t)
    live = peak = 0
    for e in events:
        live += {"SYNTH_START": 1, "FINALIZE_END": -1}.get(e.event, 0)
        peak = max(peak, live)
    assert peak <= 2


def test_plan_prints_the_host_side_and_refuses_in_one_line(capsys):
    assert main(["plan", "--scale", "1", "--device-memory-gib", "16", "--host-memory-gib", "128",
                 "--synthesis-workers", "8", "--b-g2", "device"]) == 0
    out = capsys.readouterr().out
    for line in ("host budget 128.0 GiB", "SRS points", "a partition in flight", "admits", "device budget 16.0 GiB"):
        assert line in out
    assert main(["plan", "--scale", "1", "--device-memory-gib", "16", "--host-memory-gib", "48"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not fit a host budget of 48.0 GiB" in err[0]


def test_the_default_budget_is_the_host_less_its_margin(monkeypatch):
    monkeypatch.setattr(host, "host_memory_bytes", lambda: 128 * GIB)
    monkeypatch.setattr(host, "cgroup_limit_bytes", lambda: None)
    assert host.default_host_budget() == 120 * GIB
    monkeypatch.setattr(host, "cgroup_limit_bytes", lambda: 20 * GIB)
    assert host.default_host_budget() == 18 * GIB                      # the margin's floor, 2 GiB


class ArenaBackend(type(CPU)):
    """The CPU backend as a GPU that lends host arenas (host memory here, where a GPU's are page-locked)."""

    def __init__(self):
        super().__init__()
        self.arenas = Arenas()

    def host_arenas(self):
        return self.arenas


class IntoProvider:
    """An inline circuit's provider that writes each witness into the arena it is given (synthesize_into)."""

    kinds = ("into",)

    def __init__(self, params, r1cs, witnesses):
        self.params, self.r1cs, self.witnesses, self.calls = params, r1cs, witnesses, []

    def srs_key(self, job):
        return "into"

    def load_srs(self, job):
        return self.params

    def circuit(self, job):
        return self.r1cs

    def synthesis_bytes(self, job):
        return 1 << 20

    def synthesize(self, job, partition, threads):
        self.calls.append("synthesize")
        return self.r1cs, self.witnesses[partition]

    def synthesize_into(self, job, partition, threads, out):
        self.calls.append("into")
        out.limbs[:] = self.witnesses[partition].limbs
        return self.r1cs


def test_partitions_are_laid_out_in_the_devices_arenas_and_written_there(circuit):
    """With a device lending arenas, each partition is synthesized into one
    (the provider writing its witness there), no more arenas are made than
    partitions the plan admits, and every proof verifies."""
    from porep_prover.engine import Job, Registry
    from porep_prover.engine.devices import ProvingDevice
    params, r1cs, ws = circuit
    provider = IntoProvider(params, r1cs, ws)
    registry = Registry()
    registry.add_provider(provider)
    backend = ArenaBackend()
    cfg = load_config(overrides={"engine.threads": 1, "engine.partition_workers": 3, "prover.stage": "arena"})
    with Engine(cfg, registry=registry, devices=[ProvingDevice("fake-gpu", "fake", "gpu", backend)]) as engine:
        result = engine.prove(Job("into", len(ws)), timeout=120)
        plan = engine.plans.get("into")
        idle = engine.status()["memory_idle_arenas"]
    assert result.ok and all(verify(params.vk, p, proof) for p, proof in zip(result.public_inputs, result.proofs))
    assert provider.calls == ["into"] * len(ws)
    assert 1 <= len(backend.arenas.made) <= plan.partitions and plan.synthesis.nbytes == 1 << 20
    assert all(a.nbytes == assignment_bytes(params, plan.matvec_on_device) for a in backend.arenas.made)
    assert idle == sum(a.nbytes for a in backend.arenas.made)
    assert sorted(map(id, backend.arenas.discarded)) == sorted(map(id, backend.arenas.made))   # given back at the end


def test_where_arenas_admit_no_more_the_staging_copies_are_kept_and_hold_their_buffers(circuit):
    """By default (prover.stage = "auto"), where arenas admit no more
    partitions than staging copies (host memory to spare), partitions are
    synthesized by the provider's own synthesize, no arena is taken, and the
    plan holds each device worker's staging buffer; a refusal under the
    staging copies names the arena stage among its options."""
    from porep_prover.engine import Job, Registry
    from porep_prover.engine.devices import ProvingDevice
    params, r1cs, ws = circuit
    provider = IntoProvider(params, r1cs, ws)
    registry = Registry()
    registry.add_provider(provider)
    backend = ArenaBackend()
    cfg = load_config(overrides={"engine.threads": 1, "engine.partition_workers": 2})
    with Engine(cfg, registry=registry, devices=[ProvingDevice("fake-gpu", "fake", "gpu", backend)]) as engine:
        result = engine.prove(Job("into", len(ws)), timeout=120)
        plan = engine.plans.get("into")
    assert result.ok and all(verify(params.vk, p, proof) for p, proof in zip(result.public_inputs, result.proofs))
    assert provider.calls == ["synthesize"] * len(ws) and not backend.arenas.made
    staging = [item for item in plan.held if item.name == "staging arenas"]
    assert not plan.workers.arenas and len(staging) == 1 and staging[0].count == plan.workers.device_workers
    workload = Workload.of(params, r1cs)
    with pytest.raises(HostMemoryError, match=r'prover\.stage = "arena"'):
        make_plan(workload, Workers(2, 1, 2, arenas=False), plan.base.total + 1)


def test_where_only_arenas_admit_a_partition_the_engine_takes_them(circuit):
    """prover.stage = "auto" under a host budget that holds one partition
    laid out in an arena and not the devices' staging buffers: the engine's
    plan takes the arenas, its partitions are written into them and prove."""
    from porep_prover.engine import Job, Registry
    from porep_prover.engine.devices import ProvingDevice
    params, r1cs, ws = circuit
    provider = IntoProvider(params, r1cs, ws)
    registry = Registry()
    registry.add_provider(provider)
    workload = Workload.of(params, r1cs)
    arena = make_plan(workload, Workers(2, 1, 2, arenas=True), 1 << 50, synthesis=Synthesis(1 << 20, True))
    budget = arena.base.total + arena.held_bytes + arena.partition.total + (1 << 20) + 4096
    with pytest.raises(HostMemoryError):
        make_plan(workload, Workers(2, 1, 2, arenas=False), budget, synthesis=Synthesis(1 << 20, True))
    backend = ArenaBackend()
    cfg = load_config(overrides={"engine.threads": 1, "engine.partition_workers": 2,
                                 "engine.memory_budget_gib": budget / GIB})
    with Engine(cfg, registry=registry, devices=[ProvingDevice("fake-gpu", "fake", "gpu", backend)]) as engine:
        result = engine.prove(Job("into", 2), timeout=120)
        plan = engine.plans.get("into")
    assert result.ok and all(verify(params.vk, p, proof) for p, proof in zip(result.public_inputs, result.proofs))
    assert plan.workers.arenas and plan.partitions == 1 and provider.calls == ["into"] * 2
    assert len(backend.arenas.made) == 1


def test_gathering_on_the_device_uploads_the_witness_and_holds_less_on_the_host():
    """With the queries' scalars gathered on the device, a partition uploads
    and holds a, b, c and the witness alone, the queries' maps resident on
    the device, every phase within the budget; at scale 1 under 16 GiB and
    a 100 GiB host the engine's choice admits two partitions where host
    gathers admit one."""
    stats = dict(POREP_32G)
    w = Workload.estimated(**stats)
    gathered, host_side = plan(w, 16 * GIB, gathers=True), plan(w, 16 * GIB)
    assert gathered.gathers and not gathered.matrices and not host_side.gathers
    assert gathered.planned_bytes <= 16 * GIB and gathered.resident_bytes >= w.map_bytes
    workload = scale(1.0, circuit=int(12.4 * GIB))
    aligned = sum(-(-32 * n // 256) * 256 for n in (workload.a_count, workload.b_count))
    assert workload.arena_bytes(False, True) == workload.arena_bytes(False) - aligned
    from porep_prover.memory.choice import best_plan
    workers, synthesis = Workers(2, 1, 2, b_g2_on_device=True), Synthesis(26 * workload.variables, into_arena=True)
    variants = [((host_side,), False, False), ((gathered,), False, True)]
    index, chosen = best_plan(workload, workers, 100 * GIB, variants, "scale 1", synthesis)
    alone = make_plan(workload, workers, 100 * GIB, (host_side,), False, "scale 1", synthesis)
    assert index == 1 and chosen.gathers and chosen.partitions == 2 > alone.partitions == 1
    assert chosen.peak_bytes <= 100 * GIB


class GatheringBackend(type(CPU)):
    """The CPU backend as a GPU whose memory plan keeps no matrices and gathers on the device."""

    capabilities = type(CPU).capabilities.__class__(evaluates_witness=True, reference=False)

    def __init__(self):
        super().__init__()
        self.asked, self.uploads = [], 0

    def device_budget(self, nbytes=0):
        return 1 << 40

    def device_plan(self, workload, budget, workers=2, g2=True, gathers=False):
        self.asked.append(gathers)
        made = plan(workload, budget, workers, 0, g2, matrices=False, gathers=gathers)
        assert made.gathers == gathers
        return made

    def upload_scalars(self, values):
        self.uploads += 1
        return super().upload_scalars(values)


def test_an_engine_that_gathers_on_the_device_proves_from_a_b_c_and_the_witness(circuit):
    from porep_prover.engine.devices import ProvingDevice
    params, r1cs, ws = circuit
    backend = GatheringBackend()
    workload = Workload.of(params, r1cs)
    some = make_plan(workload, Workers(2, 1, 2), 1 << 50)
    # room for two partitions gathered on the device, and one whose host gathers their scalars
    budget = some.base.total + some.held_bytes + 2 * workload.arena_bytes(False, True) + 1024
    assert budget < some.base.total + some.held_bytes + 2 * workload.arena_bytes(False)
    cfg = load_config(overrides={"engine.threads": 1, "engine.partition_workers": 2, "prover.gather": "auto",
                                 "prover.matvec": "device", "prover.stage": "arena",
                                 "engine.memory_budget_gib": budget / GIB})
    with Engine(cfg, devices=[ProvingDevice("fake-gpu", "fake", "gpu", backend)]) as engine:
        result = engine.prove(inline_job(params, r1cs, ws[:3]), timeout=120)
        (key,) = [s["key"] for s in engine.srs.status()]
        chosen = engine.plans.get(key)
    assert result.ok and all(verify(params.vk, p, proof) for p, proof in zip(result.public_inputs, result.proofs))
    assert sorted(backend.asked) == [False, True] and chosen.gathers and backend.uploads == 3
