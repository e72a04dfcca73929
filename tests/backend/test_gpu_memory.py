"""The GPU backend's device-memory policy (resident arrays, eviction, copies
made ahead, the work buffers' pool; a view with MSM options of its own over
the same memory, and the window tables those options ask for) on a fake
device: runs without a GPU."""
import dataclasses
import types

import numpy as np
import pytest
from fake_card import Idle, Settling, fake_backend, fake_memory

from porep_prover.errors import DeviceMemoryError
from porep_prover.memory.layout import Layout
from porep_prover.memory.sizes import GIB, MARGIN

pytest.importorskip("porep_prover.backend.gpu")


def arrays(*sizes):
    return [np.zeros(n, dtype=np.uint8) for n in sizes]


def test_running_out_keeps_the_arrays_in_use_and_drops_the_rest():
    mem = fake_memory(1000)
    points, other = arrays(500, 300)
    mem.resident.resident_array(points), mem.resident.resident_array(other)
    with mem.resident.holding(points):
        with pytest.raises(DeviceMemoryError, match="501 bytes of device memory asked for, 500 of 1000 free"):
            mem.alloc(300 + 201)   # needs the held array's memory as well
        assert mem.resident.resident_bytes() == 500   # the other one went, the held one stayed
        assert mem.resident.dropped == 300            # and is counted
        work = mem.alloc(400)                # fits once the other one is gone
    assert not mem.resident._busy
    mem.free(work)
    assert mem.alloc(900).nbytes == 900      # nothing held: the points go too
    assert mem.resident.resident_bytes() == 0


def test_making_room_passes_over_held_arrays():
    mem = fake_memory(1000)
    first, second, third = arrays(400, 400, 400)
    mem.resident.resident_array(first), mem.resident.resident_array(second)
    with mem.resident.holding(first), mem.resident.holding(first):   # held twice, released twice
        mem.resident.resident_array(third)                  # evicts second (first is older but held)
        assert list(mem.resident._resident) == [id(first), id(third)]
    assert not mem.resident._busy
    mem.resident.release_resident()
    assert mem.resident.resident_bytes() == 0 and mem.drv.used == 0


def test_a_new_layout_lets_go_of_what_its_budget_has_no_room_for():
    """A layout whose resident budget is below what the last one kept evicts
    the least recently used arrays not in use as it is laid out, counted as
    no drop; the dropped bytes count from the layout in force."""
    mem = fake_memory(1000)
    old, held, recent = arrays(300, 200, 100)
    for a in (old, held, recent):
        mem.resident.resident_array(a)
    mem.resident.dropped = 123                       # a drop under the layout before
    with mem.resident.holding(held):
        assert mem.lay_out(Layout(MARGIN + 1000, resident=350))
    assert list(mem.resident._resident) == [id(held), id(recent)] and mem.drv.used == 300
    assert mem.resident.dropped == 0
    assert not mem.lay_out(Layout(MARGIN + 1000, resident=350))         # the same layout: nothing laid out again


def test_a_smaller_budget_than_what_is_held_lets_go_of_the_resident_arrays():
    """A layout whose budget is below what the device holds: the resident
    arrays not in use go at once (not at the region's first allocation, as a
    plan that did not hold); a budget with room for them keeps them; the
    driver's limit is the layout's budget less the margin."""
    mem = fake_memory(64 * GIB)
    points, = arrays(1000)
    mem.resident.resident_array(points)
    work = mem.drv.DeviceBuffer(mem.ctx, 20 * GIB)   # held by a caller: no resident array
    mem.lay_out(Layout(32 * GIB))
    assert mem.resident.is_resident(points) and mem.ctx.limit == 32 * GIB - MARGIN
    mem.lay_out(Layout(16 * GIB))
    assert not mem.resident.is_resident(points) and mem.resident.dropped == 0 and work.open
    assert mem.ctx.limit == 16 * GIB - MARGIN


def test_a_copy_made_ahead_is_handed_over_once_and_leftovers_are_freed():
    mem = fake_memory(1000)
    witness, scalars = arrays(100, 50)
    keys = [(a.ctypes.data, a.nbytes) for a in (witness, scalars)]
    made = {key: mem.drv.DeviceBuffer(mem.ctx, key[1]) for key in keys}
    mem._ahead.update(made)
    assert mem.upload(witness) is made[keys[0]]
    again = mem.upload(witness)                     # handed over once: a fresh upload now
    assert again is not made[keys[0]] and mem.drv.used == 250
    mem.drop_ahead(keys, Idle())
    assert mem._ahead == {} and not made[keys[1]].open and made[keys[0]].open


def test_a_derived_buffer_is_made_once_when_it_fits_and_goes_with_its_array():
    mem = fake_memory(1000)
    points, other = arrays(100, 200)
    mem.resident.resident_array(points), mem.resident.resident_array(other)
    made = []
    table = mem.resident.resident_derived(points, "table", 500, made.append)
    assert table is not None and made == [table] and mem.resident.resident_bytes() == 800
    assert mem.resident.resident_derived(points, "table", 500, made.append) is table and len(made) == 1
    assert mem.resident.resident_derived(other, "table", 300, made.append) is None     # 1100 > 1000: nothing evicted
    assert mem.resident.resident_bytes() == 800
    with mem.resident.holding(points):
        mem.resident.release_resident()             # the held array's table stays with it
        assert mem.resident.resident_bytes() == 600
    mem.resident.release_points(type("P", (), {"limbs": points})())
    assert mem.resident.resident_bytes() == 0 and mem.drv.used == 0


def test_a_derived_buffer_that_runs_out_while_made_is_dropped():
    mem = fake_memory(1000)
    (points,) = arrays(100)
    mem.resident.resident_array(points)

    def make(buf):
        assert mem.try_alloc(600) is None  # its work buffer does not fit, and nothing was evicted for it
        raise DeviceMemoryError("work buffer", code=2, name="CUDA_ERROR_OUT_OF_MEMORY")
    assert mem.resident.resident_derived(points, "table", 400, make) is None
    assert mem.drv.used == 100 and mem.resident.resident_bytes() == 100


def test_work_buffers_are_freed_together_or_one_early():
    from porep_prover.cuda.arrays import WorkBuffers
    mem = fake_memory(1000)
    with pytest.raises(DeviceMemoryError):
        with WorkBuffers(mem) as bufs:
            a, b = bufs.alloc(300), bufs.alloc(200)
            bufs.free(a)                  # early: its memory is back at once
            assert mem.drv.used == 200 and not a.open and b.open
            bufs.alloc(900)               # does not fit: the ones made so far are freed on the way out
    assert mem.drv.used == 0 and not b.open


def test_work_buffers_come_back_to_the_pool_and_it_gives_way():
    """Work buffers come from the pool and go back to it (kept: the next one
    takes nothing more from the device); a plain allocation that runs short
    has the pool's unused memory given back; a work buffer the pool cannot
    grow for is a plain one, resident arrays not in use evicted for it, and
    with them held a DeviceMemoryError."""
    from porep_prover.cuda.arrays import WorkBuffers
    mem = fake_memory(1000, pooled=True)
    with WorkBuffers(mem) as bufs:
        assert bufs.alloc(400).pooled
    assert mem.drv.used == 400 and mem.drv.pool_free == 400     # kept by the pool
    with WorkBuffers(mem) as bufs:
        bufs.alloc(300)
        assert mem.drv.used == 400                              # served from it
    (points,) = arrays(500)
    mem.resident.resident_array(points)                                  # fits beside the pool's 400
    assert mem.try_alloc(300) is not None and mem.drv.pool_free == 0   # the pool gave its 400 back
    mem.resident.release_resident()
    assert mem.drv.used == 300
    mem.resident.resident_array(points)                                  # 800 used
    work = mem.work_alloc(400)             # the pool cannot grow by 400: a plain buffer, once the points are gone
    assert not work.pooled and mem.resident.resident_bytes() == 0 and mem.drv.used == 700
    mem.free(work)
    mem.resident.resident_array(points)
    with mem.resident.holding(points):
        with pytest.raises(DeviceMemoryError):
            mem.work_alloc(400)                                 # nothing to give back, the points held
    assert mem.resident.resident_bytes() == 500 and mem.drv.used == 800


def test_a_plain_allocation_waits_for_the_pools_frees_before_evicting():
    """Work buffers given back in stream order reach the pool only once
    their stream gets there: a plain allocation that runs short waits for
    the streams, has what the pool then keeps given back, and evicts no
    resident array that fits beside it (a budget changed at run time found
    the card short by what the pool kept, and dropped its arrays for every
    region)."""
    from porep_prover.cuda.arrays import WorkBuffers
    mem = fake_memory(1000, pooled=True)
    mem.drv.pending = 0
    mem.device.stream = Settling(mem.drv)
    with WorkBuffers(mem) as bufs:
        bufs.alloc(600)
    assert mem.drv.pending == 600 and mem.drv.pool_free == 0     # freed in stream order, not reached yet
    (points,) = arrays(300)
    mem.resident.resident_array(points)
    buf = mem.alloc(700)
    assert buf.nbytes == 700 and not buf.pooled
    assert mem.resident.resident_bytes() == 300 and mem.resident.dropped == 0 and mem.drv.used == 1000


class RecordingMsm:
    """The MSM side of a fake backend: each plain MSM records the options it was given."""

    def __init__(self):
        self.options = []

    def msm(self, points, scalars, options=None):
        self.options.append(options)
        return type(points).POINT.identity(), {}

    def msm_shared(self, sets, scalars):
        return None                       # the arrays do not fit at once: the backend takes them apart


def test_a_region_s_lanes_carry_its_msm_options_and_leave_the_device_as_it_was():
    """Backend.region(options): its main lane's MSMs (plain, many, a shared
    sort taken apart) carry the options to the MSM side; the backend's own
    carry none; the lane launches on the backend's device (one resident
    store); the region leaves no state behind."""
    from porep_prover.backend import MsmOptions
    from porep_prover.curve.points import G1Array
    from porep_prover.field.fr_array import FrArray
    be = fake_backend(1000)
    be.msm_ops = RecordingMsm()
    copies = np.random.default_rng().integers(1, 9)
    options = MsmOptions(tables=True, table_copies=int(copies))
    pts, sc = G1Array.generator(), FrArray.from_ints([3])
    with be.region(options=options) as region:
        lane = region.main
        lane.msm(pts, sc, 1), lane.msm_many([(pts, sc), (pts, sc)], 1), lane.msm_shared([(pts, None)], sc, 1)
        assert region.side is None and lane.device is be.device and lane.msm_ops is be.msm_ops
    be.msm(pts, sc, 1)
    assert be.msm_ops.options == [options] * 4 + [None]
    (points,) = arrays(300)
    be.memory.resident.resident_array(points)
    assert list(be.memory.resident._resident) == [id(points)] and be.memory.resident.resident_bytes() == 300
    assert be.lane.options is None


def test_window_tables_follow_the_caller_s_options_over_the_msm_side_s():
    """window_table: options given decide tables and copies (the MSM side's
    own settings only without them); the table made has table_plan's shape."""
    import types

    from porep_prover.backend import MsmOptions
    from porep_prover.msm.gpu.plan import table_copies, table_plan
    from porep_prover.msm.gpu.table import window_table
    from porep_prover.curve.points import G1Array
    made = []
    resident = types.SimpleNamespace(budget=1 << 40, resident=lambda points: None,
                                     resident_derived=lambda limbs, tag, size, make: made.append((tag, size)) or tag)
    gpu = types.SimpleNamespace(memory=types.SimpleNamespace(resident=resident))
    n = int(np.random.default_rng().integers(3000, 5000))
    points = G1Array.zeros(n)
    ops = types.SimpleNamespace(gpu=gpu, tables=True, table_copies=None, tuning=types.SimpleNamespace(table_bits=None))
    assert window_table(ops, points, MsmOptions(tables=False)) is None and not made
    copies = int(np.random.default_rng().integers(1, 4))
    table = window_table(ops, points, MsmOptions(tables=True, table_copies=copies))
    c, sets = table_plan(n, points.GROUP, copies, None)
    assert table is not None and (table.c, table.sets) == (c, sets)
    assert made == [(("msm_table", c, sets), table_copies(c, sets) * points.limbs.nbytes)]
    ops.tables = False
    assert window_table(ops, points) is None and len(made) == 1


def test_a_window_table_of_4_bit_windows():
    """table_bits 4 (MsmTuning's least): window_table makes the table of
    table_plan's shape, 64 windows: a copy for each beyond the points', one
    set; at most 5 copies, 11 sets."""
    import types

    from porep_prover.curve.points import G1Array
    from porep_prover.msm.gpu.plan import MsmTuning, table_copies, table_plan
    from porep_prover.msm.gpu.table import window_table
    made = []
    resident = types.SimpleNamespace(budget=1 << 40, resident=lambda points: None,
                                     resident_derived=lambda limbs, tag, size, make: made.append((tag, size)) or tag)
    gpu = types.SimpleNamespace(memory=types.SimpleNamespace(resident=resident))
    points = G1Array.zeros(1000)
    ops = types.SimpleNamespace(gpu=gpu, tables=True, table_copies=None, tuning=MsmTuning(table_bits=4))
    for copies, sets, held in ((None, 1, 63), (5, 11, 5)):
        ops.table_copies = copies
        table = window_table(ops, points)
        assert (table.c, table.sets) == (4, sets) == table_plan(len(points), points.GROUP, copies, 4)
        assert table_copies(4, sets) == held
        assert made[-1] == (("msm_table", 4, sets), held * points.limbs.nbytes)


def test_a_plan_is_a_value_made_under_the_budget_it_is_given():
    """device_plan takes its budget as an argument and changes nothing: the
    same set and budget give an equal plan, two budgets two plans, the
    memory laid out by none until a region runs by one; device_budget
    reads the card (0, or more than the card: the card's memory) and
    refuses a budget inside the margin, setting nothing either."""
    from porep_prover.circuits import square_chain
    from porep_prover.errors import InvalidInputError
    from porep_prover.groth16 import insecure_setup
    from porep_prover.memory.workload import Workload
    r1cs, _, _ = square_chain(int(np.random.default_rng().integers(20, 60)))
    params = insecure_setup(r1cs, warn=False)
    be = fake_backend(64 << 30)
    be.msm_ops = types.SimpleNamespace(tables=False)
    assert be.device_budget() == be.device_budget(1 << 40) == 64 << 30 and be.device_budget(16 * GIB) == 16 * GIB
    with pytest.raises(InvalidInputError, match="margin"):
        be.device_budget(MARGIN)
    small, card = (be.device_plan(Workload.of(params), budget, 2) for budget in (16 * GIB, be.device_budget()))
    assert (small.budget, card.budget) == (16 * GIB, 64 << 30) and small == be.device_plan(Workload.of(params),
                                                                                          16 * GIB, 2)
    assert be.memory.layout is None and be.memory.ctx.limit == 0 and be.memory_status()["budget"] == 64 << 30


def test_a_region_lays_the_memory_out_by_its_plan_once(monkeypatch):
    """region(plan, arrays): the memory streams the arrays the plan streams
    (pinned, through a ring of its chunks), sorts passes of its size, keeps
    its resident budget and bounds allocations by its budget, as the region
    starts; a second region by the same plan changes nothing; a region
    without a plan is unplanned again, at the card's memory, and so is the
    memory after release_plan, whatever was set by hand since. A plan
    without the arrays it was made for is refused."""
    from porep_prover.circuits import square_chain
    from porep_prover.errors import InvalidInputError
    from porep_prover.groth16 import insecure_setup
    from porep_prover.memory.device_plan import plan
    from porep_prover.memory.layout import layout_of, unplanned
    from porep_prover.memory.workload import Workload
    r1cs, _, _ = square_chain(int(np.random.default_rng().integers(20, 60)))
    params = insecure_setup(r1cs, warn=False)
    be = fake_backend(64 << 30)
    be.msm_ops = types.SimpleNamespace(tables=False)
    pinned = []
    monkeypatch.setattr(be.memory.pins, "pin", lambda limbs: pinned.append(id(limbs)) or True)
    chosen = plan(Workload.of(params), 32 * GIB)
    streamed = dataclasses.replace(chosen, resident=("h",), streamed=("l", "a", "b_g1", "b_g2"), pass_points=1 << 20,
                                   chunk_bytes=64 << 20, compact_twiddles=True)
    with pytest.raises(InvalidInputError, match="the parameter set it was made for"):
        be.region(streamed)
    laid = []
    real = be.memory.lay_out
    monkeypatch.setattr(be.memory, "lay_out",
                        lambda layout, again=False: laid.append(real(layout, again)) or laid[-1])
    for _ in range(2):
        with be.region(streamed, params):
            pass
    store = be.memory.resident
    assert laid == [True, False] and be.memory.layout == layout_of(streamed, params)
    assert be.ntt_ops.compact[-1] is True and be.memory.ctx.limit == 32 * GIB - MARGIN
    assert store._streamed == {id(getattr(params, n).limbs) for n in streamed.streamed} == set(pinned)
    assert store.pass_points == 1 << 20 and store.ring_bytes == 64 << 20
    assert store.budget == streamed.resident_bytes + streamed.budget - streamed.planned_bytes
    assert be.memory_status()["budget"] == 32 * GIB and be.memory_status()["planned"] == streamed.planned_bytes
    with be.region():
        pass
    assert laid[-1] is True and be.memory.layout == unplanned(64 << 30) and not store._streamed
    assert store.pass_points == 0 and be.memory.ctx.limit == (64 << 30) - MARGIN
    assert store.budget == be.memory.default_resident_budget and be.ntt_ops.compact[-1] is False
    store.pass_points, store.budget = 777, 1 << 20          # set by hand, no layout in use: released, they reset
    be.release_plan()
    assert store.pass_points == 0 and store.budget == be.memory.default_resident_budget


def test_the_matrices_stay_on_the_host_where_the_plan_cannot_keep_them():
    """device_plan: a scale-1 PoRep partition's matrices are kept under an
    80 GiB budget and left to the host under 16 GiB (the planner's choice
    with them free to stay off the device); a budget too small for any
    plan is a DeviceMemoryError naming the least that would do."""
    from porep_prover.cli.plan_cmds import POREP_32G
    from porep_prover.memory.workload import Workload
    be = fake_backend(1 << 50)
    be.msm_ops = types.SimpleNamespace(tables=False)
    scale_1 = Workload.estimated(**POREP_32G)
    assert {gib: be.device_plan(scale_1, gib * GIB, 2).matrices for gib in (80, 16)} == {80: True, 16: False}
    with pytest.raises(DeviceMemoryError, match="at least"):
        be.device_plan(scale_1, 8 * GIB, 2)


class Counting(Idle):
    """A stream that counts the host's waits for it."""

    def __init__(self):
        self.waits = 0

    def synchronize(self):
        self.waits += 1


def test_async_free_gives_pool_buffers_back_without_waiting():
    """With async_free (POREP_PROVER_GPU_ASYNC_FREE=1), buffers of the pool
    go back in their stream's order without the host waiting for the device;
    any other buffer, or a mix, after a wait; without it every free waits."""
    for async_free, waits in ((True, [0, 1, 1]), (False, [1, 1, 1])):
        mem = fake_memory(1 << 20, pooled=True)
        mem.async_free = async_free
        mem.device.stream = Counting()
        got = []
        for bufs in ([mem.work_alloc(100), mem.work_alloc(200)], [mem.alloc(300)],
                     [mem.work_alloc(100), mem.alloc(100)]):
            before = mem.device.stream.waits
            mem.free(*bufs, None)
            got.append(mem.device.stream.waits - before)
            assert all(not b.open for b in bufs)
        assert got == waits, async_free
