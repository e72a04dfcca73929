# SPDX-License-Identifier: Apache-2.0
"""supraseal-c2, the CUDA Groth16 prover of Filecoin's C2, through ctypes:
the library `benchmarks/peers/build.sh c2` builds (its entry points are
benchmarks/peers/supraseal_c2_shim.cu's), the layout of its structs, and a
partition's inputs in that layout made from our circuit and witness.

Its inputs for one circuit (supraseal-c2's Assignment<fr_t>, bellperson's
ProvingAssignment as it hands it over):

    a, b, c         A w, B w, C w per constraint row, with bellman's input
                    constraints (the inputs at rows m .. m + k - 1 of a);
                    abc_size = m + k rows are read, the rest of the domain
                    is zero-padded by the prover itself
    inputs, aux     the witness's k inputs (the one first) and its aux values
    density         three bitmaps of 64-bit words, lowest bit first: A over
                    aux, B over inputs, B over aux, each with its bit length
                    and popcount. A variable's bit is set where our
                    parameters have its point: R1CS.density(), the variables
                    the matrix reads (Parameters.check_matches counts the a
                    and b queries by it), which is how insecure_setup and
                    bellperson's generator leave out the points at infinity

Every scalar, r and s included, is a 32-byte little-endian Fr in Montgomery
form: an FrArray's rows as they are. A proof comes back as affine points in
Montgomery form, the point at infinity as zeros: our G1Point / G2Point limbs.
"""
from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import pathlib
import sys
import tempfile
from collections.abc import Iterator

import numpy as np

from porep_prover.curve.points import G1Point, G2Point
from porep_prover.field.fr_array import FrArray
from porep_prover.groth16 import Parameters, Proof
from porep_prover.groth16.prover import synthesize
from porep_prover.r1cs.system import R1CS

HERE = pathlib.Path(__file__).resolve().parent
BUILD = HERE / "peers" / "build"
LIBRARIES = {"cuzk-fork": BUILD / "libsupraseal_c2.so", "upstream": BUILD / "libsupraseal_c2_upstream.so"}
MESSAGE_BYTES = 1024
TIMING_PREFIXES = ("CUZK_TIMING:", "CUZK_NTT_H:")     # the cuzk fork's per-phase lines on stderr


class PeerError(Exception):
    """The library is missing, was built for another layout, or refused a call (its message in the text)."""


class Assignment(ctypes.Structure):
    """supraseal-c2's Assignment<fr_t> (groth16_cuda.cu): 17 eight-byte fields."""
    _fields_ = [
        ("a_aux_density", ctypes.c_void_p), ("a_aux_bit_len", ctypes.c_size_t),
        ("a_aux_popcount", ctypes.c_size_t),
        ("b_inp_density", ctypes.c_void_p), ("b_inp_bit_len", ctypes.c_size_t),
        ("b_inp_popcount", ctypes.c_size_t),
        ("b_aux_density", ctypes.c_void_p), ("b_aux_bit_len", ctypes.c_size_t),
        ("b_aux_popcount", ctypes.c_size_t),
        ("a", ctypes.c_void_p), ("b", ctypes.c_void_p), ("c", ctypes.c_void_p), ("abc_size", ctypes.c_size_t),
        ("inp_assignment_data", ctypes.c_void_p), ("inp_assignment_size", ctypes.c_size_t),
        ("aux_assignment_data", ctypes.c_void_p), ("aux_assignment_size", ctypes.c_size_t),
    ]


PROOF_LIMBS = G1Point.WIDTH + G2Point.WIDTH + G1Point.WIDTH     # groth16_proof: A, B, C affine
# c2_layout's figures in its order, and what this side lays out for each
LAYOUT = (
    ("sizeof(Assignment)", ctypes.sizeof(Assignment)),
    ("offsetof(b_inp_density)", Assignment.b_inp_density.offset),
    ("offsetof(a)", Assignment.a.offset),
    ("offsetof(abc_size)", Assignment.abc_size.offset),
    ("offsetof(aux_assignment_size)", Assignment.aux_assignment_size.offset),
    ("sizeof(groth16_proof)", 8 * PROOF_LIMBS),
    ("sizeof(fr_t)", 32),
    ("sizeof(G1 affine)", 8 * G1Point.WIDTH),
    ("sizeof(G2 affine)", 8 * G2Point.WIDTH),
)


@dataclasses.dataclass(frozen=True)
class Bitmap:
    """A density bitmap: bit i of words[i // 64] (lowest bit first) set where variable i has a point."""
    words: np.ndarray
    bits: int
    popcount: int

    @classmethod
    def of(cls, mask: np.ndarray) -> "Bitmap":
        """From one bool per variable; at least one word, so the pointer is never null."""
        mask = np.asarray(mask, dtype=bool)
        packed = np.packbits(mask, bitorder="little")
        words = np.zeros(max(1, -(-len(mask) // 64)), dtype=np.uint64)
        words.view(np.uint8)[:len(packed)] = packed        # little-endian words: byte 0 holds bits 0-7
        return cls(words, len(mask), int(np.count_nonzero(mask)))


@dataclasses.dataclass
class C2Inputs:
    """One partition in supraseal-c2's terms (the module's docstring); assignment() points into these arrays,
    which must outlive every call given it."""
    a: FrArray
    b: FrArray
    c: FrArray
    abc_size: int
    inputs: FrArray
    aux: FrArray
    a_aux: Bitmap
    b_input: Bitmap
    b_aux: Bitmap

    def assignment(self) -> Assignment:
        def rows(values: FrArray) -> int:
            return values.limbs.ctypes.data
        return Assignment(
            self.a_aux.words.ctypes.data, self.a_aux.bits, self.a_aux.popcount,
            self.b_input.words.ctypes.data, self.b_input.bits, self.b_input.popcount,
            self.b_aux.words.ctypes.data, self.b_aux.bits, self.b_aux.popcount,
            rows(self.a), rows(self.b), rows(self.c), self.abc_size,
            rows(self.inputs), len(self.inputs), rows(self.aux), len(self.aux))

    def check_srs(self, counts: dict[str, int]) -> None:
        """PeerError unless an SRS of these point counts (h, l, a, b_g1, b_g2)
        is this circuit's: the sizes supraseal-c2 asserts (an assert there
        ends the process), and h over the domain a, b and c are padded to."""
        b = self.b_input.popcount + self.b_aux.popcount
        want = {"h": len(self.a) - 1, "l": len(self.aux), "a": len(self.inputs) + self.a_aux.popcount,
                "b_g1": b, "b_g2": b}
        wrong = [f"{name} has {counts[name]}, the circuit needs {need}" for name, need in want.items()
                 if counts[name] != need]
        if wrong:
            raise PeerError("supraseal-c2's SRS is not this circuit's: " + "; ".join(wrong))


def c2_inputs(params: Parameters, r1cs: R1CS, witness: FrArray, threads: int) -> C2Inputs:
    """The partition (r1cs, witness) in supraseal-c2's layout: a, b, c as our
    prover's synthesize makes them (gathering nothing: its AbcWitnessAssignment),
    the witness split at the inputs, the density of R1CS.density(). Raises
    what synthesize raises (ParamsMismatchError for parameters of another circuit)."""
    assignment = synthesize(params, r1cs, witness, threads, check=False, gathers=True)
    k, density = r1cs.num_inputs, r1cs.density()
    return C2Inputs(assignment.a, assignment.b, assignment.c, r1cs.num_constraints + k, witness[:k], witness[k:],
                    Bitmap.of(density.a_aux), Bitmap.of(density.b_input), Bitmap.of(density.b_aux))


def proof_of(limbs: np.ndarray) -> Proof:
    """groth16_proof's 48 limbs (A, B, C affine, Montgomery) as our Proof."""
    g1, g2 = G1Point.WIDTH, G2Point.WIDTH
    return Proof(G1Point(limbs[:g1].reshape(1, g1)), G2Point(limbs[g1:g1 + g2].reshape(1, g2)),
                 G1Point(limbs[g1 + g2:].reshape(1, g1)))


def parse_timing(lines: list[str]) -> dict[str, float]:
    """The numbers of the cuzk fork's CUZK_TIMING and CUZK_NTT_H lines,
    key=value or key=valuems, by key (CUZK_NTT_H's prefixed ntt_h_); the
    per-GPU thread index and the circuit count dropped, a key seen twice
    summed (one GPU thread here: seen once)."""
    out: dict[str, float] = {}
    for line in lines:
        prefix = next((p for p in TIMING_PREFIXES if line.startswith(p)), None)
        if prefix is None:
            continue
        for token in line[len(prefix):].split():
            key, _, value = token.partition("=")
            if key in ("gpu_tid", "num_circuits", "gpu"):
                continue
            try:
                number = float(value.removesuffix("ms"))
            except ValueError:
                continue
            name = f"ntt_h_{key}" if prefix == "CUZK_NTT_H:" else key
            out[name] = out.get(name, 0.0) + number
    return out


@contextlib.contextmanager
def stderr_lines() -> Iterator[list[str]]:
    """File descriptor 2 (where the library's fprintf goes) captured for the
    block; the list filled with its lines at the end, which are also copied
    to the real stderr so that a log keeps them."""
    lines: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode(errors="replace")
            lines.extend(text.splitlines())
            sys.stderr.write(text)
            sys.stderr.flush()


class SupraSealC2:
    """The built library, its layout checked against LAYOUT on opening
    (PeerError for a missing file, a missing entry point or another layout)."""

    def __init__(self, path: pathlib.Path):
        if not path.is_file():
            raise PeerError(f"no {path}; build it first with sh benchmarks/peers/build.sh c2")
        lib = ctypes.CDLL(str(path))
        vp, size, msg = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p
        for name, args, res in (
            ("c2_layout", [ctypes.POINTER(size)], size),
            ("c2_srs_load", [msg, ctypes.POINTER(vp), msg, size], ctypes.c_int),
            ("c2_srs_counts", [vp, ctypes.POINTER(size)], None),
            ("c2_srs_free", [vp], None),
            ("c2_prove", [ctypes.POINTER(Assignment), size, vp, vp, vp, vp, msg, size], ctypes.c_int),
        ):
            if not hasattr(lib, name):
                raise PeerError(f"{path} has no {name}; rebuild it with sh benchmarks/peers/build.sh c2")
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, res
        self.lib, self.path = lib, path
        figures = self.layout()
        wrong = [f"{name} {figures[i]} there, {ours} here" for i, (name, ours) in enumerate(LAYOUT)
                 if figures[i] != ours]
        if wrong:
            raise PeerError(f"{path} lays its structs out otherwise: " + "; ".join(wrong))
        self.variant = "cuzk-fork" if figures[len(LAYOUT)] else "upstream"

    def layout(self) -> list[int]:
        """c2_layout's figures: LAYOUT's as the library compiled them, then 1 for the cuzk fork (0: upstream)."""
        out = (ctypes.c_size_t * 16)()
        return list(out[:self.lib.c2_layout(out)])

    def load_srs(self, params_path: pathlib.Path) -> int:
        """A handle on the SRS read from a bellperson .params file, decoded
        into pinned host memory (returned once the decode is over); free it
        with free_srs. PeerError with the library's message."""
        handle, message = ctypes.c_void_p(), ctypes.create_string_buffer(MESSAGE_BYTES)
        code = self.lib.c2_srs_load(str(params_path).encode(), ctypes.byref(handle), message, MESSAGE_BYTES)
        if code or not handle.value:
            raise PeerError(f"supraseal-c2 create_SRS({params_path}): error {code}: {message.value.decode()}")
        return handle.value

    def srs_counts(self, srs: int) -> dict[str, int]:
        out = (ctypes.c_size_t * 5)()
        self.lib.c2_srs_counts(srs, out)
        return dict(zip(("h", "l", "a", "b_g1", "b_g2"), out))

    def free_srs(self, srs: int) -> None:
        self.lib.c2_srs_free(srs)

    def prove(self, srs: int, inputs: C2Inputs, blinding: tuple[int, int]) -> tuple[Proof, list[str]]:
        """One circuit proved with r, s = blinding; the proof and the
        library's stderr lines of the call (the fork's CUZK_TIMING).
        PeerError with its message where it fails."""
        assignment = inputs.assignment()
        r, s = (FrArray.from_ints([v]).limbs for v in blinding)
        out = np.zeros(PROOF_LIMBS, dtype=np.uint64)
        message = ctypes.create_string_buffer(MESSAGE_BYTES)
        with stderr_lines() as lines:
            code = self.lib.c2_prove(ctypes.byref(assignment), 1, r.ctypes.data, s.ctypes.data, out.ctypes.data,
                                     srs, message, MESSAGE_BYTES)
        if code:
            raise PeerError(f"supraseal-c2 prove: error {code}: {message.value.decode()}")
        return proof_of(out), lines
