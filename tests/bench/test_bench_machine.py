# SPDX-License-Identifier: Apache-2.0
"""The benchmarks' reading of the machine's load."""
import os
import threading
import time

import pytest

from porep_prover.bench.machine import cpu_busy

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="reads Linux's /proc/stat")


def test_cpu_busy_is_within_the_machine_and_sees_a_spinning_thread():
    assert 0.0 <= cpu_busy(0.2) <= os.cpu_count() + 1e-9
    stop = time.monotonic() + 0.6

    def spin():
        while time.monotonic() < stop:
            pass
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        busy = cpu_busy(0.4)
    finally:
        spinner.join()
    assert 0.5 <= busy <= os.cpu_count() + 1e-9     # the spinning thread alone fills most of a CPU
