# SPDX-License-Identifier: Apache-2.0
"""Priority through the engine's stages: the ready queue's order and bound,
the device lock granted by priority (and given up to a more urgent
partition), the scheduler guard's pop_if, memory admitted by priority, and
an urgent job under a full engine: its synthesis starts while the ordinary
worker is blocked and its kernel region comes before every queued one, and
no synthesis of a lower priority starts until that region does; and the
timeline's lock waits, less those given up.
Orders are read from the timeline's events and the objects' own state,
never from durations; every wait is bounded."""
import queue
import threading
import time

import pytest

from porep_prover.backend import Capabilities, CpuBackend, Flavor
from porep_prover.circuits import porep_like
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.engine.devices import ProvingDevice
from porep_prover.engine.interlock import RegionLock
from porep_prover.engine.jobs import Job, PartitionTask
from porep_prover.engine.memory import MemoryAdmission
from porep_prover.engine.ready import ReadyQueue
from porep_prover.engine.registry import FifoScheduler
from porep_prover.engine.scheduler_guard import GuardedScheduler
from porep_prover.engine.timeline import Event, analyze
from porep_prover.groth16 import insecure_setup, verify

WAIT = 60.0          # the longest any step waits for the state it expects


def until(check, what, seconds=WAIT):
    """Poll check() until true; fail naming what did not happen within seconds."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds:.0f} s: {what}")
        time.sleep(0.01)


class Item:
    def __init__(self, name, priority):
        self.name, self.priority = name, priority

    def __repr__(self):
        return self.name


def ready_queue(maxsize):
    return ReadyQueue(maxsize, lambda item: None if item is None else item.priority)


def test_ready_queue_hands_out_by_priority_then_arrival_and_a_mark_last():
    q = ready_queue(10)
    for name, p in [("a1", 1), ("b2", 2), ("c1", 1), ("d2", 2)]:
        q.put(Item(name, p))
    q.put(None)
    q.put(Item("e0", 0))
    assert [repr(q.get("dev")) for _ in range(6)] == ["b2", "d2", "a1", "c1", "e0", "None"]


def test_ready_queue_takes_one_more_only_for_a_priority_above_every_queued():
    q = ready_queue(2)
    q.put(Item("a", 1))
    q.put(Item("b", 1))
    with pytest.raises(queue.Full):
        q.put(Item("equal", 1), timeout=0.05)
    q.put(Item("urgent", 5), timeout=0.05)            # past the bound, by one
    with pytest.raises(queue.Full):
        q.put(Item("more urgent", 9), timeout=0.05)   # never two over
    assert q.qsize() == 3
    assert repr(q.get("dev")) == "urgent"
    with pytest.raises(queue.Full):
        q.put(Item("equal", 1), timeout=0.05)         # full again at its bound


def test_swap_puts_a_partition_back_in_its_place_for_a_more_urgent_one():
    q = ready_queue(4)
    first, second = Item("first", 1), Item("second", 1)
    q.put(first)
    q.put(second)
    taken = q.get("dev")
    assert taken is first and q.swap(taken, "dev") is first      # nothing more urgent: kept
    q.put(Item("urgent", 3))
    assert repr(q.swap(taken, "dev")) == "urgent"
    assert [q.get("dev"), q.get("dev")] == [first, second]        # back before the later one of its priority


def acquire_in_thread(lock, priority, order, turn=None):
    class Plain:
        def __init__(self, p):
            self.priority = p

        def asked(self):
            pass

        def hold_back(self):
            return False

        def give_up(self):
            return False

    def run():
        if lock.acquire(turn or Plain(priority)):
            order.append(priority)
            lock.release()
        else:
            order.append(f"gave up {priority}")
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_region_lock_goes_to_the_highest_priority_waiting_then_the_first_asked():
    lock, order = RegionLock(), []
    assert lock.acquire()
    threads = []
    for waiting, p in enumerate([1, 3, 1, 3], start=1):
        threads.append(acquire_in_thread(lock, p, order))
        until(lambda n=waiting: len(lock._asking) == n, f"{waiting} waiters asking")
    lock.release()
    for t in threads:
        t.join(WAIT)
    assert order == [3, 3, 1, 1]


def test_a_waiter_gives_way_to_a_more_urgent_partition_queued_and_is_held_back_while_one_comes():
    q = ready_queue(4)
    lock, order = RegionLock(), []
    q.put(Item("normal", 1))
    normal = q.get("dev")
    assert lock.acquire()
    waiter = acquire_in_thread(lock, 1, order, q.turn(normal, "dev"))
    until(lambda: len(lock._asking) == 1, "the normal partition asking")
    q.put(Item("urgent", 5))                    # queued: the waiter gives its wait up
    waiter.join(WAIT)
    assert order == ["gave up 1"]
    urgent = q.swap(normal, "dev")
    assert repr(urgent) == "urgent"
    other = q.get("dev")                        # another worker of the device takes the normal one back
    assert other is normal
    lock.release()
    waiter = acquire_in_thread(lock, 1, order, q.turn(normal, "dev"))
    until(lambda: len(lock._asking) == 1, "the normal partition asking again")
    assert not lock.locked()                    # free, but held back: the urgent one is on its way
    urgent_waiter = acquire_in_thread(lock, 5, order, q.turn(urgent, "dev"))
    for t in (urgent_waiter, waiter):
        t.join(WAIT)
    assert order == ["gave up 1", 5, 1]


def task(priority, seq):
    job = Job("inline", 1, priority=priority)
    job.seq = seq
    return PartitionTask(job, 0)


def test_pop_if_leaves_a_partition_not_wanted_first_in_line():
    guard = GuardedScheduler(FifoScheduler(), "builtin")
    low, urgent = task(1, 1), task(5, 2)
    guard.push_all([low, urgent])
    assert guard.top_priority() == 5
    assert guard.pop_if(lambda t: t.job.priority > 1) is None     # FIFO: the low one is next
    assert len(guard) == 2 and guard.top_priority() == 5
    assert guard.pop() is low                                     # still first, as the scheduler gave it
    assert guard.pop_if(lambda t: t.job.priority > 1) is urgent
    assert guard.pop() is None and len(guard) == 0
    guard.close()


def test_memory_goes_to_the_higher_priority_waiting_first():
    admission, admitted, got = MemoryAdmission(1000, True), [], []
    held = admission.reserve(900)
    admit = admission._admit

    def in_order(nbytes, arena, source, priority):        # under the admission's lock: the order admitted
        out = admit(nbytes, arena, source, priority)
        admitted.append(priority)
        return out

    admission._admit = in_order

    def reserve(nbytes, priority):
        threading.Thread(target=lambda: got.append(admission.reserve(nbytes, priority=priority)), daemon=True).start()

    reserve(500, 5)                             # does not fit beside 900
    until(lambda: admission._waiting[5] == 1, "the urgent reservation waiting")
    reserve(50, 1)                              # fits, but an urgent one waits
    until(lambda: admission._waiting[1] == 1, "the low reservation waiting")
    assert admitted == [] and admission.in_flight == 900
    held.release()
    until(lambda: len(got) == 2, "both admitted")
    assert admitted == [5, 1] and admission.in_flight == 550


class GatedBackend(CpuBackend):
    """The CPU backend as a device whose kernel regions wait for a gate."""

    name = "gated"
    capabilities = Capabilities(evaluates_witness=False, reference=False)

    def __init__(self):
        super().__init__()
        self.gate = threading.Event()

    def h_poly(self, a, b, c, threads, flavor=Flavor.BELLMAN):
        if not self.gate.wait(WAIT):
            raise TimeoutError("the test's gate was never opened")
        return super().h_poly(a, b, c, threads, flavor)


@pytest.fixture(scope="module")
def circuit():
    r1cs, _, _ = porep_like(300)
    params = insecure_setup(r1cs, warn=False)
    return params, r1cs, [porep_like(300, seed=s)[1] for s in range(6)]


def events(engine, name, job=None):
    return [e for e in engine.timeline.events() if e.event == name and (job is None or e.job == job)]


def gated_engine(lookahead, device_workers):
    """A gated backend and an engine on it (not started): one synthesis worker, the priority scheduler."""
    backend = GatedBackend()
    config = load_config(overrides={"engine.partition_workers": 1, "engine.synthesis_lookahead": lookahead,
                                    "engine.gpu_workers_per_device": device_workers, "engine.threads": 1,
                                    "engine.scheduler": "priority", "engine.devices": ["cpu"]})
    return backend, Engine(config, devices=[ProvingDevice("gated-0", "gated0", "gpu", backend)])


def test_an_urgent_job_synthesizes_at_once_and_takes_the_next_region_under_a_full_engine(circuit):
    params, r1cs, ws = circuit
    backend, engine = gated_engine(lookahead=1, device_workers=2)
    try:
        with engine:
            low = engine.submit(inline_job(params, r1cs, ws[:5], priority=1))
            lid = low.job.id
            # full: one region running (gated), a worker waiting for the lock, the ready queue full, and the
            # synthesis worker blocked with the fourth partition
            until(lambda: len(events(engine, "GPU_START", lid)) == 1 and len(events(engine, "LOCK_WAIT", lid)) == 2
                  and engine.status()["partitions_ready"] == 1 and len(events(engine, "SYNTH_END", lid)) == 4,
                  "the engine full of the low job's partitions")
            urgent = engine.submit(inline_job(params, r1cs, ws[5:6], priority=9))
            uid = urgent.job.id
            until(lambda: events(engine, "GPU_QUEUE", uid), "the urgent partition synthesized")
            assert [e.worker for e in events(engine, "SYNTH_START", uid)] == ["synth_urgent"]
            assert len(events(engine, "SYNTH_START", lid)) == 4      # none started since
            until(lambda: events(engine, "LOCK_YIELD", lid), "the waiting low partition giving way")
            backend.gate.set()
            results = [low.result(WAIT), urgent.result(WAIT)]
    finally:
        backend.gate.set()
    for result in results:
        assert all(verify(params.vk, p, proof) for p, proof in zip(result.public_inputs, result.proofs))
    starts = sorted(events(engine, "GPU_START"), key=lambda e: e.t)
    assert [e.job for e in starts] == [lid, uid, lid, lid, lid, lid]
    assert sorted(e.partition for e in starts if e.job == lid) == [0, 1, 2, 3, 4]


def test_no_lower_synthesis_starts_while_an_urgent_partition_waits_for_its_region(circuit):
    params, r1cs, ws = circuit
    backend, engine = gated_engine(lookahead=4, device_workers=1)
    try:
        with engine:
            first = engine.submit(inline_job(params, r1cs, ws[:1], priority=1))
            until(lambda: events(engine, "GPU_START", first.job.id), "the low partition's region (gated)")
            urgent = engine.submit(inline_job(params, r1cs, ws[5:6], priority=9))
            uid = urgent.job.id
            until(lambda: events(engine, "GPU_QUEUE", uid), "the urgent partition synthesized")
            later = engine.submit(inline_job(params, r1cs, ws[1:3], priority=1))   # a worker is free for it
            lid = later.job.id
            deadline = time.monotonic() + 1.0        # long enough for a free worker to start a synthesis
            while not events(engine, "SYNTH_START", lid) and time.monotonic() < deadline:
                time.sleep(0.01)
            started = events(engine, "SYNTH_START", lid)
            backend.gate.set()
            assert started == []            # held back: the urgent partition's region comes first
            results = [first.result(WAIT), urgent.result(WAIT), later.result(WAIT)]
    finally:
        backend.gate.set()
    assert all(r.ok for r in results)
    timeline = engine.timeline.events()
    place = {(e.event, e.job, e.partition): i for i, e in enumerate(timeline)}
    assert all(place[("SYNTH_START", lid, i)] > place[("GPU_START", uid, 0)] for i in range(2))
    starts = [e.job for e in timeline if e.event == "GPU_START"]
    assert starts == [first.job.id, uid, lid, lid]


def test_equal_priorities_keep_the_order_of_synthesis(circuit):
    params, r1cs, ws = circuit
    config = load_config(overrides={"engine.partition_workers": 1, "engine.gpu_workers_per_device": 1,
                                    "engine.threads": 1, "engine.scheduler": "priority", "engine.devices": ["cpu"]})
    with Engine(config) as engine:
        handles = [engine.submit(inline_job(params, r1cs, ws[:2], priority=2)) for _ in range(3)]
        for h in handles:
            assert h.result(WAIT).ok
    synthesized = [(e.job, e.partition) for e in sorted(events(engine, "SYNTH_END"), key=lambda e: e.t)]
    regions = [(e.job, e.partition) for e in sorted(events(engine, "GPU_START"), key=lambda e: e.t)]
    assert regions == synthesized == [(h.job.id, i) for h in handles for i in range(2)]
    assert {e.worker for e in events(engine, "SYNTH_START")} == {"synth0"}     # no partition was urgent


def test_a_lock_wait_given_up_is_not_counted_as_a_wait():
    events = [Event("LOCK_WAIT", 0.0, "j", 0, "w0", "d"), Event("LOCK_YIELD", 1.0, "j", 0, "w0", "d"),
              Event("LOCK_WAIT", 5.0, "j", 0, "w0", "d"), Event("GPU_START", 6.0, "j", 0, "w0", "d"),
              Event("GPU_END", 7.0, "j", 0, "w0", "d")]
    waits = analyze(events)["lock_wait"]
    assert waits["count"] == 1 and waits["max"] == pytest.approx(1.0)
