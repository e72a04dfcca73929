# SPDX-License-Identifier: Apache-2.0
"""Child processes a test interrupts with SIGINT, as a terminal's Ctrl-C
would: started with SIGINT at its default disposition whatever the test
command inherited. A shell that runs the tests in the background ignores
SIGINT, the ignoring is inherited across exec, and Python started with
SIGINT ignored keeps ignoring it (no KeyboardInterrupt is ever raised)."""
import signal


def default_sigint() -> None:
    """subprocess.Popen's preexec_fn: SIGINT back to its default in the child before it starts the program."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
