# SPDX-License-Identifier: Apache-2.0
"""The daemon's whole request surface fuzzed (one daemon process on
127.0.0.1): random and extreme values for every field of every method of
porep_prover.v1.ProvingEngine, through the generated stubs and as raw bytes
on the wire, are each answered with a clear status and a message, never
INTERNAL or UNKNOWN; after each run the daemon still answers, every job it
accepted is still known, and no request has left an error in its log.

Accepted jobs are kept cheap: a demo payload that passes holds 8 to 64
constraints, and a job of many partitions is cancelled as soon as it is
accepted. Every call has a deadline."""
import json

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daemon_process import DaemonProcess
from porep_prover.daemon.v1 import proving_pb2 as pb

SERVICE = "porep_prover.v1.ProvingEngine"
CALL_SECONDS = 10.0         # the deadline of a call that does not wait for a job
WAIT_SECONDS = 3.0          # of AwaitProof and Prove: a wait for a job still running ends here
MAX_REQUEST_BYTES = 8 << 20
CHEAP_PARTITIONS = 4        # a job of more partitions is cancelled when it is accepted
MAX_MESSAGE_CHARS = 4096    # a status message longer than this is not "clear"
EXAMPLES, WIRE_EXAMPLES = 1500, 600   # about 15 s in all on two cores
FINE = {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.OUT_OF_RANGE, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.CANCELLED,
        grpc.StatusCode.DEADLINE_EXCEEDED}          # the last: the caller's own deadline, while it waits for a job
PROTO_METHODS = pb.DESCRIPTOR.services_by_name["ProvingEngine"].methods_by_name
FIELDS = {name: [f.name for f in m.input_type.fields] for name, m in PROTO_METHODS.items()}   # as the .proto has them
METHODS = tuple(FIELDS)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    inputs = root / "inputs"
    inputs.mkdir()
    settings_ = {"daemon.kinds": ["demo", "r1cs-file"], "daemon.max_pending": 6, "daemon.max_waiters": 4,
                 "daemon.max_request_bytes": MAX_REQUEST_BYTES, "daemon.input_roots": [str(inputs)]}
    with DaemonProcess(root / "state", settings_) as d:
        d.inputs, d.accepted = str(inputs), {}
        yield d


# ------------------------------------------------------------ values

def _long_strings():
    lengths = st.sampled_from([127, 128, 129, 4096, 4097, 8192, 8193, 70_000, 1 << 20])
    return st.tuples(st.sampled_from(["x", "\x00", "é", "\U0001f600", "\u202e"]), lengths).map(lambda t: t[0] * t[1])


STRINGS = st.one_of(st.text(max_size=40), st.sampled_from(["", " ", "demo", "r1cs-file", "porep-shaped", "inline",
                                                            "demo:8", "\x00", "\r\n\t\x1b[2J", "\ufeff", "../..",
                                                            "0" * 32, "'; DROP TABLE jobs; --", "%s%n%x"]),
                    _long_strings())
UINT32 = st.one_of(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2**16, 2**16 + 1, 2**31 - 1, 2**31, 2**32 - 1]))
UINT64 = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1]))
ENUM = st.one_of(st.integers(-1, 6), st.integers(-2**31, 2**31 - 1))      # proto3 enums are open: any int32
PARTITIONS = st.one_of(st.integers(0, 3), st.sampled_from([65_536, 65_537, 2**31, 2**32 - 1]), UINT32)
WAIT_PARTITIONS = st.one_of(st.integers(0, 3), st.integers(65_537, 2**32 - 1))   # Prove: no long job to wait for

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10)
CONSTRAINTS = st.one_of(st.integers(8, 64), st.integers(max_value=7), st.integers(min_value=(1 << 20) + 1),
                        JSON_VALUES)             # a valid count is small: an accepted job stays cheap


def _paths(root):
    names = st.one_of(st.text(max_size=20), _long_strings(), st.sampled_from(["..", ".", "", "\x00", "\ud800"]))
    return st.one_of(names, names.map(lambda n: f"{root}/{n}"), st.sampled_from(["/etc/passwd", "relative", "/"]))


def _dumps(value) -> bytes:
    return json.dumps(value).encode("utf-8", "surrogatepass")      # NaN and Infinity as Python writes them


def _demo_payloads():
    return st.fixed_dictionaries({"constraints": CONSTRAINTS},
                                 optional={"seed": st.one_of(UINT64, JSON_VALUES)}).map(_dumps)


def _payloads(root):
    paths = _paths(root)
    files = st.fixed_dictionaries({}, optional={"params": paths | JSON_VALUES, "circuit": paths,
                                                "witnesses": st.lists(paths, max_size=5) | JSON_VALUES})
    return st.one_of(_demo_payloads(), files.map(_dumps), JSON_VALUES.map(_dumps), st.binary(max_size=64),
                     st.sampled_from(_extreme_payloads(root)))


def _extreme_payloads(root) -> list[bytes]:
    deep = 1000
    return [b"", b"{}", b"{", b" " * 64, b"[]", b"null", b"1", b'"x"', b"true", b"\xef\xbb\xbf{}",
            b"[" * deep + b"]" * deep, b'{"a":' * deep + b"1" + b"}" * deep, b"[" * 100_000,
            b'{"constraints": ' + b"[" * (deep - 2) + b"]" * (deep - 2) + b"}",
            b'{"constraints": ' + b"9" * 5001 + b"}", b'{"constraints": ' + b"9" * 4000 + b"}",
            b'{"constraints": 8, "seed": -' + b"9" * 5001 + b"}", b'{"constraints": 1e999999}',
            b'{"constraints": NaN}', b'{"constraints": -Infinity}', b'{"constraints": 8.0}',
            b'{"constraints": 8, "constraints": 9}', b'{"constraints": "' + b"x" * (1 << 20) + b'"}',
            b'{"' + b"k" * (1 << 20) + b'": 1}', b"\xff", b"\xc0\x80", b'{"a": "\xff"}', b'{"a": "\xed\xa0\x80"}',
            b'{"\\ud800": 1}', b'{"params": "/\\ud800"}', _dumps({"params": f"{root}/\udcff"}),
            _dumps({"params": f"{root}/" + "a" * 5000, "circuit": f"{root}/c", "witnesses": [f"{root}/w"]}),
            _dumps({"witnesses": ["/x"] * 70_000}), _dumps({"witnesses": [f"{root}/w{i}" for i in range(3000)]}),
            _dumps({str(i): i for i in range(50_000)})]


def _submit_fields(root, partitions=PARTITIONS) -> dict:
    """A submit's fields; about one in twenty is accepted."""
    return {"request_id": st.one_of(st.just(""), STRINGS), "kind": st.one_of(st.just("demo"), STRINGS),
            "partitions": st.one_of(st.integers(1, 3), partitions), "priority": st.one_of(st.integers(0, 4), ENUM),
            "payload": st.one_of(_demo_payloads(), _payloads(root))}


KNOWN = st.integers(0, 1 << 16).map(lambda i: ("known", i))    # a job_id naming one the daemon accepted
JOB_IDS = st.one_of(STRINGS, KNOWN)


def _fields(root) -> dict:
    """Every method's request fields, each with its values."""
    return {
        "SubmitProof": _submit_fields(root),
        "AwaitProof": {"job_id": JOB_IDS, "timeout_ms": UINT64},
        "Prove": {"submit": st.fixed_dictionaries(_submit_fields(root, WAIT_PARTITIONS)), "timeout_ms": UINT64},
        "CancelProof": {"job_id": JOB_IDS},
        "GetStatus": {},
        "GetMetrics": {},
        "PreloadSRS": {"kind": st.one_of(STRINGS, st.just("demo")), "payload": _payloads(root)},
        "EvictSRS": {"srs_key": STRINGS},
        "ListJobs": {"states": st.lists(ENUM, max_size=8) | _many(ENUM), "limit": UINT32},
        "GetJob": {"job_id": JOB_IDS},
    }


def _many(values):
    """A repeated field of very many entries."""
    return st.tuples(values, st.sampled_from([1000, 100_000])).map(lambda t: [t[0]] * t[1])


def test_every_field_of_every_method_is_fuzzed():
    assert {m: sorted(f) for m, f in _fields("/r").items()} == {m: sorted(f) for m, f in FIELDS.items()}


# ------------------------------------------------------------ calls

def _request(method: str, fields: dict, accepted: dict):
    """The method's request message of fields; a job_id drawn as known names one of accepted."""
    fields = dict(fields)
    if isinstance(fields.get("job_id"), tuple):
        ids = list(accepted)
        fields["job_id"] = ids[fields["job_id"][1] % len(ids)] if ids else ""
    if "submit" in fields:
        fields["submit"] = pb.SubmitProofRequest(**fields["submit"])
    return getattr(pb, PROTO_METHODS[method].input_type.name)(**fields)


def _answer(call, request, seconds: float):
    """(status code, its message, the response or None) of one call with a deadline."""
    try:
        return grpc.StatusCode.OK, "", call(request, timeout=seconds)
    except grpc.RpcError as exc:
        return exc.code(), exc.details() or "", None


def _clear(method: str, code, message: str) -> None:
    assert code in FINE, f"{method}: {code.name}: {message[:2000]}"
    if code != grpc.StatusCode.OK:
        assert message.strip(), f"{method}: {code.name} without a message"
        assert not message.startswith("Exception "), f"{method}: {code.name}: gRPC's own: {message[:2000]}"
        assert len(message) <= MAX_MESSAGE_CHARS, f"{method}: {code.name}: a message of {len(message)} characters"


def _call(daemon, method: str, fields: dict):
    """One call of method; its status checked, the jobs it got accepted noted
    (and cancelled at once when they have many partitions)."""
    stub = daemon.stub()
    request = _request(method, fields, daemon.accepted)
    waits = method in ("AwaitProof", "Prove")
    code, message, response = _answer(getattr(stub, method), request, WAIT_SECONDS if waits else CALL_SECONDS)
    _clear(method, code, message)
    if code == grpc.StatusCode.OK and method in ("SubmitProof", "Prove"):
        submit = request if method == "SubmitProof" else request.submit
        daemon.accepted[response.job_id] = submit.partitions
        if submit.partitions > CHEAP_PARTITIONS and method == "SubmitProof":
            stub.CancelProof(pb.CancelProofRequest(job_id=response.job_id), timeout=CALL_SECONDS)
    return code


def test_random_values_of_every_field_get_a_clear_status(daemon):
    requests = {method: st.fixed_dictionaries(fields) for method, fields in _fields(daemon.inputs).items()}

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
    @given(st.data())
    def fuzz(data):
        method = data.draw(st.sampled_from(METHODS), label="method")
        fields = data.draw(requests[method], label="fields")
        _call(daemon, method, fields)

    fuzz()
    assert daemon.accepted, "the fuzz got no job accepted: the acceptance path went untested"
    _afterwards(daemon)


def test_extreme_values_of_every_field_get_a_clear_status(daemon):
    texts = ["x" * 129, "\x00" * 4097, "\U0001f600" * 70_000, "y" * (1 << 20), "\r\n\x1b\x7f\u202e", ""]
    for payload in _extreme_payloads(daemon.inputs):
        for kind in ("demo", "r1cs-file", "porep-shaped"):
            _call(daemon, "SubmitProof", {"kind": kind, "partitions": 1, "payload": payload})
            _call(daemon, "PreloadSRS", {"kind": kind, "payload": payload})
        _call(daemon, "Prove", {"submit": {"kind": "demo", "partitions": 1, "payload": payload}, "timeout_ms": 1})
    every = _fields(daemon.inputs)
    for text in texts:
        for method, fields in every.items():
            strings = {name: text for name in fields if name in ("request_id", "kind", "job_id", "srs_key")}
            if strings:
                _call(daemon, method, strings)
        _call(daemon, "Prove", {"submit": {"kind": text, "request_id": text}})
    _call(daemon, "Prove", {"timeout_ms": 1})                   # no submit at all
    demo = _dumps({"constraints": 8})
    for partitions in (0, 65_537, 2**31, 2**32 - 1):
        _call(daemon, "SubmitProof", {"kind": "demo", "partitions": partitions, "payload": demo})
    for priority in (-2**31, -1, 5, 2**31 - 1):
        _call(daemon, "SubmitProof", {"kind": "demo", "partitions": 1, "priority": priority, "payload": demo})
    for timeout_ms in (1, 2**63, 2**64 - 1):
        _call(daemon, "AwaitProof", {"job_id": ("known", 0), "timeout_ms": timeout_ms})
    for states in ([-2**31], [2**31 - 1], list(range(-500, 500)), [1] * 200_000, list(range(100_000))):
        for limit in (0, 2**32 - 1):
            _call(daemon, "ListJobs", {"states": states, "limit": limit})
    _afterwards(daemon)


# ------------------------------------------------------------ the wire

def _varint(n: int) -> bytes:
    """n (any size; a negative one as 64-bit two's complement, as protobuf writes an int64) as a varint."""
    n = n & (2**64 - 1) if n < 0 else n
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _wire_field(number: int, wire: int, value) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 0:
        return key + _varint(value)
    if wire == 2:
        return key + _varint(len(value)) + value
    return key + value


NUMBERS = st.one_of(st.integers(1, 6), st.integers(1, 2**29 - 1))
BYTES = st.one_of(st.binary(max_size=40), st.sampled_from([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"a\x00b",
                                                            b"\xf4\x90\x80\x80", b"\x80" * 1000]))
FLAT = st.lists(st.one_of(
    st.tuples(NUMBERS, st.just(0), st.integers(-(2**70), 2**80)),
    st.tuples(NUMBERS, st.just(2), BYTES),
    st.tuples(NUMBERS, st.just(1), st.binary(min_size=8, max_size=8)),
    st.tuples(NUMBERS, st.just(5), st.binary(min_size=4, max_size=4)),
    st.tuples(NUMBERS, st.integers(3, 7), st.binary(max_size=4))), max_size=6).map(
        lambda fields: b"".join(_wire_field(*f) for f in fields))
WIRE = st.one_of(FLAT, st.binary(max_size=100),
                 st.tuples(FLAT, FLAT).map(lambda t: _wire_field(1, 2, t[0]) + t[1]),   # nested (Prove's submit)
                 FLAT.map(lambda b: b + b"\x0a\xff\xff\xff\xff\x0f"))             # a length past the end


def test_raw_bytes_of_every_method_get_a_clear_status(daemon):
    channel = daemon.channel()
    calls = {m: channel.unary_unary(f"/{SERVICE}/{m}") for m in METHODS}      # bytes in, bytes out
    calls["Health.Check"] = channel.unary_unary("/grpc.health.v1.Health/Check")

    @settings(max_examples=WIRE_EXAMPLES, deadline=None, database=None)
    @given(st.sampled_from(sorted(calls)), WIRE)
    def fuzz(method, data):
        code, message, _ = _answer(calls[method], data, WAIT_SECONDS)
        _clear(method, code, message)

    fuzz()
    _afterwards(daemon)


# ------------------------------------------------------------ afterwards

def _afterwards(daemon) -> None:
    """The daemon still answers, every job it accepted is still known (the
    unfinished ones are cancelled), and its log holds no error."""
    health = health_pb2_grpc.HealthStub(daemon.channel())
    for service in ("", SERVICE):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=CALL_SECONDS)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    stub = daemon.stub()
    assert stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_SECONDS).accepting
    for job_id in daemon.accepted:             # not lost: answered (NOT_FOUND would raise)
        job = stub.GetJob(pb.GetJobRequest(job_id=job_id), timeout=CALL_SECONDS)
        assert job.job_id == job_id and job.state != pb.JOB_STATE_UNSPECIFIED
        if job.state in (pb.JOB_STATE_QUEUED, pb.JOB_STATE_RUNNING):
            stub.CancelProof(pb.CancelProofRequest(job_id=job_id), timeout=CALL_SECONDS)
    log = (daemon.state_dir.parent / f"{daemon.state_dir.name}.log").read_text(errors="replace")
    assert "Traceback" not in log and " ERROR " not in log, log[-6000:]
