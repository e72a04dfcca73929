# SPDX-License-Identifier: Apache-2.0
"""The budgets the plans are made under, from an engine's settings: the
host's (engine.memory_budget_gib) and each device's
(engine.device_memory_gib).

The host budget bounds the whole process: by default the host's memory,
or its cgroup's limit where one is set and lower, less a margin
(HOST_MARGIN_SHARE of it, at least HOST_MARGIN_MIN) for the kernel, other
processes and what no plan names. A device budget bounds what the process
holds on one device: 0 asks for the card's memory, more than the card
gets the card's, and a budget must leave room beyond MARGIN (the context,
the kernel modules). Each is a value handed to the plans, never kept on a
device for another to read.
"""
from __future__ import annotations

import logging
import os

from ..errors import InvalidInputError
from .sizes import GIB, MARGIN

LOG = logging.getLogger(__name__)
HOST_MARGIN_SHARE = 1 / 16       # of the host's memory, left out of the default budget
HOST_MARGIN_MIN = 2 << 30


def device_budget(asked: int, card_bytes: int) -> int:
    """The device budget asked bytes give on a card of card_bytes: asked,
    the card's where asked is 0 or more than the card (logged);
    InvalidInputError for a budget at or below MARGIN."""
    if asked < 0 or 0 < asked <= MARGIN:
        raise InvalidInputError(f"a device-memory budget of {asked / GIB:.2f} GiB: more than "
                                f"{MARGIN / GIB:.1f} GiB (the context's margin), or 0 for the card's")
    if asked > card_bytes:
        LOG.warning("a device-memory budget of %.1f GiB on a card of %.1f GiB: the card's", asked / GIB,
                    card_bytes / GIB)
    return min(asked, card_bytes) if asked else card_bytes


def host_memory_bytes() -> int:
    """The host's physical memory (16 GiB where the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 16 << 30


def cgroup_limit_bytes(root: str = "/sys/fs/cgroup") -> int | None:
    """The memory limit of this process's cgroup (v2 memory.max, or v1
    memory.limit_in_bytes), None where there is none or it cannot be read."""
    candidates = []
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3 and parts[0] == "0" and parts[1] == "":
                    candidates.append(os.path.join(root, parts[2].lstrip("/"), "memory.max"))
                elif len(parts) == 3 and "memory" in parts[1].split(","):
                    candidates.append(os.path.join(root, "memory", parts[2].lstrip("/"), "memory.limit_in_bytes"))
    except OSError:
        pass
    candidates += [os.path.join(root, "memory.max"), os.path.join(root, "memory", "memory.limit_in_bytes")]
    for path in candidates:
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 62:       # v1 writes a huge number for "no limit"
            return int(text)
        if text == "max":
            return None
    return None


def host_limit_bytes() -> int:
    """What this process may use of the host: its memory, or its cgroup's limit where lower."""
    limit = cgroup_limit_bytes()
    memory = host_memory_bytes()
    return min(memory, limit) if limit else memory


def host_margin(limit: int) -> int:
    """The margin the default budget leaves of limit bytes."""
    return max(HOST_MARGIN_MIN, int(limit * HOST_MARGIN_SHARE))


def default_host_budget() -> int:
    """The default host budget: host_limit_bytes() less its margin."""
    limit = host_limit_bytes()
    return max(0, limit - host_margin(limit))


def host_available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (what the kernel can hand out without
    swapping), or None where there is no such file."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None
