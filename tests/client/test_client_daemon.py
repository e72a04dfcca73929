# SPDX-License-Identifier: Apache-2.0
"""The client against a real daemon process (`porep-prover daemon` on
127.0.0.1, a free port, a bearer token, its state in a temporary folder):
demo jobs proved through Client, AsyncClient, the command line, and a client
built from the shipped proving.proto alone, every proof verified here with
the daemon's parameters and its public inputs checked against the circuit."""
import asyncio
import json
import os
import pathlib
import secrets
import shutil
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from porep_prover.circuits import porep_like
from porep_prover.cli import build_parser
from porep_prover.client import AsyncClient, Client, JobState
from porep_prover.errors import DaemonAuthenticationError, DaemonRequestError, DaemonUnavailableError
from porep_prover.groth16 import Proof, verify
from porep_prover.groth16.verifier_files import read_verifying_key

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROTO = ROOT / "src" / "porep_prover" / "daemon" / "v1" / "proving.proto"
START_LIMIT = 120.0            # seconds for the daemon to answer
PROVE_LIMIT = 300.0


def daemon_exists() -> bool:
    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    return "daemon" in commands


pytestmark = pytest.mark.skipif(not daemon_exists(), reason="no `porep-prover daemon` command in this tree yet")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """A daemon process; its address, token, state folder and log."""

    def __init__(self, folder: pathlib.Path):
        self.state = folder / "state"
        self.token_file = folder / "token"
        self.token = secrets.token_hex(16)
        self.token_file.write_text(self.token + "\n")
        self.token_file.chmod(0o600)
        self.address = f"127.0.0.1:{free_port()}"
        self.log_path = folder / "daemon.log"
        settings = {"daemon.state_dir": str(self.state), "daemon.listen": self.address,
                    "daemon.status_listen": '""', "daemon.token_file": str(self.token_file)}
        argv = [sys.executable, "-m", "porep_prover.cli", "daemon"]
        for key, value in settings.items():
            argv += ["--set", f"{key}={value}"]
        env = dict(os.environ, POREP_PROVER_THREADS="2")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=folder)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def wait_ready(self) -> None:
        """Until GetStatus answers (bounded by START_LIMIT and the process's life)."""
        end = time.monotonic() + START_LIMIT
        with Client(self.address, token=self.token, timeout=5) as client:
            for _ in range(int(START_LIMIT / 0.2) + 1):
                if self.process.poll() is not None:
                    raise AssertionError(f"the daemon ended ({self.process.returncode}): {self.log()}")
                try:
                    client.status()
                    return
                except DaemonUnavailableError:
                    if time.monotonic() > end:
                        break
                    time.sleep(0.2)
        raise AssertionError(f"the daemon did not answer within {START_LIMIT} s: {self.log()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)

    def vk(self, constraints: int):
        """The verifying key of the daemon's demo parameters for that size."""
        found = list(self.state.rglob(f"porep-like-{constraints}.params"))
        assert len(found) == 1, found
        return read_verifying_key(found[0])


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    d = Daemon(tmp_path_factory.mktemp("daemon"))
    try:
        d.wait_ready()
        yield d
    finally:
        d.stop()


def demo_payload(rng) -> dict:
    return {"constraints": rng.choice([37, 45, 61, 90]), "seed": rng.randrange(1 << 64)}


def expected_inputs(payload: dict, partitions: int) -> list[list[int]]:
    from porep_prover.daemon.demo import partition_seed
    return [porep_like(payload["constraints"], seed=partition_seed(payload["seed"], i))[2] for i in range(partitions)]


def check(daemon, result, payload: dict, partitions: int) -> None:
    assert result.ok, result
    assert len(result.proofs) == partitions and result.job.partitions == partitions
    assert result.public_inputs == expected_inputs(payload, partitions)
    assert result.verify(daemon.vk(payload["constraints"]))


def test_client_proves_demo_jobs(daemon, rng):
    payload, partitions = demo_payload(rng), rng.choice([2, 3])
    with Client(daemon.address, token=daemon.token, timeout=30) as client:
        check(daemon, client.prove("demo", payload, partitions=partitions, timeout=PROVE_LIMIT), payload, partitions)
        seen = []
        sub = client.submit("demo", payload | {"seed": payload["seed"] ^ 1}, partitions=partitions,
                            priority="high", request_id=f"client-{rng.randrange(1 << 32)}")
        result = client.await_proof(sub.job_id, timeout=PROVE_LIMIT, progress=seen.append, interval=0.05)
        check(daemon, result, payload | {"seed": payload["seed"] ^ 1}, partitions)
        assert seen[-1].state is JobState.COMPLETED and seen[-1].proved == partitions
        assert [j.proved for j in seen] == sorted(j.proved for j in seen)
        assert sub.job_id in [j.job_id for j in client.list_jobs(states=["completed"])]
        assert client.job(sub.job_id).state is JobState.COMPLETED
        with pytest.raises(DaemonRequestError):
            client.submit("no-such-kind", {})
    with Client(daemon.address, timeout=10) as client, pytest.raises(DaemonAuthenticationError):
        client.status()


def test_async_client_proves_demo_jobs(daemon, rng):
    payload = demo_payload(rng)

    async def main():
        async with AsyncClient(daemon.address, token=daemon.token, timeout=30) as client:
            seen = []
            both = await asyncio.gather(
                client.prove("demo", payload, partitions=2, timeout=PROVE_LIMIT),
                client.prove("demo", payload, partitions=3, timeout=PROVE_LIMIT, progress=seen.append,
                             interval=0.05))
            return both, seen
    (two, three), seen = asyncio.run(asyncio.wait_for(main(), PROVE_LIMIT + 30))
    check(daemon, two, payload, 2)
    check(daemon, three, payload, 3)
    assert seen and seen[-1].finished


def test_command_line_proves_a_demo_job(daemon, rng, tmp_path):
    payload = demo_payload(rng)
    connect = ["--address", daemon.address, "--token-file", str(daemon.token_file)]
    cli = [sys.executable, "-m", "porep_prover.cli", "client", *connect]
    env = dict(os.environ, POREP_PROVER_THREADS="2")
    # the parameters exist once a job of this size ran: prove first, then verify with them
    run = subprocess.run(cli + ["prove", "--kind", "demo", "--partitions", "2", "--payload", json.dumps(payload),
                                "--timeout", str(PROVE_LIMIT), "-o", str(tmp_path / "proofs.bin")],
                         capture_output=True, text=True, timeout=PROVE_LIMIT + 60, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    proofs = Proof.split((tmp_path / "proofs.bin").read_bytes())
    vk = daemon.vk(payload["constraints"])
    assert [verify(vk, inputs, p) for inputs, p in zip(expected_inputs(payload, 2), proofs)] == [True, True]
    params = next(daemon.state.rglob(f"porep-like-{payload['constraints']}.params"))
    submit = subprocess.run(cli + ["submit", "--kind", "demo", "--partitions", "3", "--payload", json.dumps(payload)],
                            capture_output=True, text=True, timeout=60, env=env)
    assert submit.returncode == 0, submit.stderr
    job_id = submit.stdout.strip()
    waited = subprocess.run(cli + ["await", job_id, "--timeout", str(PROVE_LIMIT), "--vk", str(params),
                                   "--interval", "0.1"], capture_output=True, text=True, timeout=PROVE_LIMIT + 60,
                            env=env)
    assert waited.returncode == 0, waited.stdout + waited.stderr
    assert f"{job_id}: completed, 3 partition proofs, each verified with {params}" in waited.stdout
    assert f"{job_id}: completed, 3/3 proved" in waited.stderr        # progress, a line per change


SHIPPED_CLIENT = textwrap.dedent('''
    import importlib.abc, json, sys

    class NoProjectCode(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "porep_prover":
                raise ImportError("this client is built from proving.proto alone")
            return None

    sys.meta_path.insert(0, NoProjectCode())
    import grpc
    import proving_pb2 as pb
    import proving_pb2_grpc as pb_grpc

    address, token, payload = sys.argv[1], sys.argv[2], sys.argv[3]
    metadata = (("authorization", "Bearer " + token),)
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.ProvingEngineStub(channel)
        submitted = stub.SubmitProof(pb.SubmitProofRequest(kind="demo", partitions=2, priority=pb.PRIORITY_LOW,
                                                           payload=payload.encode()), metadata=metadata, timeout=30)
        reply = stub.AwaitProof(pb.AwaitProofRequest(job_id=submitted.job_id, timeout_ms=280000),
                                metadata=metadata, timeout=300)
        job = stub.GetJob(pb.GetJobRequest(job_id=submitted.job_id), metadata=metadata, timeout=30)
    print(json.dumps({"status": pb.AwaitProofResponse.Status.Name(reply.status), "proof": reply.proof.hex(),
                      "inputs": [list(p.values) for p in reply.public_inputs],
                      "state": pb.JobState.Name(job.state), "proved": job.proved, "error": reply.error_message,
                      "project_modules": sorted(m for m in sys.modules if m.startswith("porep_prover")),
                      "pb_file": pb.__file__}))
''')


def test_a_client_built_from_the_shipped_proto_alone(daemon, rng, tmp_path):
    pytest.importorskip("grpc_tools.protoc", reason="grpcio-tools (the test extra) makes the client's code")
    folder = tmp_path / "shipped"
    folder.mkdir()
    shutil.copyfile(PROTO, folder / "proving.proto")
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", ".", "--python_out=.", "--grpc_python_out=.",
                    "proving.proto"], cwd=folder, check=True, capture_output=True, timeout=120)
    (folder / "client.py").write_text(SHIPPED_CLIENT)
    payload = demo_payload(rng)
    env = {k: v for k, v in os.environ.items() if not k.startswith("POREP_PROVER")} | {"PYTHONPATH": str(folder)}
    run = subprocess.run([sys.executable, "client.py", daemon.address, daemon.token, json.dumps(payload)],
                         cwd=folder, env=env, capture_output=True, text=True, timeout=PROVE_LIMIT + 60)
    assert run.returncode == 0, run.stderr[-4000:]
    out = json.loads(run.stdout)
    assert out["project_modules"] == [] and pathlib.Path(out["pb_file"]).parent == folder
    assert (out["status"], out["state"], out["proved"]) == ("COMPLETED", "JOB_STATE_COMPLETED", 2), out["error"]
    proofs = Proof.split(bytes.fromhex(out["proof"]))
    inputs = [[int(v) for v in values] for values in out["inputs"]]
    assert inputs == expected_inputs(payload, 2)
    vk = daemon.vk(payload["constraints"])
    assert all(verify(vk, x, p) for x, p in zip(inputs, proofs)) and len(proofs) == 2
