# SPDX-License-Identifier: Apache-2.0
"""The daemon's live status in a terminal: what GET /status/live holds
({"status": the status dict, "window": the timeline's last minute}; see
daemon.status_http and engine.timeline_window) drawn with rich, as the
status page draws it in a browser. Every number is the JSON's; this module
only formats and draws (a lane is cut into cells, each shown as the stage
that filled most of it).
"""
from __future__ import annotations

from rich import box
from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

# stage -> (letter, style): letters so that the lanes read without colour too
STAGE_STYLE = {"synthesis": ("S", "bold white on blue"), "prepare": ("P", "bold black on yellow"),
               "lock_wait": ("w", "black on bright_black"), "kernel": ("K", "bold white on red"),
               "finalize": ("F", "bold white on green")}
STAGE_NAMES = {"synthesis": "synthesis", "prepare": "prepare", "lock_wait": "lock wait",
               "kernel": "kernel region", "finalize": "finalize"}
PRIORITIES = ("critical", "high", "normal", "low")
MIN_CELLS, NAME_WIDTH = 20, 12
TEXT_COLUMNS = {"device", "name", "job", "kind", "priority", "state", "key", "host", "", "longest gap, ended by",
                "node", "address", "devices (efficiency)", "parameters"}
SHORT_ID = 12                  # a job id's characters shown where space is short


def size(n) -> str:
    """Bytes in binary units (1.5 GiB); "-" for None."""
    if n is None:
        return "-"
    value, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            break
        value /= 1024
    return f"{int(n)} B" if unit == "B" else f"{value:.1f} {unit}"


def duration(s) -> str:
    """Seconds as ms, s, min or h; "-" for None."""
    if s is None:
        return "-"
    a = abs(s)
    if a < 1:
        return f"{s * 1e3:.1f} ms"
    if a < 120:
        return f"{s:.2f} s"
    return f"{s / 60:.1f} min" if a < 7200 else f"{s / 3600:.1f} h"


def percent(x) -> str:
    return "-" if x is None else f"{x * 100:.1f} %"


def lane_cells(bars: list[dict], start: float, now: float, cells: int) -> list[str | None]:
    """The stage shown in each of `cells` equal cells of [start, now]: the
    one whose bars cover most of the cell (None: idle). An open bar (end
    None) runs to now."""
    width = (now - start) / cells
    filled: list[dict[str, float]] = [dict() for _ in range(cells)]
    for bar in bars:
        a, b = max(bar["start"], start), min(now if bar["end"] is None else bar["end"], now)
        if b <= a or width <= 0:
            continue
        first, last = int((a - start) / width), min(cells - 1, int((b - start) / width))
        for i in range(first, last + 1):
            cover = min(b, start + (i + 1) * width) - max(a, start + i * width)
            filled[i][bar["stage"]] = filled[i].get(bar["stage"], 0.0) + max(cover, 1e-12)
    return [max(f, key=f.__getitem__) if f else None for f in filled]


def lanes(window: dict | None, width: int) -> Table | Text:
    """One row a worker: its name, then its last minute in cells."""
    if window is None:
        return Text("no engine timeline", style="dim")
    cells = max(MIN_CELLS, width - NAME_WIDTH - 4)
    table = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False)
    table.add_column(width=NAME_WIDTH, no_wrap=True)
    table.add_column(no_wrap=True)
    for lane in window["lanes"]:
        text = Text()
        for stage in lane_cells(lane["bars"], window["start"], window["now"], cells):
            letter, style = STAGE_STYLE[stage] if stage in STAGE_STYLE else ("·", "dim")
            text.append(letter, style=style)
        table.add_row(Text(lane["worker"], style="dim" if lane["role"] == "finalizer" else ""), text)
    seconds = round(window["seconds"])
    axis = Text(f"-{seconds} s".ljust(cells - 3) + "now", style="dim")
    table.add_row("", axis)
    legend = Text("  ".join(f"{letter} {STAGE_NAMES[k]}" for k, (letter, _) in STAGE_STYLE.items()), style="dim")
    table.add_row("", legend)
    return table


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in columns:
        table.add_column(name, justify="left" if name in TEXT_COLUMNS else "right")
    return table


def devices(status: dict, window: dict | None) -> Table:
    mine = {d["label"]: d for d in (window or {}).get("devices", [])}
    table = _table("Devices", "device", "name", "workers", "efficiency", "regions", "memory free / total",
                   "held / planned / budget", "parameters", "streamed / waited for", "longest gap, ended by")
    table.columns[1].max_width, table.columns[1].overflow = 24, "ellipsis"
    table.caption = "efficiency: time in kernel regions (their union) over first start to last end, of those ended " \
        "in the window"
    table.caption_justify = "left"
    for d in status["devices"]:
        w, m = mine.get(d["label"]), d.get("memory")
        gap = (w or {}).get("longest_gap")
        table.add_row(d["label"], str(d.get("name") or d["kind"]), str(d["workers"]),
                      percent(w["efficiency"]) if w else "-", str(w["regions"]) if w else "-",
                      f"{size(m['free_bytes'])} / {size(m['total_bytes'])}" if m else "host",
                      " / ".join(size(m.get(f"{k}_bytes")) for k in ("allocated", "planned", "budget"))
                      if m and m.get("budget_bytes") else "-",
                      size(m["resident_bytes"]) if m else "-",
                      f"{size(m['streamed_bytes'])} / {duration(d['copy_wait_seconds'])}"
                      if m and "streamed_bytes" in m and isinstance(d.get("copy_wait_seconds"), (int, float)) else "-",
                      f"{duration(gap['seconds'])}: job {_short(gap['job'])} partition {gap['partition']} "
                      f"({gap['cause']})"
                      if gap else "none in the window")
    return table


def _short(job_id: str) -> str:
    return job_id if len(job_id) <= SHORT_ID else job_id[:SHORT_ID] + "…"


def queue(status: dict) -> Table:
    table = _table("Queue", "priority", "jobs")
    for p in PRIORITIES:
        table.add_row(p, str(status["queue"][p]))
    table.add_section()
    for name, key in (("partitions waiting", "waiting"), ("ready", "ready"), ("in flight", "in_flight")):
        table.add_row(name, str(status["partitions"][key]))
    return table


def progress(proved: int, in_flight: int, partitions: int, width: int = 20) -> Text:
    """A bar of partitions proved (#) and in flight (=) of all."""
    total = max(1, partitions)
    done = round(width * min(proved, total) / total)
    going = min(width - done, round(width * in_flight / total))
    return Text("#" * done, style="green") + Text("=" * going, style="yellow") + \
        Text("." * (width - done - going), style="dim")


def jobs(status: dict) -> Table:
    table = _table("Jobs", "job", "kind", "priority", "state", "proved", "in flight", "queued", "failed",
                   "partitions", "")
    table.columns[0].overflow = "fold"          # a job's id whole, on two lines where space is short
    for j in status["jobs"]["active"]:
        table.add_row(j["job_id"], j["kind"], j["priority"], j["state"], str(j["proved"]), str(j["in_flight"]),
                      str(j["queued"]), str(j["failed"]), str(j["partitions"]),
                      progress(j["proved"], j["in_flight"], j["partitions"]))
    if not status["jobs"]["active"]:
        table.add_row("no active jobs", style="dim")
    counts = status["jobs"]["counts"]
    table.caption = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("queued", "running", "completed", "failed",
                                                                  "cancelled"))
    table.caption_justify = "left"
    return table


def srs(status: dict) -> Table:
    r = status["srs"]
    table = _table("Parameters (SRS)", "key", "bytes", "jobs using it", "loads", "idle")
    for e in r["sets"]:
        table.add_row(e["key"], size(e["bytes"]), str(e["leases"]), str(e["loads"]),
                      "loading" if e.get("loading") else duration(e["idle_seconds"]))
    table.caption = f"resident {size(r['resident_bytes'])}, budget " + \
        (size(r["budget_bytes"]) if r["budget_bytes"] else "none")
    table.caption_justify = "left"
    return table


def memory(status: dict) -> Table:
    h = status["memory"]["host"]
    table = _table("Host memory", "host", "bytes")
    for name, key in (("total", "total_bytes"), ("available", "available_bytes"),
                      ("partitions in flight", "in_flight_bytes"), ("waiting for admission", "pending_bytes"),
                      ("budget for partitions", "budget_bytes")):
        table.add_row(name, size(h.get(key)))
    return table


def node_devices(node: dict) -> str:
    """A cluster node's devices, each with its efficiency over the node's
    last figures_seconds ("gpu0 99.1 %, gpu1 -"; a device without figures:
    its label alone); "-" for none."""
    figures = {f["label"]: f for f in node.get("device_figures") or []}
    return ", ".join(f"{label} {percent(figures[label]['efficiency'])}" if label in figures else label
                     for label in node["devices"]) or "-"


def cluster(status: dict) -> Table | None:
    """The cluster's nodes (engine.cluster), or None without a cluster."""
    c = status.get("cluster")
    if not c:
        return None
    table = _table("Cluster nodes", "node", "address", "state", "devices (efficiency)", "parameters", "sent", "done",
                   "failed", "run again", "in flight", "dispatch")
    for n in c["nodes"]:
        table.add_row(n["node_id"][:8], n["address"], n["state"] + (f" ({n['why']})" if n.get("why") else ""),
                      node_devices(n),
                      ", ".join(f"{e['key']} x{e['loads']}" for e in n["srs"]) or "-",
                      str(n["partitions_sent"]), str(n["partitions_done"]), str(n["partitions_failed"]),
                      str(n["partitions_rerun"]), str(n["in_flight"]),
                      "-" if n["dispatch_ms"] is None else duration(n["dispatch_ms"] / 1e3))
    if not c["nodes"]:
        table.add_row("no nodes found yet", style="dim")
    seconds = next((n["figures_seconds"] for n in c["nodes"] if n.get("figures_seconds")), None)
    table.caption = f"{c['name']} at {c.get('address') or '(local)'}, namespace {c.get('namespace')}: " \
        f"{c['nodes_ready']} of {len(c['nodes'])} nodes ready" + \
        (f"; efficiency: each node's own, over its last {seconds:g} s" if seconds else "")
    table.caption_justify = "left"
    return table


def render(live: dict, width: int = 100, source: str = "") -> Group:
    """The whole view of a /status/live answer, for a console `width` columns wide."""
    s, w = live["status"], live.get("window")
    head = Text.assemble(("porep-prover ", "bold"), (f"{s['version']}  ", "dim"),
                         ("accepting jobs" if s["accepting"] else "not accepting (draining)",
                          "green" if s["accepting"] else "bold red"),
                         f"  up {duration(s['uptime_seconds'])}", (f"  {source}" if source else "", "dim"))
    parts: list[RenderableType] = [head, Text(f"Timeline, last {round(w['seconds']) if w else 60} s", style="bold"),
                                   lanes(w, width)]
    if w is not None and not w["complete"]:
        parts.append(Text("stages open before the window may be missing: older events have left the engine's "
                          "memory", style="dim"))
    parts += [devices(s, w), jobs(s), Columns([queue(s), memory(s), srs(s)], padding=(0, 4))]
    nodes = cluster(s)
    if nodes is not None:
        parts.append(nodes)
    if s.get("plugin_calls_stuck"):
        parts.append(Text("plugin calls past their time limit: " + "; ".join(s["plugin_calls_stuck"]),
                          style="bold red"))
    return Group(*parts)
