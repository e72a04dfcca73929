"""The choice among the ways a set can be proved (engine.plan_choice):
prover.gather and prover.stage, "auto" by default, weighed by the host plan
each gives, against hand-made device plans; `porep-prover plan` makes the
engine's choice for the same settings. On the CPU: no device."""
import pytest

from porep_prover.backend.device_plan import GIB, Workload, plan
from porep_prover.cli import build_parser, plan_cmds
from porep_prover.cli.plan_cmds import POREP_32G, SCRATCH_A_VARIABLE
from porep_prover.engine import load_config
from porep_prover.engine.memory_plan import HostWorkload, Synthesis, Workers
from porep_prover.engine.plan_choice import GATHERS, STAGES, Variant, Ways, choose_plan
from porep_prover.errors import HostMemoryError


def stats(scale: float) -> dict:
    return dict(POREP_32G, constraints=round(POREP_32G["constraints"] * scale), aux=round(POREP_32G["aux"] * scale))


def host_side(scale: float, circuit_gib: float = 12.4) -> HostWorkload:
    """A scale's partition on the host (its circuit's bytes: the porep-shaped circuit's, measured, by default)."""
    s = stats(scale)
    return HostWorkload.estimated(s["constraints"], s["inputs"], s["aux"], s["a_density"], s["b_density"], False,
                                  int(circuit_gib * GIB))


def device_side(scale: float, gib: float, devices: int = 1):
    """What a device of gib GiB plans for a scale's partition, either way of gathering (as an engine asks)."""
    workload = Workload.estimated(**stats(scale), on_device=False, workers=2, g2=True)
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
