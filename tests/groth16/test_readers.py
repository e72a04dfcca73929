# SPDX-License-Identifier: Apache-2.0
"""Every reader against damaged input: valid small files (.params, .pmap,
.r1cs, .wtns, .zkey, .npz circuits, raw witnesses, the JSON files, the TOML
settings) and point and scalar encodings, bit-flipped, truncated, with header
fields set to large values, overwritten, with bytes inserted. Each reader
returns or raises a PorepProverError, nothing else, and allocates no more
than a small multiple of the file's size (tracemalloc's peak, which numpy
reports to). Then the regressions: counts far beyond a small file, malformed
.npz arrays, JSON and TOML failures naming the file, wrong argument types,
all-zero encodings."""
import dataclasses
import json
import pathlib
import random
import struct
import time
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porep_prover import circuits, snarkjs
from porep_prover.cli import main as cli
from porep_prover.curve.points import G1Array, G1Point, G2Array, G2Point
from porep_prover.engine import load_config
from porep_prover.errors import (CircuitFormatError, ConfigError, EncodingError, InvalidInputError,
                                 ParamsFormatError, PorepProverError, ProofFormatError, PublicInputsError,
                                 VerifyingKeyFormatError)
from porep_prover.field.constants import R
from porep_prover.field.fr_array import FrArray
from porep_prover.groth16 import (Proof, R1CS, VerifyingKey, insecure_setup, load_params, load_witness, prove,
                                  read_mapped, read_params, read_proofs, read_verifying_key, save_witness,
                                  verify, write_mapped, write_params)
from porep_prover.groth16.insecure_setup import InsecureSetupWarning
from porep_prover.snarkjs.binfile import BinFile, write_binfile

MIB = 1 << 20
FUZZ = settings(max_examples=100, deadline=None)


# ------------------------------------------------------------------ seed files


def circom_r1cs_bytes(r1cs: R1CS, labels: bool = True, n_wires: int | None = None) -> list[tuple[int, bytes]]:
    """r1cs in circom's .r1cs sections (all public wires as public inputs)."""
    n_wires = r1cs.num_variables if n_wires is None else n_wires
    rows = [[], [], []]
    for m, mat in enumerate((r1cs.a, r1cs.b, r1cs.c)):
        coeffs = mat.coefficients().to_bytes()
        for i in range(mat.rows):
            lo, hi = int(mat.indptr[i]), int(mat.indptr[i + 1])
            rows[m].append(struct.pack("<I", hi - lo) + b"".join(
                struct.pack("<I", int(mat.col[k])) + coeffs[32 * k:32 * k + 32] for k in range(lo, hi)))
    constraints = b"".join(rows[0][i] + rows[1][i] + rows[2][i] for i in range(r1cs.num_constraints))
    header = (struct.pack("<I", 32) + R.to_bytes(32, "little")
              + struct.pack("<IIIIQI", n_wires, 0, r1cs.num_inputs - 1, 0, n_wires, r1cs.num_constraints))
    sections = [(1, header), (2, constraints)]
    if labels:
        sections.append((3, np.arange(n_wires, dtype="<u8").tobytes()))
    return sections


@dataclasses.dataclass
class Seeds:
    dir: pathlib.Path           # the seed files
    scratch: pathlib.Path       # where damaged copies are written
    r1cs: R1CS
    witness: FrArray
    public: list
    vk: VerifyingKey
    proof: Proof

    def path(self, name: str) -> pathlib.Path:
        return self.dir / name

    def data(self, name: str) -> bytes:
        return (self.dir / name).read_bytes()


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> Seeds:
    """A porep-like circuit of a few dozen constraints, in every file format."""
    d, scratch = tmp_path_factory.mktemp("seeds"), tmp_path_factory.mktemp("damaged")
    r1cs, witness, public = circuits.porep_like(45, num_public=2, seed=7)
    rng = random.Random(11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureSetupWarning)
        params = insecure_setup(r1cs, rng=rng, threads=1)
        circuit_sections = circom_r1cs_bytes(r1cs)
        write_binfile(d / "c.r1cs", b"r1cs", 1, circuit_sections)
        circuit = snarkjs.read_r1cs(d / "c.r1cs")
        zkey = snarkjs.insecure_zkey(circuit, rng=rng, threads=1)
    proof = prove(params, r1cs, witness, threads=1, rng=rng)
    write_params(d / "c.params", params)
    write_mapped(d / "c.pmap", params)
    snarkjs.write_zkey(d / "c.zkey", zkey)
    snarkjs.write_wtns(d / "c.wtns", witness)
    r1cs.save(d / "c.npz")
    save_witness(d / "c.witness", witness)
    (d / "proof.bin").write_bytes(proof.to_bytes() * 2)
    snarkjs.write_proof(d / "proof.json", proof)
    (d / "proofs.json").write_text(json.dumps([proof.to_json()] * 2))
    (d / "vk.json").write_text(json.dumps(params.vk.to_json()))
    snarkjs.write_verification_key(d / "verification_key.json", params.vk)
    snarkjs.write_public(d / "public.json", public)
    (d / "vk.bin").write_bytes(params.vk.to_bytes())
    (d / "engine.toml").write_text("# settings\n[engine]\npartition_workers = 2\nthreads = 1\n"
                                   "memory_budget_gib = 1.5\n\n[prover]\nverify = true\n\n"
                                   "[srs]\npreload = [\"a.params\"]\n\n[logging]\nlevel = \"INFO\"\n")
    return Seeds(d, scratch, r1cs, witness, public, params.vk, proof)


# ------------------------------------------------------------------ header fields of each format


def binfile_fields(path) -> list[tuple[int, int, str]]:
    """(offset, width, byte order) of the count and size fields of an iden3 container."""
    f = BinFile(path, open(path, "rb").read(4), (1, 2), PorepProverError)
    fields = [(8, 4, "little")]
    inner = {b"r1cs": {1: [(0, 4), (36, 4), (40, 4), (44, 4), (48, 4), (52, 8), (60, 4)], 2: [(0, 4), (4, 4)]},
             b"wtns": {1: [(0, 4), (36, 4)]},
             b"zkey": {1: [(0, 4)], 2: [(0, 4), (52, 4), (88, 4), (92, 4), (96, 4)],
                       4: [(0, 4), (4, 4), (8, 4), (12, 4)]}}[bytes(f.data[:4])]
    for kind, found in f.sections.items():
        for pos, _ in found:
            fields += [(pos - 12, 4, "little"), (pos - 8, 8, "little")]
            fields += [(pos + off, width, "little") for off, width in inner.get(kind, [])]
    return fields


def params_fields(data: bytes) -> list[tuple[int, int, str]]:
    """The u32 big-endian counts of a bellperson .params file."""
    fields, pos = [], 864
    for size in (96, 96, 96, 96, 96, 192):          # ic, h, l, a, b_g1, b_g2
        fields.append((pos, 4, "big"))
        pos += 4 + size * struct.unpack(">I", data[pos:pos + 4])[0]
    return fields


PMAP_FIELDS = [(off, 8, "little") for off in range(8, 96, 8)]       # vk bytes, then (count, offset) x 5

LARGE = st.sampled_from([1 << 31, (1 << 32) - 1, 1 << 32, 1 << 40, 1 << 62, 1 << 63, (1 << 64) - 1]) | \
    st.integers(0, (1 << 64) - 1)

JSON_TOKENS = [b"[" * 5000, b"{\"a\":" * 3000, b"9" * 5000, b"\xff\xfe", b"\xc3", b'"', b"null", b"true", b"{}",
               b"[]", b"1e999", b"-1", b"NaN", b'"' + b"1" * 500 + b'"', b"\\u0000", b'"0x10"', b",", b"]", b"}"]
TOML_TOKENS = [b"[engine]\n", b"[[engine]]\n", b"\xff", b"=", b"[" * 3000, b'"', b"threads = 1\n", b"\n", b"{",
               b"inf", b"1e999", b"partition_workers = 100000\n", b"[engine.x]\n", b"a.b.c = 1\n"]


@st.composite
def damaged(draw, data: bytes, fields=(), tokens=()) -> bytes:
    """data with one to three damages."""
    out = bytearray(data)
    kinds = ["flip"] * 3 + ["truncate", "overwrite", "insert", "random"] + ["field"] * (4 if fields else 0) \
        + ["token"] * (2 if tokens else 0)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        if kind == "random":
            return draw(st.binary(max_size=512))
        if kind == "field":
            off, width, order = draw(st.sampled_from(list(fields)))
            value = draw(LARGE) & ((1 << 8 * width) - 1)
            if off + width <= len(out):
                out[off:off + width] = value.to_bytes(width, order)
            continue
        if not out:
            continue
        pos = draw(st.integers(0, len(out) - 1))
        if draw(st.booleans()):                     # as often near the end as near the start
            pos = len(out) - 1 - pos
        if kind == "flip":
            out[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del out[pos:]
        elif kind == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=64))
            out[pos:pos + len(chunk)] = chunk
        elif kind == "insert":
            out[pos:pos] = draw(st.binary(min_size=1, max_size=64))
        else:
            out[pos:pos] = draw(st.sampled_from(tokens))
    return bytes(out)


def check_reader(read, arg, size: int):
    """read(arg) returns or raises a PorepProverError, its peak allocation
    within 16 x size + 4 MiB; returns the error (None when it read)."""
    tracemalloc.start()
    try:
        read(arg)
        error = None
    except PorepProverError as exc:
        error = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak <= 16 * size + 4 * MIB, f"{read.__name__} allocated {peak} bytes for a {size}-byte input"
    return error


def fuzz_file(seeds: Seeds, name: str, readers, data: bytes):
    path = seeds.scratch / name
    path.write_bytes(data)
    for read in readers:
        check_reader(read, path, len(data))


# ------------------------------------------------------------------ property tests, one per format


@FUZZ
@given(st.data())
def test_params_file_damaged(seeds, data):
    seed = seeds.data("c.params")
    fuzz_file(seeds, "d.params", [read_params, load_params, read_verifying_key],
              data.draw(damaged(seed, params_fields(seed))))


@FUZZ
@given(st.data())
def test_mapped_params_damaged(seeds, data):
    fuzz_file(seeds, "d.pmap", [read_mapped, load_params, read_verifying_key],
              data.draw(damaged(seeds.data("c.pmap"), PMAP_FIELDS)))


@FUZZ
@given(st.data())
def test_circom_r1cs_damaged(seeds, data):
    fuzz_file(seeds, "d.r1cs", [snarkjs.read_r1cs],
              data.draw(damaged(seeds.data("c.r1cs"), binfile_fields(seeds.path("c.r1cs")))))


@FUZZ
@given(st.data())
def test_wtns_damaged(seeds, data):
    fuzz_file(seeds, "d.wtns", [snarkjs.read_wtns],
              data.draw(damaged(seeds.data("c.wtns"), binfile_fields(seeds.path("c.wtns")))))


@FUZZ
@given(st.data())
def test_zkey_damaged(seeds, data):
    fuzz_file(seeds, "d.zkey", [snarkjs.read_zkey],
              data.draw(damaged(seeds.data("c.zkey"), binfile_fields(seeds.path("c.zkey")))))


def npz_shape_fields(data: bytes) -> list[tuple[int, int, str]]:
    """The digits of every .npy header's shape, as 'fields' of ASCII width."""
    out, start = [], 0
    while (start := data.find(b"'shape': (", start)) >= 0:
        start += len(b"'shape': (")
        out.append((start, 1, "little"))
    return out


@FUZZ
@given(st.data())
def test_npz_circuit_damaged(seeds, data):
    seed = seeds.data("c.npz")
    damaged_bytes = bytearray(data.draw(damaged(seed)))
    # a header shape far beyond the member: its digits replaced in place
    for off, _, _ in npz_shape_fields(bytes(damaged_bytes))[:data.draw(st.integers(0, 2))]:
        digits = str(data.draw(LARGE)).encode()[:12]
        end = damaged_bytes.find(b",", off)
        if 0 < end - off <= 12:
            damaged_bytes[off:end] = digits
    fuzz_file(seeds, "d.npz", [R1CS.load], bytes(damaged_bytes))


@FUZZ
@given(st.data())
def test_raw_witness_damaged(seeds, data):
    fuzz_file(seeds, "d.witness", [load_witness], data.draw(damaged(seeds.data("c.witness"))))


@FUZZ
@given(st.data(), st.sampled_from(["proof.json", "proofs.json", "vk.json", "verification_key.json",
                                   "public.json", "proof.bin", "vk.bin"]))
def test_json_and_binary_keys_and_proofs_damaged(seeds, data, name):
    readers = {"proof.json": [snarkjs.read_proof, read_proofs], "proofs.json": [read_proofs],
               "vk.json": [read_verifying_key, snarkjs.read_verification_key],
               "verification_key.json": [snarkjs.read_verification_key, read_verifying_key],
               "public.json": [snarkjs.read_public], "proof.bin": [read_proofs], "vk.bin": [read_verifying_key]}
    fuzz_file(seeds, "d-" + name, readers[name], data.draw(damaged(seeds.data(name), tokens=JSON_TOKENS)))


@FUZZ
@given(st.data())
def test_toml_settings_damaged(seeds, data):
    fuzz_file(seeds, "d.toml", [load_config], data.draw(damaged(seeds.data("engine.toml"), tokens=TOML_TOKENS)))


@FUZZ
@given(st.data(), st.sampled_from([(G1Array, True), (G1Array, False), (G2Array, True), (G2Array, False)]))
def test_point_encodings_damaged(seeds, data, kind):
    cls, compressed = kind
    points = cls.concat([seeds.vk.alpha_g1, seeds.vk.delta_g1, G1Point.identity(), seeds.proof.c]) \
        if cls is G1Array else cls.concat([seeds.vk.beta_g2, G2Point.identity(), seeds.proof.b])
    raw = data.draw(damaged(points.to_bytes(compressed=compressed)))
    for read in (lambda b: cls.from_bytes(b, compressed=compressed),
                 lambda b: cls.from_bytes(b, compressed=compressed, check=False)):
        check_reader(read, raw, len(raw))
    if len(raw) == cls.COMPRESSED * (1 if compressed else 2):
        check_reader(lambda b: cls.POINT.from_bytes(b, compressed=compressed), raw, len(raw))


@FUZZ
@given(st.data())
def test_scalar_encodings_damaged(seeds, data):
    raw = data.draw(damaged(seeds.witness[:6].to_bytes()))
    check_reader(FrArray.from_bytes, raw, len(raw))
    check_reader(Proof.from_bytes, raw, len(raw))


JSON_KEYS = st.sampled_from(["pi_a", "pi_b", "pi_c", "protocol", "curve", "IC", "nPublic", "vk_alpha_1",
                             "vk_beta_2", "vk_gamma_2", "vk_delta_2", "vk_beta_1"])
ANY_VALUE = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
                         | st.binary(max_size=8) | st.sampled_from(["groth16", "bls12381", "1", "0"]),
                         lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                         | st.dictionaries(JSON_KEYS, inner, max_size=6), max_leaves=12)


@FUZZ
@given(ANY_VALUE)
def test_api_takes_any_value(seeds, value):
    """Wrong types to the public constructors and checks: InvalidInputError
    (or a subclass), never TypeError or AttributeError."""
    calls = [FrArray.from_ints, FrArray.from_ints_mod, FrArray.from_bytes, G1Array.from_bytes, G2Array.from_bytes,
             G1Point.from_bytes, G2Point.from_bytes, Proof.from_bytes, Proof.split, Proof.from_json,
             VerifyingKey.from_json, G1Array, G2Point, FrArray,
             lambda v: verify(seeds.vk, v, seeds.proof), lambda v: verify(v, seeds.public, seeds.proof),
             lambda v: verify(seeds.vk, seeds.public, v)]
    for call in calls:
        check_reader(call, value, 0)


ARRAY_DTYPES = st.sampled_from([np.int64, np.uint32, np.uint64, np.int32, np.float64, np.uint8])


@st.composite
def circuit_arrays(draw, good: dict) -> dict:
    """A circuit file's arrays with one to three of them replaced or changed:
    another dtype or shape, a value set to an extreme, entries dropped."""
    arrays = dict(good)
    for _ in range(draw(st.integers(1, 3))):
        if not arrays:
            break
        name = draw(st.sampled_from(sorted(arrays)))
        a = arrays[name]
        how = draw(st.sampled_from(["value", "value", "dtype", "shape", "drop", "new", "delete"]))
        if how == "value" and a.size and a.dtype.kind in "iu":
            a = a.copy()
            flat = a.reshape(-1)
            info = np.iinfo(a.dtype)
            flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from([info.min, info.max, 0, 1])
                                                              | st.integers(info.min, info.max))
        elif how == "dtype":
            a = a.astype(draw(ARRAY_DTYPES))
        elif how == "shape" and a.size:
            a = a.reshape(-1) if a.ndim > 1 else a.reshape(1, -1)
        elif how == "drop" and len(a):
            a = a[draw(st.integers(0, len(a) - 1)):]
        elif how == "new":
            n = draw(st.integers(0, 6))
            a = np.array(draw(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=n, max_size=n)),
                         dtype=np.int64)
        elif how == "delete":
            arrays.pop(name)
            continue
        arrays[name] = np.ascontiguousarray(a)
    return arrays


@FUZZ
@given(st.data())
def test_npz_circuit_arrays_any(seeds, data):
    """Valid archives of wrong arrays: CircuitFormatError, or a circuit whose
    evaluation then runs (no native kernel reads outside an array)."""
    arrays = data.draw(circuit_arrays(npz_arrays(seeds.r1cs)))
    path = seeds.scratch / "arrays.npz"
    np.savez(path, **arrays)
    try:
        r1cs = R1CS.load(path)
    except CircuitFormatError:
        return
    if r1cs.num_variables <= 1 << 16:
        w = FrArray.concat([FrArray.from_ints([1]), FrArray.random(r1cs.num_variables - 1, random.Random(1))])
        r1cs.evaluate(w, threads=1)


# ------------------------------------------------------------------ regressions: counts beyond the file


def timed(read, *args):
    """read(*args)'s error (it must raise a PorepProverError), its peak allocation and seconds."""
    tracemalloc.start()
    t = time.perf_counter()
    with pytest.raises(PorepProverError) as info:
        read(*args)
    seconds = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return info.value, peak, seconds


def patch(path, out, offset: int, fmt: str, value: int):
    data = bytearray(pathlib.Path(path).read_bytes())
    struct.pack_into(fmt, data, offset, value)
    pathlib.Path(out).write_bytes(data)
    return out


def section_pos(path, kind: int) -> int:
    return BinFile(path, open(path, "rb").read(4), (1, 2), PorepProverError).offset(kind)


@pytest.mark.parametrize("field,offset", [("domain", 96), ("nVars", 88), ("nPublic", 92)])
def test_zkey_header_counts_beyond_the_file(seeds, tmp_path, field, offset):
    """A 2^31-row domain (or 2^32 - 1 vars) in a small .zkey: refused before
    anything the size of the count is made."""
    value = 1 << 31 if field == "domain" else (1 << 32) - 1
    bad = patch(seeds.path("c.zkey"), tmp_path / "big.zkey", section_pos(seeds.path("c.zkey"), 2) + offset, "<I",
                value)
    exc, peak, seconds = timed(snarkjs.read_zkey, bad)
    assert isinstance(exc, ParamsFormatError) and str(bad) in str(exc)
    assert peak < 4 * MIB and seconds < 2


def test_zkey_domain_backed_by_h(seeds, tmp_path):
    """Doubling the domain (still a power of two, beyond every row used) is
    caught by the H section's size, before the coefficient matrices."""
    pos = section_pos(seeds.path("c.zkey"), 2) + 96
    domain = struct.unpack_from("<I", seeds.data("c.zkey"), pos)[0]
    bad = patch(seeds.path("c.zkey"), tmp_path / "d.zkey", pos, "<I", 2 * domain)
    with pytest.raises(ParamsFormatError, match=r"section 9 \(H\)"):
        snarkjs.read_zkey(bad)


@pytest.mark.parametrize("field,offset,fmt", [("nWires", 36, "<I"), ("nConstraints", 60, "<I"),
                                              ("nPubIn", 44, "<I")])
def test_r1cs_header_counts_beyond_the_file(seeds, tmp_path, field, offset, fmt):
    bad = patch(seeds.path("c.r1cs"), tmp_path / "big.r1cs", section_pos(seeds.path("c.r1cs"), 1) + offset, fmt,
                (1 << 32) - 2)
    exc, peak, seconds = timed(snarkjs.read_r1cs, bad)
    assert isinstance(exc, CircuitFormatError) and str(bad) in str(exc)
    assert peak < 4 * MIB and seconds < 2


def test_r1cs_wires_backed_by_labels_or_terms(seeds, tmp_path):
    """Wires must be backed: by the label map (8 bytes each) or, without it,
    by a constraint term each; a file that backs them reads."""
    r1cs = seeds.r1cs
    write_binfile(tmp_path / "nomap.r1cs", b"r1cs", 1, circom_r1cs_bytes(r1cs, labels=False))
    assert snarkjs.read_r1cs(tmp_path / "nomap.r1cs").r1cs.num_variables == r1cs.num_variables
    many = r1cs.a.nnz + r1cs.b.nnz + r1cs.c.nnz + 2
    write_binfile(tmp_path / "wide.r1cs", b"r1cs", 1, circom_r1cs_bytes(r1cs, labels=False, n_wires=many))
    with pytest.raises(CircuitFormatError, match="label map"):
        snarkjs.read_r1cs(tmp_path / "wide.r1cs")
    sections = circom_r1cs_bytes(r1cs, n_wires=r1cs.num_variables + 5)
    write_binfile(tmp_path / "mapped.r1cs", b"r1cs", 1, sections)
    assert snarkjs.read_r1cs(tmp_path / "mapped.r1cs").r1cs.num_variables == r1cs.num_variables + 5
    sections[2] = (3, sections[2][1][:-8])
    write_binfile(tmp_path / "short-map.r1cs", b"r1cs", 1, sections)
    with pytest.raises(CircuitFormatError, match="wire labels"):
        snarkjs.read_r1cs(tmp_path / "short-map.r1cs")


def test_wtns_count_beyond_the_file(seeds, tmp_path):
    bad = patch(seeds.path("c.wtns"), tmp_path / "big.wtns", section_pos(seeds.path("c.wtns"), 1) + 36, "<I",
                (1 << 32) - 1)
    exc, peak, _ = timed(snarkjs.read_wtns, bad)
    assert isinstance(exc, CircuitFormatError) and peak < 4 * MIB


@pytest.mark.parametrize("magic,error", [(b"zkey", ParamsFormatError), (b"r1cs", CircuitFormatError),
                                         (b"wtns", CircuitFormatError)])
def test_section_count_beyond_the_file_fails_at_once(tmp_path, magic, error):
    path = tmp_path / "many"
    path.write_bytes(magic + struct.pack("<II", 1, (1 << 32) - 1) + bytes(24))
    read = {b"zkey": snarkjs.read_zkey, b"r1cs": snarkjs.read_r1cs, b"wtns": snarkjs.read_wtns}[magic]
    exc, peak, seconds = timed(read, path)
    assert isinstance(exc, error) and "sections need" in str(exc)
    assert seconds < 0.5 and peak < MIB


# ------------------------------------------------------------------ regressions: .npz circuits and witnesses


def npz_arrays(r1cs: R1CS) -> dict:
    """The arrays R1CS.save writes."""
    arrays = {"format": np.array([1, r1cs.num_inputs, r1cs.num_aux], dtype=np.int64)}
    for n, m in (("a", r1cs.a), ("b", r1cs.b), ("c", r1cs.c)):
        arrays[f"{n}_indptr"], arrays[f"{n}_col"], arrays[f"{n}_coeff"] = m.indptr, m.col, m.coeff.limbs
    return arrays


def wrong_arrays(r1cs: R1CS):
    """(what, arrays) pairs: a circuit file's arrays, each damaged one way."""
    good = npz_arrays(r1cs)

    def change(**kw):
        return {**good, **kw}
    ip = good["a_indptr"].copy()
    wrapped = ip.copy()
    wrapped[1], wrapped[2] = (1 << 62) + (1 << 61), -(1 << 62)       # np.diff wraps these to >= 0
    big_coeff = good["b_coeff"].copy()
    big_coeff[0] = [0xFFFFFFFFFFFFFFFF] * 4
    return [
        ("format float", change(format=np.array([1.0, 2.0, 3.0]))),
        ("format shape", change(format=np.array([1, 2], dtype=np.int64))),
        ("format version", change(format=np.array([2, 2, 3], dtype=np.int64))),
        ("aux negative", change(format=np.array([1, 2, -1], dtype=np.int64))),
        ("variables beyond uint32", change(format=np.array([1, 1 << 32, 1], dtype=np.int64))),
        ("indptr dtype", change(a_indptr=ip.astype(np.int32))),
        ("indptr 2-d", change(a_indptr=ip.reshape(1, -1))),
        ("indptr short", change(a_indptr=ip[:-1])),
        ("indptr not monotone", change(a_indptr=ip[::-1].copy())),
        ("indptr wraps", change(a_indptr=wrapped)),
        ("col dtype", change(b_col=good["b_col"].astype(np.int64))),
        ("col 2-d", change(b_col=np.ascontiguousarray(np.stack([good["b_col"]] * 2)))),
        ("col out of range", change(c_col=good["c_col"] + np.uint32(1 << 20))),
        ("coeff shape", change(c_coeff=good["c_coeff"][:, :3].copy())),
        ("coeff dtype", change(c_coeff=good["c_coeff"].astype(np.float64))),
        ("coeff count", change(c_coeff=good["c_coeff"][1:])),
        ("coeff not below r", change(b_coeff=big_coeff)),
        ("coeff_id past the table", change(a_coeff_id=np.full(len(good["a_col"]), 7, np.uint32),
                                           a_coeff=good["a_coeff"][:1].copy())),
        ("missing array", {k: v for k, v in good.items() if k != "c_col"}),
        ("strings", change(format=np.array(["1", "2", "3"]))),
    ]


def test_npz_wrong_arrays_are_circuit_format_errors(seeds, tmp_path):
    for what, arrays in wrong_arrays(seeds.r1cs):
        path = tmp_path / "bad.npz"
        np.savez(path, **arrays)
        with pytest.raises(CircuitFormatError) as info:
            R1CS.load(path)
        assert str(path) in str(info.value), what


def test_npz_never_unpickles_and_never_says_pickle(seeds, tmp_path):
    objects = tmp_path / "objects.npz"
    np.savez(objects, **{**npz_arrays(seeds.r1cs), "a_col": np.array([object()] * 3)})
    for path in (objects, seeds.path("c.params"), seeds.path("c.zkey"), seeds.path("proof.json")):
        with pytest.raises(CircuitFormatError) as info:
            R1CS.load(path)
        assert "allow_pickle" not in str(info.value) and str(path) in str(info.value)


def test_npz_compressed_or_lying_headers_refused(seeds, tmp_path):
    np.savez_compressed(tmp_path / "z.npz", **npz_arrays(seeds.r1cs))
    with pytest.raises(CircuitFormatError, match="compressed"):
        R1CS.load(tmp_path / "z.npz")
    data = seeds.data("c.npz")
    at = data.find(b"'shape': (") + len(b"'shape': (")
    end = data.find(b",", at)
    lying = data[:at] + b"9" * (end - at) + data[end:]
    (tmp_path / "lie.npz").write_bytes(lying)
    exc, peak, _ = timed(R1CS.load, tmp_path / "lie.npz")
    assert isinstance(exc, CircuitFormatError) and peak < 16 * len(data) + MIB


def test_npz_roundtrip_still_reads(seeds, tmp_path):
    back = R1CS.load(seeds.path("c.npz"))
    assert back.num_variables == seeds.r1cs.num_variables
    back.check(seeds.witness)
    tabled = R1CS(seeds.r1cs.num_inputs, seeds.r1cs.num_aux, *(m.tabled() for m in
                                                                 (seeds.r1cs.a, seeds.r1cs.b, seeds.r1cs.c)))
    tabled.save(tmp_path / "t.npz")
    R1CS.load(tmp_path / "t.npz").check(seeds.witness)


def test_raw_witness_errors_name_the_file(seeds, tmp_path):
    for data in (seeds.data("c.witness")[:-1], b"\xff" * 32):
        (tmp_path / "w").write_bytes(data)
        with pytest.raises(CircuitFormatError, match=str(tmp_path / "w")):
            load_witness(tmp_path / "w")


# ------------------------------------------------------------------ regressions: JSON, TOML and the CLI


def json_cases(seeds) -> list[tuple[str, bytes]]:
    proof = seeds.data("proof.json")
    return [("truncated", proof[:len(proof) // 2]), ("not UTF-8", proof[:20] + b"\xff\xfe" + proof[20:]),
            ("deep", b"[" * 100000 + b"]" * 100000), ("huge number", b'{"pi_a": ' + b"9" * 10000 + b"}"),
            ("huge string", b'{"pi_a": ["' + b"9" * 10000 + b'", "1", "1"]}'), ("wrong types", b'{"pi_a": 5}'),
            ("a list", b"[1, 2]"), ("empty", b""), ("empty list", b"[]")]


def test_json_readers_fail_with_the_file_named(seeds, tmp_path):
    readers = [(snarkjs.read_proof, ProofFormatError), (read_proofs, ProofFormatError),
               (snarkjs.read_verification_key, VerifyingKeyFormatError),
               (read_verifying_key, VerifyingKeyFormatError), (snarkjs.read_public, PublicInputsError)]
    for what, data in json_cases(seeds):
        path = tmp_path / "x.json"
        path.write_bytes(data)
        for read, error in readers:
            if read is snarkjs.read_public and what in ("a list", "empty list"):
                continue            # a list is what public.json holds
            with pytest.raises(error) as info:
                read(path)
            assert str(path) in str(info.value), (what, read.__name__)
    path.write_bytes(b'["1", "0x10"]')
    assert snarkjs.read_public(path) == [1, 16]
    with pytest.raises(PublicInputsError, match="input 0"):
        path.write_bytes(b'["1 "]')
        snarkjs.read_public(path)


def test_json_errors_say_line_and_column(seeds, tmp_path):
    (tmp_path / "p.json").write_bytes(b'{\n "pi_a": [\xff]}')
    with pytest.raises(ProofFormatError, match="line 2, column 11"):
        snarkjs.read_proof(tmp_path / "p.json")
    (tmp_path / "p.json").write_bytes(b'{\n "pi_a": [}')
    with pytest.raises(ProofFormatError, match="line 2"):
        snarkjs.read_proof(tmp_path / "p.json")


def test_cli_verify_names_the_bad_file(seeds, tmp_path, capsys):
    key, public, proof = seeds.path("vk.json"), seeds.path("public.json"), seeds.path("proof.json")
    assert cli(["verify", str(key), str(public), str(proof)]) == 0
    assert cli(["verify", str(seeds.path("c.params")), str(public), str(seeds.path("proof.bin"))]) == 0
    assert cli(["verify", str(seeds.path("c.pmap")), str(public), str(proof)]) == 0
    capsys.readouterr()
    for what, data in json_cases(seeds):
        bad = tmp_path / "bad.json"
        bad.write_bytes(data)
        for args in ([bad, public, proof], [key, public, bad]):
            assert cli(["verify", *map(str, args)]) == 2, what
            err = capsys.readouterr().err
            assert str(bad) in err and "Traceback" not in err, (what, err)


def test_toml_errors_say_file_line_and_problem(tmp_path):
    cases = {"dup": (b"[engine]\nthreads = 1\n\n[engine]\nthreads = 2\n", r"line 4.*twice|twice.*line 4"),
             "utf8": (b"[engine]\n# caf\xe9\nthreads = 1\n", "not UTF-8.*line 2, column 6"),
             "key": (b"[engine]\nthreads = 1\nthreads = 2\n", "line 3"),
             "deep": (b"[engine]\nthreads = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested"),
             "section": (b"[nope]\nx = 1\n", "unknown section")}
    for name, (data, pattern) in cases.items():
        path = tmp_path / f"{name}.toml"
        path.write_bytes(data)
        with pytest.raises(ConfigError, match=pattern) as info:
            load_config(path)
        assert str(path) in str(info.value)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
    (tmp_path / "bom.toml").write_bytes(b"\xef\xbb\xbf[engine]\nthreads = 3\n")
    assert load_config(tmp_path / "bom.toml").get("engine.threads") == 3


# ------------------------------------------------------------------ regressions: argument types, encodings


def test_wrong_argument_types_are_invalid_input(seeds):
    strided = np.zeros(2 * 96, dtype=np.uint8)[::2]
    cases = [lambda: G1Array.from_bytes("ab"), lambda: G1Array.from_bytes(None),
             lambda: G2Array.from_bytes([1, 2, 3]), lambda: G1Array.from_bytes(strided, compressed=False),
             lambda: FrArray.from_bytes(np.zeros(64, np.uint8)[::2]), lambda: FrArray.from_ints(None),
             lambda: FrArray.from_ints("12"), lambda: FrArray.from_ints_mod(None), lambda: FrArray.zeros(-1),
             lambda: verify(seeds.vk, None, seeds.proof), lambda: verify(None, seeds.public, seeds.proof),
             lambda: verify(seeds.vk, seeds.public, None), lambda: verify(seeds.vk, "12", seeds.proof),
             lambda: Proof.from_bytes("ab" * 96), lambda: Proof.split(None), lambda: G1Point(None),
             lambda: G1Point(np.zeros((2, 12), np.uint64)), lambda: G2Point(np.zeros((1, 12), np.uint64)),
             lambda: G1Point.from_bytes("x" * 48), lambda: G1Array.zeros("3")]
    for case in cases:
        with pytest.raises(InvalidInputError):
            case()
    assert verify(seeds.vk, seeds.public, seeds.proof)
    assert Proof.from_bytes(memoryview(seeds.proof.to_bytes())) == seeds.proof
    assert Proof.from_bytes(np.frombuffer(seeds.proof.to_bytes(), np.uint8)) == seeds.proof


@pytest.mark.parametrize("cls", [G1Array, G2Array])
def test_all_zero_encodings_are_not_infinity(seeds, cls, rng):
    size = 2 * cls.COMPRESSED
    with pytest.raises(EncodingError, match="infinity flag"):
        cls.POINT.from_bytes(bytes(size), compressed=False)
    assert cls.POINT.from_bytes(b"\x40" + bytes(size - 1), compressed=False).is_zero()
    with pytest.raises(EncodingError):
        cls.POINT.from_bytes(bytes(cls.COMPRESSED))                   # no compression flag
    assert cls.POINT.from_bytes(b"\xc0" + bytes(cls.COMPRESSED - 1)).is_zero()
    # in a batch, at a random position among valid points and flagged infinities
    n = rng.randrange(3, 40)
    data = bytearray(cls.generator(n).to_bytes(compressed=False))
    for i in rng.sample(range(n), 2):
        data[i * size:(i + 1) * size] = b"\x40" + bytes(size - 1)
    bad = rng.randrange(n)
    data[bad * size:(bad + 1) * size] = bytes(size)
    with pytest.raises(EncodingError) as info:
        cls.from_bytes(bytes(data), compressed=False)
    assert info.value.index == bad
    vk = bytearray(seeds.vk.to_bytes())
    vk[:96] = bytes(96)
    with pytest.raises(VerifyingKeyFormatError):
        VerifyingKey.from_bytes(bytes(vk))
