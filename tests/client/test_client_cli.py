# SPDX-License-Identifier: Apache-2.0
"""`porep-prover client ...` against the in-process fake daemon
(tests/helpers/fake_proving_engine.py): outputs, exit statuses, one-line errors."""
import json

import pytest

from fake_proving_engine import FakeEngine, FakeServer, Material
from porep_prover.cli import main
from porep_prover.cli.client_cmds import default_address
from porep_prover.groth16 import Proof

MATERIAL_PROOFS = 2          # proofs the fake daemon serves (conftest.material)


@pytest.fixture
def vk_file(material, tmp_path):
    path = tmp_path / "vk.json"
    path.write_text(json.dumps(material.vk.to_json()))
    return str(path)


def client(fake, *argv) -> list[str]:
    return ["client", "--address", fake.address, "--call-timeout", "10", *argv]


def test_submit_then_await_verifies(fake, material, vk_file, tmp_path, capsys, rng):
    partitions = rng.choice([2, 3, 5])
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"constraints": 300, "seed": rng.randrange(1000)}))
    capsys.readouterr()                      # the seeds' lines
    assert main(client(fake, "submit", "--kind", "steps", "--partitions", str(partitions), "--priority", "high",
                       "--payload", f"@{payload}")) == 0
    job_id = capsys.readouterr().out.strip()
    request = fake.engine.calls[-1][1]
    assert job_id in fake.engine.jobs and json.loads(request.payload) == json.loads(payload.read_text())
    proofs = tmp_path / "proofs.bin"
    assert main(client(fake, "await", job_id, "--timeout", "20", "--interval", "0.01", "--vk", vk_file,
                       "-o", str(proofs))) == 0
    out = capsys.readouterr()
    assert f"{job_id}: completed, {partitions} partition proofs, each verified with {vk_file}" in out.out
    progress = out.err.splitlines()          # not a terminal: a line per change
    assert progress[0].startswith(f"{job_id}: running, 0/{partitions} proved")
    assert progress[-1].startswith(f"{job_id}: completed, {partitions}/{partitions} proved")
    assert len(progress) == partitions + 1
    assert Proof.split(proofs.read_bytes()) == [material.proofs[i % 2] for i in range(partitions)]


def test_await_without_a_key_trusts_only_completed(fake, capsys):
    main(client(fake, "submit", "--kind", "instant"))
    job_id = capsys.readouterr().out.strip()
    assert main(client(fake, "await", job_id, "--json")) == 0
    out = capsys.readouterr()
    assert "verified by the daemon" in out.err           # with --json, the words go to standard error
    result = json.loads(out.out)
    assert result["status"] == "completed" and len(result["proofs"]) == 1 and result["job"]["state"] == "completed"
    assert "failed_partitions" not in result


def test_json_names_the_partition_that_does_not_verify(fake, vk_file, tmp_path, capsys):
    proofs = tmp_path / "proofs.bin"
    assert main(client(fake, "prove", "--kind", "bad-proof", "--partitions", "4", "--vk", vk_file, "--json",
                       "-o", str(proofs))) == 1
    out = capsys.readouterr()
    assert json.loads(out.out)["failed_partitions"] == [1] and "partition 1 of 4 does not verify" in out.err
    assert not proofs.exists()                      # nothing that does not verify is written


def test_a_key_of_another_circuit_is_named_before_the_wait(fake, tmp_path, capsys, rng):
    other = Material.make(1, rng, num_public=len(fake.engine.material.public) % 4 + 1)   # another count of inputs
    path = tmp_path / "other.json"
    path.write_text(json.dumps(other.vk.to_json()))
    assert main(client(fake, "prove", "--kind", "instant", "--vk", str(path))) == 2
    assert f"--vk {path}: " in capsys.readouterr().err
    assert main(client(fake, "prove", "--kind", "instant", "--vk", str(tmp_path / "missing.json"))) == 2
    assert "missing.json" in capsys.readouterr().err
    assert [m for m, _, _ in fake.engine.calls] == ["SubmitProof", "GetJob", "AwaitProof"]   # the first only


@pytest.mark.parametrize("kind, says", [("broken", "failed: partition 0: synthesis failed"),
                                        ("bad-proof", "the proof of partition 1 of 3 does not verify")])
def test_a_failed_job_or_a_bad_proof_exits_1(fake, vk_file, capsys, kind, says):
    assert main(client(fake, "prove", "--kind", kind, "--partitions", "3", "--vk", vk_file, "--timeout", "10")) == 1
    assert says in capsys.readouterr().out


def test_cancel_and_a_timeout(fake, capsys):
    main(client(fake, "submit", "--kind", "stuck"))
    job_id = capsys.readouterr().out.strip()
    assert main(client(fake, "await", job_id, "--timeout", "0.2", "--interval", "0.05")) == 1
    assert f"{job_id}: not finished within 0.2 s (still queued)" in capsys.readouterr().out
    assert main(client(fake, "cancel", job_id)) == 0
    assert f"{job_id}: cancelled (it was queued)" in capsys.readouterr().out
    assert main(client(fake, "cancel", job_id)) == 1
    assert main(client(fake, "await", job_id)) == 1
    assert f"{job_id}: cancelled" in capsys.readouterr().out


def test_status_list_metrics_preload_evict(fake, capsys):
    main(client(fake, "submit", "--kind", "instant"))
    main(client(fake, "submit", "--kind", "stuck", "--request-id", "mine"))
    done, stuck = capsys.readouterr().out.split()
    assert main(client(fake, "status")) == 0
    assert json.loads(capsys.readouterr().out)["version"] == "fake"
    assert main(client(fake, "list")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [[stuck, "queued"], [done, "completed"]]
    assert main(client(fake, "list", "--state", "completed", "--json")) == 0
    assert [j["job_id"] for j in json.loads(capsys.readouterr().out)] == [done]
    assert main(client(fake, "metrics")) == 0
    assert "porep_prover_proofs_completed_total 2" in capsys.readouterr().out
    assert main(client(fake, "preload", "--kind", "demo", "--payload", '{"constraints": 9}')) == 0
    assert "demo:9: loaded in 17 ms, 4096 bytes" in capsys.readouterr().out
    assert main(client(fake, "evict", "demo:9")) == 0 and main(client(fake, "evict", "demo:9")) == 1


def test_connection_options_after_the_action(fake, material, tmp_path, capsys):
    token = tmp_path / "token"
    token.write_text("abc123\n")
    server = FakeServer(FakeEngine(material, token="abc123"))
    try:
        assert main(["client", "status", "--address", server.address, "--token-file", str(token)]) == 0
        capsys.readouterr()
        assert main(["client", "--address", server.address, "status"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "DaemonAuthenticationError" in err and "missing or wrong bearer token" in err
    finally:
        server.stop()


@pytest.mark.parametrize("argv, says", [
    (["submit", "--kind", "nope"], "DaemonRequestError: daemon at"),
    (["submit", "--kind", "instant", "--payload", "[1]"], "--payload: a payload is a JSON object, got list"),
    (["submit", "--kind", "instant", "--payload", "{"], "--payload: not valid JSON"),
    (["submit", "--kind", "instant", "--payload", "@/nonexistent/p.json"], "cannot read a JSON payload"),
    (["await", "job-0404"], "JobNotFoundError"),
    (["status", "--token-file", "/nonexistent/token"], "cannot read a bearer token"),
    (["status", "--tls-ca", "/nonexistent/ca.pem"], "cannot read root certificates"),
])
def test_errors_are_one_line_and_exit_2(fake, capsys, argv, says):
    assert main(client(fake, *argv)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("porep-prover: error: ") and says in err


def test_no_daemon_and_bad_usage(capsys, tmp_path, monkeypatch):
    assert main(["client", "--address", "127.0.0.1:1", "--call-timeout", "10", "status"]) == 2
    assert "DaemonUnavailableError" in capsys.readouterr().err
    # no --address: the default state folder's daemon.json, else daemon.listen's default
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_address() == "127.0.0.1:9820"
    folder = tmp_path / "porep-prover" / "daemon"
    folder.mkdir(parents=True)
    (folder / "daemon.json").write_text(json.dumps({"pid": 1, "listen": "127.0.0.1:2", "status_listen": ""}))
    assert default_address() == "127.0.0.1:2"
    assert main(["client", "--call-timeout", "10", "status"]) == 2
    err = capsys.readouterr().err
    assert "DaemonUnavailableError" in err and "127.0.0.1:2" in err
    (folder / "daemon.json").write_text("{not json")
    assert default_address() == "127.0.0.1:9820"
    for argv in (["client"], ["client", "--address", "x:1", "submit"],
                 ["client", "--address", "x:1", "submit", "--kind", "k", "--partitions", "0"],
                 ["client", "--address", "x:1", "await", "j", "--timeout", "-1"],
                 ["client", "--address", "x:1", "submit", "--kind", "k", "--priority", "urgent"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
    assert main(["client", "--address", "nonsense", "status"]) == 2
    assert "address" in capsys.readouterr().err


def test_the_status_port_and_the_service_port_mixed_up_are_named(capsys):
    """`client` pointed at a port that answers HTTP/1 (the daemon's status
    page, here any web server) and `status` pointed at a gRPC service (the
    daemon's own port) each exit 2 with one line naming the mix-up and both
    settings, not a transport's parse error or a traceback."""
    import concurrent.futures
    import http.server
    import threading

    import grpc
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):         # the server's own log is not the command's output
            pass
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=web.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    service = grpc.server(concurrent.futures.ThreadPoolExecutor(1))
    port = service.add_insecure_port("127.0.0.1:0")
    service.start()
    try:
        assert main(["client", "--address", f"127.0.0.1:{web.server_port}", "--call-timeout", "10", "status"]) == 2
        err = capsys.readouterr().err
        assert "answers HTTP/1, not gRPC" in err and "daemon.status_listen" in err and err.count("\n") == 1
        assert main(["status", "--address", f"127.0.0.1:{port}"]) == 2
        err = capsys.readouterr().err
        assert "does not answer HTTP/1" in err and "daemon.listen" in err and "Traceback" not in err
    finally:
        web.shutdown()
        web.server_close()
        service.stop(None)
