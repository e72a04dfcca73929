# SPDX-License-Identifier: Apache-2.0
"""The daemon is safe by default: loopback or a Unix socket unless told
otherwise, and then only with TLS or a bearer token; with a token every
call carries it; TLS with a certificate; one daemon per state folder."""
import datetime
import ipaddress
import os
import secrets
import stat
import subprocess
import sys

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from daemon_process import DaemonProcess, check_proofs, demo_params, demo_request, rpc_error
from porep_prover.daemon.settings import Address, DaemonSettings
from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.daemon.v1 import proving_pb2_grpc
from porep_prover.engine import load_config
from porep_prover.errors import ConfigError


def settings(**dotted):
    return DaemonSettings.resolve(load_config(overrides=dotted))


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "token"
    path.write_text(secrets.token_hex(24) + "\n")
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("address, loopback", [("127.0.0.1:1", True), ("127.5.6.7:1", True), ("[::1]:1", True),
                                               ("localhost:1", True), ("unix:/run/x.sock", True),
                                               ("0.0.0.0:1", False), ("[::]:1", False), ("10.1.2.3:1", False),
                                               ("prover.example:1", False)])
def test_which_addresses_are_loopback(address, loopback):
    assert Address.parse(address).is_loopback() is loopback


def test_an_exposed_address_needs_allow_remote_and_tls_or_a_token(tmp_path, token_file):
    with pytest.raises(ConfigError, match="allow_remote") as err:
        settings(**{"daemon.listen": "0.0.0.0:9820"})
    assert err.value.key == "daemon.listen"
    with pytest.raises(ConfigError, match="TLS .* or a bearer token"):
        settings(**{"daemon.listen": "0.0.0.0:9820", "daemon.allow_remote": True})
    with pytest.raises(ConfigError, match="daemon.status_listen"):
        settings(**{"daemon.status_listen": "0.0.0.0:9821"})
    ok = settings(**{"daemon.listen": "[::]:9820", "daemon.allow_remote": True, "daemon.token_file": str(token_file)})
    assert ok.token == token_file.read_text().strip().encode() and ok.listen.target() == "[::]:9820"


def test_bad_security_files_are_named(tmp_path, token_file):
    short = tmp_path / "short"
    short.write_text("abc")
    cases = {"daemon.token_file": {"daemon.token_file": str(short)},
             "daemon.tls_key": {"daemon.tls_cert": str(token_file)},
             "daemon.tls_cert": {"daemon.tls_cert": str(token_file), "daemon.tls_key": str(token_file)},
             "daemon.input_roots": {"daemon.input_roots": ["relative/path"]}}
    for key, dotted in cases.items():
        with pytest.raises(ConfigError) as err:
            settings(**dotted)
        assert err.value.key == key and key in str(err.value)
    with pytest.raises(ConfigError, match="daemon.token_file.*No such file"):
        settings(**{"daemon.token_file": str(tmp_path / "missing")})
    for bad in ("9820", "host:", "host:99999", "unix:relative", "[nope]:1", "a b:1"):
        with pytest.raises(ConfigError, match="daemon.listen"):
            load_config(overrides={"daemon.listen": bad})


def test_the_command_refuses_an_exposed_address_before_listening(tmp_path):
    out = subprocess.run([sys.executable, "-m", "porep_prover.cli", "daemon", "--set", "daemon.listen=0.0.0.0:0",
                          "--set", f"daemon.state_dir={tmp_path / 'state'}"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "not a loopback address" in out.stderr
    assert not (tmp_path / "state").exists()


def test_token_on_a_unix_socket_and_one_daemon_per_state_folder(tmp_path, token_file):
    sock = tmp_path / "d.sock"
    with DaemonProcess(tmp_path / "state", {"daemon.listen": f"unix:{sock}", "daemon.token_file": str(token_file)}) \
            as daemon:
        assert daemon.address == f"unix:{sock}" and stat.S_IMODE(os.stat(sock).st_mode) == 0o600
        stub = daemon.stub()
        health = health_pb2_grpc.HealthStub(daemon.channel())
        token = token_file.read_text().strip()
        for metadata in ((), (("authorization", "Bearer wrong-token-of-some-length"),),
                         (("authorization", token),), (("authorization", f"Bearer {token}x"),)):
            err = rpc_error(stub.SubmitProof, demo_request(20), timeout=10, metadata=metadata)
            assert err.code() == grpc.StatusCode.UNAUTHENTICATED and "bearer token" in err.details()
            err = rpc_error(health.Check, health_pb2.HealthCheckRequest(), timeout=10, metadata=metadata)
            assert err.code() == grpc.StatusCode.UNAUTHENTICATED
        good = (("authorization", f"Bearer {token}"),)
        answer = stub.Prove(pb.ProveRequest(submit=demo_request(20, seed=2)), timeout=60, metadata=good)
        check_proofs(answer, demo_params(daemon.state_dir, 20).vk, 20, 2)
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=10, metadata=good).status == \
            health_pb2.HealthCheckResponse.SERVING
        other = subprocess.run(DaemonProcess(tmp_path / "state").argv(), capture_output=True, text=True, timeout=60)
        assert other.returncode == 2 and "in use by another daemon" in other.stderr
        assert (tmp_path / "state" / "daemon.json").exists()          # the running daemon's, left alone


def self_signed(tmp_path):
    """A certificate for 127.0.0.1 and its key (PEM files), made with cryptography or openssl."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        try:
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                            "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
        except (OSError, subprocess.CalledProcessError):
            pytest.skip("neither the cryptography package nor openssl is here to make a certificate")
        key.chmod(0o600)
        return cert, key
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .sign(private, hashes.SHA256()))
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    key.chmod(0o600)
    return cert, key


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o660])
def test_secrets_others_can_read_or_change_are_refused(tmp_path, token_file, mode):
    token_file.chmod(mode)
    with pytest.raises(ConfigError, match="chmod 600") as err:
        settings(**{"daemon.token_file": str(token_file)})
    assert err.value.key == "daemon.token_file"
    cert, key = self_signed(tmp_path)
    key.chmod(mode)
    with pytest.raises(ConfigError, match="chmod 600") as err:
        settings(**{"daemon.tls_cert": str(cert), "daemon.tls_key": str(key)})
    assert err.value.key == "daemon.tls_key"
    token_file.chmod(0o400)                              # the owner's alone: read
    assert settings(**{"daemon.token_file": str(token_file)}).token


def test_a_state_folder_made_before_is_made_private(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    os.chmod(state, 0o755)
    (state / "notes.txt").write_text("left by an operator")
    os.chmod(state / "notes.txt", 0o644)
    (state / "results").mkdir()
    os.chmod(state / "results", 0o755)
    with DaemonProcess(state, {}) as daemon:
        daemon.stub().GetStatus(pb.GetStatusRequest(), timeout=10)
        modes = {str(p.relative_to(state)): stat.S_IMODE(os.lstat(p).st_mode) for p in [state, *state.rglob("*")]
                 if not p.is_symlink() and not p.is_socket()}
    assert modes["."] == 0o700 and modes["journal.sqlite3"] == 0o600 and modes["notes.txt"] == 0o600
    assert all(m == (0o700 if (state / p).is_dir() else 0o600) for p, m in modes.items()), \
        {p: oct(m) for p, m in modes.items()}


def test_tls(tmp_path):
    cert, key = self_signed(tmp_path)
    with DaemonProcess(tmp_path / "state", {"daemon.tls_cert": str(cert), "daemon.tls_key": str(key)}) as daemon:
        with grpc.secure_channel(daemon.address, grpc.ssl_channel_credentials(cert.read_bytes())) as channel:
            stub = proving_pb2_grpc.ProvingEngineStub(channel)
            answer = stub.Prove(pb.ProveRequest(submit=demo_request(24, seed=9)), timeout=60)
            check_proofs(answer, demo_params(daemon.state_dir, 24).vk, 24, 9)
        err = rpc_error(daemon.stub().GetStatus, pb.GetStatusRequest(), timeout=5)   # plaintext: no answer
        assert err.code() == grpc.StatusCode.UNAVAILABLE
        taken = DaemonProcess(tmp_path / "other", {"daemon.listen": daemon.address}).argv()
        other = subprocess.run(taken, capture_output=True, text=True, timeout=60)     # its port is taken
        assert other.returncode == 2 and f"daemon.listen {daemon.address}: cannot listen" in other.stderr


def test_daemon_kinds_chooses_what_it_serves(tmp_path):
    bad = subprocess.run(DaemonProcess(tmp_path / "a", {"daemon.kinds": ["demo", "no-such-kind"]}).argv(),
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "daemon.kinds names 'no-such-kind', not installed" in bad.stderr
    with DaemonProcess(tmp_path / "b", {"daemon.kinds": ["r1cs-file"]}) as daemon:
        stub = daemon.stub()
        err = rpc_error(stub.SubmitProof, demo_request(20), timeout=10)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "job kind 'demo' is not served by this daemon (daemon.kinds: r1cs-file)" in err.details()
