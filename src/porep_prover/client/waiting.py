# SPDX-License-Identifier: Apache-2.0
"""The bound on an await with progress: rounds of GetJob then a short
AwaitProof, each round at least `interval` seconds long (so that a daemon
answering at once cannot make the client spin), none past the caller's timeout."""
from __future__ import annotations

import time

from .channel import seconds
from .messages import timeout_ms


class Wait:
    """timeout seconds from now (None: no end), in rounds of interval seconds."""

    def __init__(self, timeout: float | None, interval: float):
        self.timeout = seconds("timeout", timeout, allow_none=True)
        self.interval = seconds("interval", interval)
        self.end = None if self.timeout is None else time.monotonic() + self.timeout

    def left(self) -> float | None:
        """Seconds left (at least 0), None without an end."""
        return None if self.end is None else max(0.0, self.end - time.monotonic())

    def expired(self) -> bool:
        return self.end is not None and time.monotonic() >= self.end

    def whole_ms(self) -> int:
        """timeout_ms for one AwaitProof covering the whole wait (0: until the job ends)."""
        return timeout_ms(self.left())

    def round_ms(self) -> int:
        """timeout_ms for a round's AwaitProof: the interval, or what is left when less (at least 1)."""
        left = self.left()
        return timeout_ms(self.interval if left is None else min(self.interval, left))

    def pause(self, round_started: float) -> float:
        """Seconds to sleep before the next round: what the round (begun at
        round_started, time.monotonic()) lacks of the interval, within what is left."""
        rest = self.interval - (time.monotonic() - round_started)
        left = self.left()
        return max(0.0, rest if left is None else min(rest, left))
