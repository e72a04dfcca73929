# SPDX-License-Identifier: Apache-2.0
"""Each node's device figures, without Ray: computed on the node from its
own timeline (NodeEngine.status, device_figures), carried by the head's
record of it (NodeRecord.view) as JSON."""
import json
import threading

import pytest

from porep_prover.engine import timeline_window as tw
from porep_prover.engine.timeline import Event
from porep_prover_ray.node_engine import FIGURES_SECONDS, NodeEngine
from porep_prover_ray.node_records import NodeRecord

NOW = 1_800_000_000.0


def kernel_regions(rng, identity, worker, count):
    """count kernel regions one after another, idle time between, ending before NOW: (start, end)."""
    out, t = [], NOW - rng.uniform(5, 55)
    for _ in range(count):
        t += rng.uniform(0.0, 0.5)
        length = rng.uniform(0.01, 0.4)
        out.append((t, t + length))
        t += length
    return [r for r in out if r[1] < NOW]


def events_of(regions_by_device):
    evs = []
    for (identity, worker), regions in regions_by_device.items():
        for i, (a, b) in enumerate(regions):
            evs += [Event("GPU_START", a, "job-a", i, worker, identity),
                    Event("GPU_END", b, "job-a", i, worker, identity)]
    return sorted(evs, key=lambda e: e.t)


def union_length(spans):
    total, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        total += max(0.0, b - max(a, end))
        end = max(end, b)
    return total


class StubEngine:
    """An engine's status and timeline window, as NodeEngine reads them."""

    def __init__(self, window, devices):
        self.window, self.devices, self.asked = window, devices, []

    def status(self):
        return {"devices": [{"label": d} for d in self.devices], "srs": [], "jobs_active": 0}

    def timeline_window(self, seconds):
        self.asked.append(seconds)
        if isinstance(self.window, Exception):
            raise self.window
        return self.window


def node_engine(engine):
    node = NodeEngine.__new__(NodeEngine)        # no Ray: the actor's state set by hand
    node.engine, node.node_id, node.address, node.done, node.failed = engine, "f" * 56, "127.0.0.1", 3, 1
    node._lock = threading.Lock()
    return node


def test_a_node_reports_each_device_s_own_figures_and_the_head_carries_them(rng):
    devices = [(f"uuid-{i}-{rng.getrandbits(32):08x}", f"gpu{i}", f"gpu{i}.w0") for i in range(rng.randrange(2, 5))]
    regions = {(identity, worker): kernel_regions(rng, identity, worker, rng.choice([0, 1, rng.randrange(2, 60)]))
               for identity, _, worker in devices}
    window = tw.window(events_of(regions), [(w, "device", label) for _, label, w in devices],
                       [(identity, label) for identity, label, _ in devices], NOW, FIGURES_SECONDS)
    engine = StubEngine(window, [label for _, label, _ in devices])
    report = node_engine(engine).status()
    assert engine.asked == [FIGURES_SECONDS] and report["figures_seconds"] == FIGURES_SECONDS
    assert [f["label"] for f in report["device_figures"]] == report["devices"] == [d[1] for d in devices]
    for (identity, _, worker), f in zip(devices, report["device_figures"]):
        spans = regions[(identity, worker)]
        assert f["regions"] == len(spans)
        if not spans:
            assert f["efficiency"] is None and f["busy_seconds"] == 0 and f["longest_gap_seconds"] is None
            continue
        busy, span = union_length(spans), max(b for _, b in spans) - min(a for a, _ in spans)
        assert f["busy_seconds"] == pytest.approx(busy) and f["efficiency"] == pytest.approx(busy / span)
        assert 0 <= f["efficiency"] <= 1
        gaps = [b0 - a1 for (_, a1), (b0, _) in zip(spans, spans[1:])]
        assert f["longest_gap_seconds"] == (pytest.approx(max(gaps)) if gaps else None)
        assert (f["longest_gap_cause"] is None) == (not gaps)

    record = NodeRecord(report["node_id"], report["address"], report=report, state="ready")
    view = json.loads(json.dumps(record.view(), allow_nan=False))
    assert view["device_figures"] == report["device_figures"] and view["figures_seconds"] == FIGURES_SECONDS
    assert view["label"] == record.label and view["devices"] == report["devices"]
    record.view()["device_figures"][0]["regions"] = -1          # a view is a copy: its reader cannot change the record
    assert record.view()["device_figures"] == report["device_figures"]


def test_figures_that_cannot_be_computed_leave_the_status_answering():
    report = node_engine(StubEngine(RuntimeError("window broken"), ["gpu0"])).status()
    assert report["device_figures"] == [] and report["devices"] == ["gpu0"] and report["partitions_done"] == 3
    assert NodeRecord("a" * 56, "127.0.0.1").view()["device_figures"] == []      # before its first report
