"""The choice among the ways a set can be proved (memory.choice):
prover.gather and prover.stage, "auto" by default, weighed by the host plan
each gives, against hand-made device plans; `porep-prover plan` makes the
engine's choice for the same settings. On the CPU: no device."""
import types

import numpy as np
import pytest

from porep_prover.backend import get_backend
from porep_prover.cli import build_parser, plan_cmds
from porep_prover.cli.plan_cmds import POREP_32G, SCRATCH_A_VARIABLE
from porep_prover.engine import Engine, Job, Registry, load_config
from porep_prover.engine.devices import ProvingDevice
from porep_prover.errors import HostMemoryError
from porep_prover.memory.choice import GATHERS, STAGES, Variant, Ways, choose_plan
from porep_prover.memory.device_plan import DeviceModel, plan
from porep_prover.memory.host_plan import Synthesis, Workers
from porep_prover.memory.sizes import GIB
from porep_prover.memory.workload import Workload

CPU = get_backend("cpu")


def stats(scale: float) -> dict:
    return dict(POREP_32G, constraints=round(POREP_32G["constraints"] * scale), aux=round(POREP_32G["aux"] * scale))


def host_side(scale: float, circuit_gib: float = 12.4) -> Workload:
    """A scale's partition, its A w, B w, C w on the host (its circuit's bytes: the porep-shaped circuit's,
    measured, by default)."""
    return Workload.estimated(**stats(scale), on_device=False, circuit_bytes=int(circuit_gib * GIB))


def device_side(scale: float, gib: float, devices: int = 1):
    """What a device of gib GiB plans for a scale's partition, either way of gathering (as an engine asks)."""
    workload = host_side(scale)
    return lambda gathers: Variant.of((plan(workload, int(gib * GIB), gathers=gathers),) * devices, False)


SCRATCH = Synthesis(SCRATCH_A_VARIABLE * (POREP_32G["inputs"] + POREP_32G["aux"]), into_arena=True)
WORKERS = Workers(2, 1, 2, b_g2_on_device=True)


def test_the_ways_of_the_settings():
    assert Ways.of("auto", "auto", 1) == Ways((False, True), (False, True))
    assert Ways.of("auto", "auto", 0) == Ways((False,), (False,))        # the CPU: one way, as before the choice
    assert Ways.of("auto", "auto", 2, arenas_lent=False) == Ways((False, True), (False,))
    assert Ways.of("host", "arena", 1) == Ways((False,), (True,))
    assert Ways.of("device", "prepare", 1) == Ways((True,), (False,))
    assert GATHERS == ("auto", "host", "device") and STAGES == ("auto", "prepare", "arena")
    cfg = load_config()
    assert cfg.get("prover.gather") == cfg.get("prover.stage") == "auto"
    args = build_parser().parse_args(["plan"])
    assert (args.gather, args.stage) == ("auto", "auto") and plan_cmds.GATHERS == GATHERS \
        and plan_cmds.STAGES == STAGES


def test_auto_keeps_the_way_that_admits_the_most_partitions():
    """Scale 1 under 16 GiB on a 100 GiB host: only the scalars gathered on
    the device with arenas admit a partition (two); each way forced alone
    is refused, naming the ways it did not take among its options."""
    workload, side = host_side(1.0), device_side(1.0, 16)
    chosen = choose_plan(workload, WORKERS, 100 * GIB, Ways.of("auto", "auto", 1), side, "scale 1", SCRATCH)
    assert (chosen.gathers, chosen.arenas) == (True, True)
    assert chosen.plan.gathers and chosen.plan.workers.arenas and chosen.plan.partitions == 2
    assert not any(item.name == "staging arenas" for item in chosen.plan.held)
    with pytest.raises(HostMemoryError) as forced:
        choose_plan(workload, WORKERS, 100 * GIB, Ways.of("host", "prepare", 1), side, "scale 1", SCRATCH)
    assert "needs 123.4 GiB" in str(forced.value)
    assert 'prover.gather = "device"' in str(forced.value) and 'prover.stage = "arena"' in str(forced.value)
    arena = choose_plan(workload, WORKERS, 100 * GIB, Ways.of("host", "arena", 1), side, "scale 1", SCRATCH)
    assert arena.plan.partitions == 1 < chosen.plan.partitions and not arena.plan.gathers


def test_a_refusal_of_every_way_names_the_nearest():
    """Where no way fits, the refusal is the one that needs the least host
    memory for one partition: it does not offer a way already weighed."""
    workload, side = host_side(1.0), device_side(1.0, 16)
    with pytest.raises(HostMemoryError) as caught:
        choose_plan(workload, WORKERS, 64 * GIB, Ways.of("auto", "auto", 1), side, "scale 1", SCRATCH)
    text = str(caught.value)
    assert text.startswith("scale 1 does not fit a host budget of 64.0 GiB") and "\n" not in text
    assert "prover.gather" not in text and "prover.stage" not in text and "engine.memory_budget_gib" in text
    needs = []
    for gather, stage in (("host", "prepare"), ("host", "arena"), ("device", "prepare"), ("device", "arena")):
        with pytest.raises(HostMemoryError) as each:
            choose_plan(workload, WORKERS, 64 * GIB, Ways.of(gather, stage, 1), side, "scale 1", SCRATCH)
        needs.append(float(str(each.value).split("it needs ")[1].split(" GiB")[0]))
    assert f"it needs {min(needs):.1f} GiB" in text


@pytest.mark.parametrize("gib,gathers", [(16, False), (24, True), (80, True)])
def test_where_every_way_admits_as_many_the_quicker_then_the_measured_path_is_kept(gib, gathers):
    """With host memory to spare every way admits the workers' pipeline:
    the devices' estimates decide the gathers, and a stage that changes no
    estimate stays with the staging copies."""
    workload, side = host_side(1.0), device_side(1.0, gib)
    chosen = choose_plan(workload, WORKERS, 1024 * GIB, Ways.of("auto", "auto", 1), side, "scale 1", SCRATCH)
    host, device = side(False).devices[0], side(True).devices[0]
    assert chosen.plan.partitions == WORKERS.pipeline
    assert chosen.gathers == gathers == (device.seconds < host.seconds) and not chosen.arenas


def test_on_the_cpu_auto_is_the_one_way_there_was():
    workload = host_side(1 / 64)
    asked = []

    def side(gathers):
        asked.append(gathers)
        return Variant((), False, False)
    cpu = Workers(2, 0, 2)
    chosen = choose_plan(workload, cpu, 64 * GIB, Ways.of("auto", "auto", 0), side)
    assert asked == [False] and (chosen.gathers, chosen.arenas) == (False, False)
    assert chosen.plan.devices == () and not chosen.plan.gathers


class Arenas:
    def __init__(self):
        self.made = []

    def acquire(self, nbytes):
        self.made.append(types.SimpleNamespace(nbytes=nbytes, view=np.zeros(nbytes, np.uint8)))
        return self.made[-1]

    def discard(self, arena):
        pass


class ModelCard(type(CPU)):
    """The CPU backend as a GPU of gib GiB planned by the device model (as GpuBackend plans: DeviceModel), lending
    arenas."""

    def __init__(self, gib):
        super().__init__()
        self.gib, self.arenas = gib, Arenas()

    def device_budget(self, nbytes=0):
        return int(self.gib * GIB)

    def device_plan(self, workload, budget, workers=2, g2=True, gathers=False):
        return DeviceModel().device_plan(workload, budget, workers, g2, gathers)

    def host_arenas(self):
        return self.arenas


class ShapeOnly:
    """A provider of a PoRep partition's shape at a scale, by its statistics:
    its memory plan is made from srs_shape, and load_srs records the plan it
    finds held, then stops (nothing is made)."""

    kinds = ("shape-only",)

    def __init__(self, scale):
        self.workload, self.seen = host_side(scale, 0), []
        self.engine = None

    def srs_key(self, job):
        return "shape-only"

    def srs_shape(self, job):
        return self.workload.shape

    def synthesis_bytes(self, job):
        return SCRATCH_A_VARIABLE * self.workload.variables

    def load_srs(self, job):
        self.seen.append(self.engine.plans.get("shape-only"))
        raise RuntimeError("planned; nothing to make")

    def synthesize(self, job, partition, threads):
        raise AssertionError("not proved")

    def synthesize_into(self, job, partition, threads, out):
        raise AssertionError("not proved")


def gpu_card(device_gib):
    """The GPU backend on a fake card larger than any budget here (tests/helpers/fake_card.py), no window tables."""
    fake_card = pytest.importorskip("fake_card")
    pytest.importorskip("porep_prover.backend.gpu")
    be = fake_card.fake_backend(1 << 50)
    be.msm_ops = types.SimpleNamespace(tables=False)
    return be


@pytest.mark.parametrize("card", [ModelCard, gpu_card], ids=["model card", "gpu backend"])
@pytest.mark.parametrize("gather,stage", [("auto", "auto"), ("host", "arena"), ("device", "auto"),
                                          ("host", "prepare")])
@pytest.mark.parametrize("host_gib,device_gib", [(100, 16), (150, 16), (100, 24), (1024, 80), (60, 16)])
def test_plan_shows_the_engine_s_choice(gather, stage, host_gib, device_gib, card):
    """`porep-prover plan` and an engine with the same settings (its device
    a model card, or the GPU backend on a fake card under the engine's
    device budget, planned by the same model; the workload's shape from its
    provider) plan through the same function: the same plans, host and
    device, or the same refusal."""
    scale = 1.0
    argv = ["plan", "--scale", str(scale), "--device-memory-gib", str(device_gib), "--host-memory-gib", str(host_gib),
            "--synthesis-workers", "2", "--circuit-gib", "0", "--matvec", "host", "--gather", gather, "--stage", stage]
    try:
        _, by_command = plan_cmds.choose(build_parser().parse_args(argv))
    except HostMemoryError as exc:
        by_command = exc
    provider = ShapeOnly(scale)
    registry = Registry()
    registry.add_provider(provider)
    cfg = load_config(overrides={"engine.threads": 1, "engine.partition_workers": 2, "prover.b_g2": "device",
                                 "engine.memory_budget_gib": host_gib, "prover.gather": gather, "prover.stage": stage,
                                 "engine.device_memory_gib": device_gib})
    with Engine(cfg, registry=registry, devices=[ProvingDevice("model-gpu", "model", "gpu", card(device_gib))]) \
            as engine:
        provider.engine = engine
        with pytest.raises((HostMemoryError, RuntimeError)) as by_engine:
            engine.preload(Job("shape-only", 1))
    if isinstance(by_command, HostMemoryError):
        assert isinstance(by_engine.value, HostMemoryError) and not provider.seen
        need = str(by_command).split("it needs ")[1].split(" for one")[0]
        assert f"it needs {need} for one" in str(by_engine.value)
        return
    (chosen,) = provider.seen
    assert (chosen.gathers, chosen.workers.arenas) == (by_command.plan.gathers, by_command.arenas)
    assert chosen.devices == by_command.plan.devices and chosen.partition == by_command.plan.partition
    assert (chosen.partitions, chosen.peak_bytes) == (by_command.plan.partitions, by_command.plan.peak_bytes)
    assert chosen.held_bytes == by_command.plan.held_bytes and chosen.synthesis == by_command.plan.synthesis
