# SPDX-License-Identifier: Apache-2.0
"""Named exceptions. Every public function raises one of these on bad input.

All derive from `PorepProverError`; the input errors also derive from
`ValueError` so generic callers can catch them the usual way.
"""
from __future__ import annotations


class PorepProverError(Exception):
    """Base of every error raised by porep_prover."""


class InvalidInputError(PorepProverError, ValueError):
    """An argument has the wrong type, shape, length or value."""


class LengthMismatchError(InvalidInputError):
    """Two sequences that must have the same length do not (e.g. points and scalars)."""


class ScalarRangeError(InvalidInputError):
    """A scalar is negative or not below the group order r."""


class DomainSizeError(InvalidInputError):
    """An NTT length is not a power of two, or exceeds 2^32 (the 2-adicity of r - 1)."""


class EncodingError(InvalidInputError):
    """Bytes are not a valid encoding: bad flag bits, wrong length, non-canonical coordinate.

    Attributes
    ----------
    index : int or None
        Position of the offending element in a batch, when there is one.
    """

    def __init__(self, message: str, index: int | None = None):
        super().__init__(message)
        self.index = index


class NotOnCurveError(EncodingError):
    """A point is not on the curve (or a compressed x has no matching y)."""


class NotInSubgroupError(EncodingError):
    """A point is on the curve but not in the prime-order subgroup."""


class UnknownBackendError(InvalidInputError):
    """A backend name other than "cpu", "gpu" or "auto"."""


class BackendUnavailableError(PorepProverError):
    """The requested backend exists but cannot run here (e.g. "gpu" with no device)."""


class NativeMemoryError(PorepProverError, MemoryError):
    """Native code could not allocate its working memory."""


class CudaError(PorepProverError):
    """A CUDA driver call failed.

    Attributes
    ----------
    code : int
        The CUresult value.
    name : str
        Its CUDA name (e.g. "CUDA_ERROR_ILLEGAL_ADDRESS").
    """

    def __init__(self, message: str, code: int = 0, name: str = ""):
        super().__init__(message)
        self.code, self.name = code, name


class DeviceMemoryError(CudaError, MemoryError):
    """The GPU has not enough free memory for the request."""


class HostMemoryError(PorepProverError, MemoryError):
    """A workload's host-memory plan does not fit the host budget
    (memory.host_plan): the message names what does not fit and the
    options (fewer workers, a larger device budget, B's G2 MSM on the device,
    a larger budget). Raised before anything of it is allocated."""


class DeviceResultError(PorepProverError):
    """A device computed a result that its check against the CPU rejected
    (a kernel fault: nothing made from it is used)."""


class NvrtcError(PorepProverError):
    """NVRTC could not compile a kernel source.

    Attributes
    ----------
    log : str
        The compiler's log.
    """

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


class R1CSError(InvalidInputError):
    """A constraint system is malformed (index out of range, inconsistent sizes)."""


class WitnessError(InvalidInputError):
    """A witness has the wrong length or does not start with the constant one."""


class UnsatisfiedError(PorepProverError):
    """The witness does not satisfy the constraint system.

    Attributes
    ----------
    constraint : int
        Index of the first failing constraint (-1 when none is known).
    """

    def __init__(self, message: str, constraint: int = -1):
        super().__init__(message)
        self.constraint = constraint


class ParamsError(PorepProverError):
    """Groth16 parameters are unusable."""


class ParamsFormatError(ParamsError, EncodingError):
    """A parameters file is truncated, has trailing bytes, holds an invalid point, or fails its checksum."""


class ParamsDigestError(ParamsFormatError):
    """A parameters file's whole-file digest is not the one expected of it: the file is damaged or is
    not the file the digest was published for. Raised only after the file was read whole.

    Attributes
    ----------
    path : str
        The file.
    expected, actual : str
        The digests (32 lower-case hex characters each).
    """

    def __init__(self, message: str, path: str = "", expected: str = "", actual: str = ""):
        super().__init__(message)
        self.path, self.expected, self.actual = path, expected, actual


class ParamsMismatchError(ParamsError, InvalidInputError):
    """Parameters do not belong to the circuit they are used with."""


class KeyIntegrityError(ParamsError):
    """A proving key is damaged or was not made for the circuit it proves: a
    proof made with it did not verify although the witness satisfies the
    circuit and the CPU's sums agree with the device's (or the key's own
    points contradict each other or the circuit). No proof is handed out.

    Attributes
    ----------
    findings : list[str]
        What the tests of the key found (a point off the curve or at infinity
        where the circuit needs one, B_1 and B_2 disagreeing, ...); empty when
        they found nothing, the key then damaged where no test can see it or
        made for another circuit.
    key_file : str or None
        The key's file, set by a caller that knows it; the message then starts with it.
    """

    def __init__(self, message: str, findings=()):
        super().__init__(message)
        self.findings = list(findings)
        self.key_file = None

    def __str__(self) -> str:
        text = super().__str__()
        return f"{self.key_file}: {text}" if self.key_file else text


class WitnessOrKeyError(KeyIntegrityError, UnsatisfiedError):
    """A proof did not verify and no circuit was at hand to check its witness
    against (a .zkey, which stores no C, proved without its .r1cs): either the
    witness does not satisfy the circuit or the key is damaged; proving with
    the circuit tells which. .constraint is -1, .findings empty."""


class ProofFormatError(EncodingError):
    """A proof (bytes or JSON) is malformed."""


class VerifyingKeyFormatError(EncodingError):
    """A verification key (bytes or JSON) is malformed."""


class CircuitFormatError(InvalidInputError):
    """A circuit or witness file (ours, or circom's .r1cs / .wtns) is malformed."""


class PublicInputsError(InvalidInputError):
    """Public inputs (e.g. public.json) are malformed or do not fit the key."""


class VanillaProofError(InvalidInputError):
    """A PoRep commit-phase-1 output (its vanilla proofs) is malformed or does
    not verify: a field of the wrong type or size, a Merkle path that does not
    reach its root, a label or encoding that does not recompute.

    Attributes
    ----------
    where : str
        The offending field, as a path into the output's JSON (e.g.
        "vanilla_proofs[0][1].comm_d_proofs.data.Single.root").
    """

    def __init__(self, message: str, where: str = ""):
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where


class ConfigError(InvalidInputError):
    """An engine setting is unknown or has a bad value; .key names it (dotted, e.g. "srs.preload")."""

    def __init__(self, message: str, key: str = ""):
        super().__init__(message)
        self.key = key


class EngineError(PorepProverError):
    """The engine cannot take or run work (stopped, no device, no provider for a job's kind)."""


class JobFailedError(PorepProverError):
    """A job failed: one of its partitions kept failing past its retries; the cause is chained."""

    def __init__(self, message: str, job_id: str = "", partition: int = -1):
        super().__init__(message)
        self.job_id, self.partition = job_id, partition


class JobCancelledError(PorepProverError):
    """A job was cancelled (by its owner, or by an engine shutting down without waiting)."""


class PluginError(PorepProverError):
    """A plugin's call raised what no plugin may (SystemExit, KeyboardInterrupt,
    another BaseException that is not an Exception): its partition fails
    with this, and the worker that called it goes on."""


class PluginTimeoutError(PorepProverError, TimeoutError):
    """A plugin's call did not return within its time limit: a synthesis
    provider's load_srs or synthesize (engine.provider_timeout_seconds; its
    partition's job fails, not retried), a result sink's deliver or a
    notification hook (engine.sink_timeout_seconds; logged). The call's
    thread is left to finish on its own: Python cannot stop a thread.

    Attributes
    ----------
    plugin : str
        What was called ("synthesize of provider ExampleProvider", "result sink dir-sink").
    seconds : float
        The limit that passed.
    """

    def __init__(self, message: str, plugin: str = "", seconds: float = 0.0):
        super().__init__(message)
        self.plugin, self.seconds = plugin, seconds


class FileKindError(InvalidInputError):
    """A file is of another kind than the argument it was given as (a circuit
    where parameters belong, arguments in the wrong order), told by its first
    bytes; the message names the file, what was expected and what it is.

    Attributes
    ----------
    path : str
        The file.
    expected, found : str
        The kinds, in words ("a circuit (.npz or circom .r1cs)").
    """

    def __init__(self, message: str, path: str = "", expected: str = "", found: str = ""):
        super().__init__(message)
        self.path, self.expected, self.found = path, expected, found


class DaemonError(PorepProverError):
    """A call to the proving daemon failed with a gRPC status (porep_prover.client);
    the message names the daemon's address, the status and the daemon's own words.
    Statuses without a subclass of their own (INTERNAL, UNKNOWN, ...) raise this.

    Attributes
    ----------
    code : str
        The status's name ("UNAVAILABLE", "NOT_FOUND", ...).
    details : str
        The daemon's message, as it sent it.
    """

    def __init__(self, message: str, code: str = "UNKNOWN", details: str = ""):
        super().__init__(message)
        self.code, self.details = code, details


class DaemonUnavailableError(DaemonError):
    """UNAVAILABLE: no daemon answers at the address, or it is draining."""


class DaemonLimitError(DaemonError):
    """RESOURCE_EXHAUSTED: a limit of the daemon refused the request
    (daemon.max_pending jobs accepted and unfinished, daemon.max_waiters
    waits at once, or the request size)."""


class DaemonRequestError(DaemonError, InvalidInputError):
    """INVALID_ARGUMENT: the daemon refused the request (an unknown kind, a
    malformed payload, partitions out of range)."""


class DaemonPermissionError(DaemonError):
    """PERMISSION_DENIED: a path in the payload lies outside the daemon's input roots."""


class DaemonAuthenticationError(DaemonError):
    """UNAUTHENTICATED: the bearer token is missing or wrong."""


class DaemonDeadlineError(DaemonError, TimeoutError):
    """DEADLINE_EXCEEDED: the call did not end within its deadline."""


class JobNotFoundError(DaemonError, LookupError):
    """NOT_FOUND: the daemon knows no job of that id."""


class InputPathError(InvalidInputError):
    """A path in a job's payload is refused by the daemon: it lies outside
    daemon.input_roots once resolved (a symbolic link leading out included),
    it has a `..` component, or the daemon has no input roots. The service
    answers PERMISSION_DENIED.

    Attributes
    ----------
    path : str
        The path as given.
    """

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.path = path


class CapacityError(PorepProverError):
    """The daemon is at a limit (daemon.max_pending jobs accepted and
    unfinished, daemon.max_waiters waits at once); the message names it. The
    service answers RESOURCE_EXHAUSTED."""
