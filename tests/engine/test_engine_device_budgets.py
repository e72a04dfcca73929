# SPDX-License-Identifier: Apache-2.0
"""Engines with different device budgets in one process, on one fake card
(tests/helpers/fake_card.py: the GPU backend's own memory, layouts and
driver limit over a fake driver; its kernels the CPU's): each makes its
plans from its own settings and hands each region its plan, so that its
regions run under its budget whatever the other's ran under before, and
each leaves the card unplanned as it stops."""
import threading

import pytest
from fake_card import fake_backend

from porep_prover.backend import get_backend
from porep_prover.circuits import porep_like
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.engine.inline import InlineProvider
from porep_prover.engine.devices import ProvingDevice
from porep_prover.groth16 import insecure_setup, verify
from porep_prover.memory.layout import layout_of, unplanned
from porep_prover.memory.sizes import GIB, MARGIN

pytest.importorskip("porep_prover.backend.gpu")
CPU = get_backend("cpu")
CARD = 80 * GIB


class CpuNtt:
    """H's transforms of a card on the host: the CPU's, the twiddles' form recorded."""

    def __init__(self):
        self.compact = []

    def set_compact_twiddles(self, compact):
        self.compact.append(compact)

    def h_scalars(self, a, b, c, flavor, held):
        return CPU.h_poly(a, b, c, 1, flavor)


class RecordingMsm:
    """A card's MSM side on the host: the CPU's sums, each MSM recording the
    thread it ran on and how the card's memory was laid out then (the
    layout, the driver's limit, the resident store's budget and pass size)."""

    tables, table_copies = False, None

    def __init__(self, memory):
        self.memory, self.seen, self.lock = memory, [], threading.Lock()

    def _note(self):
        store = self.memory.resident
        with self.lock:
            self.seen.append((threading.current_thread().name, self.memory.layout, self.memory.ctx.limit,
                              store.budget, store.pass_points))

    def msm(self, points, scalars, options=None):
        self._note()
        return CPU.msm(points, scalars, 1)

    def msm_shared(self, sets, scalars):
        self._note()
        return CPU.msm_shared(sets, scalars, 1)


def card_on_host(capacity):
    """A GpuBackend on a fake card of capacity bytes whose kernels are the
    CPU's; its partitions staged as the host's (nothing to pin)."""
    be = fake_backend(capacity)
    be.ntt_ops, be.msm_ops = CpuNtt(), RecordingMsm(be.memory)
    be.prepare = CPU.prepare
    be.release_prepared = CPU.release_prepared
    return be


def config(device_gib):
    return load_config(overrides={"engine.threads": 1, "engine.partition_workers": 2,
                                  "engine.gpu_workers_per_device": 1, "engine.device_memory_gib": device_gib,
                                  "prover.matvec": "host", "prover.gather": "host", "prover.stage": "prepare",
                                  "prover.b_g2": "host"})


def test_two_engines_with_their_own_device_budgets_prove_side_by_side_on_one_card():
    """An engine at 16 GiB and one at the card's memory, on one card (one
    device lock: their regions take turns), each proving its job at once:
    each set's plan is made under its engine's budget, every region runs
    with the card laid out by its own engine's plan (the driver's limit its
    budget less the margin), the layout changes as the regions alternate,
    every proof verifies, and the card is left unplanned once both stop."""
    r1cs, _, _ = porep_like(600)
    params = insecure_setup(r1cs, warn=False)
    witnesses = [porep_like(600, seed=s)[1] for s in range(3)]
    be = card_on_host(CARD)
    ran = {"small": threading.Event(), "whole": threading.Event()}
    real_note = be.msm_ops._note

    def note():
        real_note()
        ran[threading.current_thread().name.split(".")[0]].set()
    be.msm_ops._note = note

    def after(other):
        """Partition i's witness, the later ones only once the other engine's first region has run."""
        def witness(i):
            if i:
                assert ran[other].wait(120), f"no region of the {other} engine"
            return witnesses[i]
        return witness
    engines = {"small": Engine(config(16), devices=[ProvingDevice("card", "small", "gpu", be)]),
               "whole": Engine(config(0), devices=[ProvingDevice("card", "whole", "gpu", be)])}
    with engines["small"], engines["whole"]:
        handles = {name: engine.submit(inline_job(params, r1cs, after("whole" if name == "small" else "small"), 3))
                   for name, engine in engines.items()}
        results = {name: handle.result(120) for name, handle in handles.items()}
        key = InlineProvider().srs_key(handles["small"].job)
        plans = {name: engine.plans.for_device(key, "card") for name, engine in engines.items()}
    for result in results.values():
        assert result.ok and all(verify(params.vk, p, proof) for p, proof in zip(result.public_inputs, result.proofs))
    assert (plans["small"].budget, plans["whole"].budget) == (16 * GIB, CARD)
    layouts = {name: layout_of(chosen, params) for name, chosen in plans.items()}
    seen = [(thread.split(".")[0], layout, limit, budget, passes) for thread, layout, limit, budget, passes
            in be.msm_ops.seen]
    assert {name for name, *_ in seen} == {"small", "whole"}
    for name, layout, limit, budget, passes in seen:
        assert layout == layouts[name] and limit == plans[name].budget - MARGIN, name
        assert budget == layouts[name].resident and passes == plans[name].pass_points, name
    turns = [name for i, (name, *_) in enumerate(seen) if i == 0 or seen[i - 1][0] != name]
    assert len(turns) >= 3            # each engine's region after the other's laid the card out by its own plan
    assert be.memory.layout == unplanned(CARD) and be.memory.ctx.limit == CARD - MARGIN
    assert be.memory.resident.pass_points == 0 and be.memory.layout.planned is None


def test_an_engine_s_device_budget_is_checked_as_it_starts_and_set_on_no_device():
    """A device budget inside the margin is refused as the engine starts;
    a budget asks nothing of the card until a region runs by a plan made
    under it."""
    from porep_prover.errors import InvalidInputError
    be = card_on_host(CARD)
    with pytest.raises(InvalidInputError, match="margin"):
        Engine(config(1), devices=[ProvingDevice("card", "tiny", "gpu", be)])
    with Engine(config(16), devices=[ProvingDevice("card", "small", "gpu", be)]) as engine:
        assert engine.plans.asks[0].budget == 16 * GIB
        assert be.memory.layout is None and be.memory.ctx.limit == 0
