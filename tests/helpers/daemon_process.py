# SPDX-License-Identifier: Apache-2.0
"""A proving daemon in a process of its own, for the daemon's tests: it
listens on 127.0.0.1 only, on ports picked free (port 0, read back from
its state folder's daemon.json), proves on the CPU with one synthesis
worker, and is stopped by SIGTERM (or killed); every wait is bounded."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import grpc

from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.daemon.v1 import proving_pb2_grpc

START_SECONDS = 60.0
BASE = {"daemon.listen": "127.0.0.1:0", "daemon.status_listen": "127.0.0.1:0", "engine.devices": "cpu",
        "engine.partition_workers": 1, "engine.threads": 1, "engine.synthesis_threads": 1,
        "logging.level": "WARNING"}


def bounded(condition, seconds: float, what: str, every: float = 0.02):
    """condition()'s first true value, polled every `every` seconds for at
    most `seconds`; AssertionError naming what was awaited otherwise."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(every)


class DaemonProcess:
    """`porep-prover daemon` on state folder state_dir with BASE's settings
    and `settings` (dotted key -> value) on top."""

    def __init__(self, state_dir, settings: dict | None = None):
        self.state_dir = pathlib.Path(state_dir)
        self.settings = {**BASE, "daemon.state_dir": str(self.state_dir), **(settings or {})}
        self.proc: subprocess.Popen | None = None
        self.address = self.status_address = ""
        self._channel = None
        self._log = None

    def argv(self) -> list[str]:
        sets = []
        for key, value in self.settings.items():
            if isinstance(value, list):
                value = "[" + ", ".join(json.dumps(v) for v in value) + "]"
            elif isinstance(value, bool):
                value = "true" if value else "false"
            sets += ["--set", f"{key}={value}"]
        return [sys.executable, "-m", "porep_prover.cli", "daemon", *sets]

    def start(self) -> "DaemonProcess":
        self.state_dir.mkdir(parents=True, exist_ok=True)
        address_file = self.state_dir / "daemon.json"
        self._log = open(self.state_dir.parent / f"{self.state_dir.name}.log", "ab")
        self.proc = subprocess.Popen(self.argv(), stdout=self._log, stderr=subprocess.STDOUT)

        def listening():
            if self.proc.poll() is not None:
                raise AssertionError(f"the daemon ended with {self.proc.returncode} at start:\n{self.log()}")
            try:
                info = json.loads(address_file.read_text())
            except (OSError, ValueError):
                return None
            return info if info["pid"] == self.proc.pid else None

        info = bounded(listening, START_SECONDS, "the daemon listens", every=0.05)
        self.address, self.status_address = info["listen"], info["status_listen"]
        return self

    def log(self) -> str:
        path = self.state_dir.parent / f"{self.state_dir.name}.log"
        return path.read_text(errors="replace")[-6000:] if path.exists() else ""

    def channel(self, **kwargs):
        if self._channel is None:
            self._channel = grpc.insecure_channel(self.address, **kwargs)
        return self._channel

    def stub(self) -> proving_pb2_grpc.ProvingEngineStub:
        return proving_pb2_grpc.ProvingEngineStub(self.channel())

    def rss_bytes(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM, then its exit status (killed after timeout seconds: AssertionError)."""
        self._close_channel()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"the daemon did not end within {timeout} s of SIGTERM:\n{self.log()}") from None
        finally:
            self._log.close()

    def kill(self) -> None:
        """SIGKILL: the process ends at once, whatever it was doing."""
        self._close_channel()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)

    def _close_channel(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.stop(30)
            except AssertionError:
                pass
        if self._log is not None and not self._log.closed:
            self._log.close()


def demo_request(constraints: int, partitions: int = 1, seed: int = 0, **fields) -> pb.SubmitProofRequest:
    payload = json.dumps({"constraints": constraints, "seed": seed}).encode()
    return pb.SubmitProofRequest(kind="demo", partitions=partitions, payload=payload, **fields)


def demo_params(state_dir, constraints: int):
    """The demo parameters the daemon keeps in its state folder."""
    from porep_prover.daemon.demo import params_path
    from porep_prover.groth16 import load_params
    return load_params(params_path(os.path.join(state_dir, "params-cache"), constraints))


def check_proofs(answer: pb.AwaitProofResponse, vk, constraints: int | None = None, seed: int | None = None) -> None:
    """Every partition's proof of a completed answer verifies; with
    constraints and seed, its public inputs are those of the demo witness."""
    from porep_prover.circuits import porep_like
    from porep_prover.daemon.demo import partition_seed
    from porep_prover.groth16 import Proof, verify
    assert answer.status == pb.AwaitProofResponse.COMPLETED, answer
    proofs = Proof.split(answer.proof)
    assert len(proofs) == len(answer.public_inputs) == answer.job.partitions
    for i, (proof, public) in enumerate(zip(proofs, answer.public_inputs)):
        values = [int(v) for v in public.values]
        assert verify(vk, values, proof), f"partition {i}"
        if constraints is not None:
            assert values == porep_like(constraints, seed=partition_seed(seed, i))[2]


def rpc_error(call, *args, **kwargs) -> grpc.RpcError:
    """The RpcError the call raises (AssertionError when it succeeds)."""
    try:
        call(*args, **kwargs)
    except grpc.RpcError as exc:
        return exc
    raise AssertionError(f"{call} succeeded")
