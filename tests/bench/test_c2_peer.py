# SPDX-License-Identifier: Apache-2.0
"""benchmarks/bench_c2_peer.py and its binding to supraseal-c2
(benchmarks/supraseal_c2.py) without a device: a partition in the peer's
layout against a plain reference on small random circuits (A w, B w, C w
with bellman's input rows, the witness split, density bitmaps whose walk in
the peer's order picks our parameters' points), the library's struct
layout where it is built, the binding's calls through a stand-in library,
the fork's timing lines, and the script's arguments and refusals."""
import ctypes
import importlib.util
import json
import os
import pathlib
import random
import subprocess
import sys
import types

import numpy as np
import pytest

from porep_prover.backend import CpuBackend, Flavor, get_backend
from porep_prover.circuits import porep_like
from porep_prover.errors import InvalidInputError, ParamsMismatchError
from porep_prover.field.constants import R
from porep_prover.field.fr_array import FrArray
from porep_prover.groth16 import R1CS, insecure_setup, read_params, write_params
from porep_prover.groth16.proof import Proof
from porep_prover.groth16.prover import MsmSums, Stopwatch, assemble

ROOT = pathlib.Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # the script imports the binding by this name, and dataclasses look it up
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(BENCHMARKS))     # bench_c2_peer imports bench_partition and supraseal_c2 as scripts do
c2 = load("supraseal_c2")
bench = load("bench_c2_peer")


def random_circuit(rng, m, k, aux):
    """m random constraints over k inputs (the one included) and aux variables,
    some variables never read by A (aux only: every input has its input
    constraint's point) or by B, and a witness of 0s, 1s and full values
    (the circuit need not hold: only its layout is checked)."""
    nv = k + aux
    skip_a = set(rng.sample(range(k, nv), aux // 3))
    skip_b = set(rng.sample(range(nv), nv // 3))
    pick_a, pick_b = [v for v in range(nv) if v not in skip_a], [v for v in range(nv) if v not in skip_b]
    cons = []
    for _ in range(m):
        a = {rng.choice(pick_a): rng.randrange(1, R) for _ in range(3)}
        b = {rng.choice(pick_b): rng.choice([1, R - 1, rng.randrange(1, R)]) for _ in range(2)}
        c = {rng.randrange(nv): rng.randrange(1, R)}
        cons.append((a, b, c))
    # every kept variable read at least once, so the density is exactly the kept sets
    for i, v in enumerate(pick_a):
        cons[i % m][0][v] = 1 + i
    for i, v in enumerate(pick_b):
        cons[i % m][1][v] = 1 + i
    w = [1] + [rng.choice([0, 1, rng.randrange(R)]) for _ in range(nv - 1)]
    return R1CS.from_constraints(k, aux, cons), FrArray.from_ints(w), cons, skip_a, skip_b


@pytest.fixture(scope="module", params=[(37, 3, 150), (29, 70, 64)], ids=["aux-3-words", "inputs-2-words"])
def partition(request):
    m, k, aux = request.param
    rng = random.Random(random.SystemRandom().randrange(1 << 30))
    r1cs, w, cons, skip_a, skip_b = random_circuit(rng, m, k, aux)
    params = insecure_setup(r1cs, rng=rng, warn=False)
    return r1cs, w, cons, skip_a, skip_b, params


def bits(bitmap):
    """A Bitmap's bits, read one by one as the peer reads them (word i // 64, bit i % 64)."""
    return [int(bitmap.words[i // 64]) >> (i % 64) & 1 for i in range(bitmap.bits)]


def test_the_inputs_are_a_b_c_and_the_witness_as_bellman_hands_them_over(partition):
    r1cs, w, cons, _, _, params = partition
    m, k, n = r1cs.num_constraints, r1cs.num_inputs, r1cs.domain_size
    got = c2.c2_inputs(params, r1cs, w, 1)
    wi = w.to_ints()
    want = [[sum(coeff * wi[v] for v, coeff in row[t].items()) % R for row in cons] + [0] * (n - m)
            for t in range(3)]
    want[0][m:m + k] = wi[:k]                      # bellman's input constraints input_i * 1 = 0
    assert [got.a.to_ints(), got.b.to_ints(), got.c.to_ints()] == want
    assert got.abc_size == m + k < n
    assert got.inputs.to_ints() == wi[:k] and got.aux.to_ints() == wi[k:]


def test_the_density_bitmaps_pick_our_parameters_points(partition):
    r1cs, w, _, skip_a, skip_b, params = partition
    k, nv = r1cs.num_inputs, r1cs.num_variables
    got = c2.c2_inputs(params, r1cs, w, 1)
    for bitmap, variables, skipped in ((got.a_aux, range(k, nv), skip_a), (got.b_input, range(k), skip_b),
                                       (got.b_aux, range(k, nv), skip_b)):
        want = [int(v not in skipped) for v in variables]
        assert bitmap.bits == len(want) and bits(bitmap) == want and bitmap.popcount == sum(want)
        assert len(bitmap.words) == -(-len(want) // 64) and bitmap.words.dtype == np.uint64
        tail = len(want) % 64
        assert not tail or int(bitmap.words[-1]) >> tail == 0          # no bit past the end
    # the peer's walk: every input, then the aux its A bitmap keeps; the inputs then the aux its B bitmaps keep
    a_walk = list(range(k)) + [k + j for j, bit in enumerate(bits(got.a_aux)) if bit]
    b_walk = [i for i, bit in enumerate(bits(got.b_input)) if bit] + [k + j for j, bit in enumerate(bits(got.b_aux))
                                                                       if bit]
    assert a_walk == r1cs.query_index("a").tolist() and len(a_walk) == len(params.a)
    assert b_walk == r1cs.query_index("b").tolist() and len(b_walk) == len(params.b_g1) == len(params.b_g2)
    counts = {q: len(getattr(params, q)) for q in ("h", "l", "a", "b_g1", "b_g2")}
    got.check_srs(counts)
    with pytest.raises(c2.PeerError, match="b_g1 has .*, the circuit needs"):
        got.check_srs(dict(counts, b_g1=counts["b_g1"] + 1))


def test_the_assignment_struct_points_at_the_arrays(partition):
    r1cs, w, _, _, _, params = partition
    got = c2.c2_inputs(params, r1cs, w, 1)
    s = got.assignment()
    assert ctypes.sizeof(s) == 17 * 8
    assert (s.a, s.b, s.c, s.abc_size) == (got.a.limbs.ctypes.data, got.b.limbs.ctypes.data,
                                            got.c.limbs.ctypes.data, got.abc_size)
    assert (s.inp_assignment_data, s.inp_assignment_size) == (w.limbs.ctypes.data, r1cs.num_inputs)
    assert (s.aux_assignment_data, s.aux_assignment_size) == (w.limbs.ctypes.data + 32 * r1cs.num_inputs,
                                                              r1cs.num_aux)
    for name in ("a_aux", "b_inp", "b_aux"):
        bitmap = getattr(got, "b_input" if name == "b_inp" else name)
        assert (getattr(s, f"{name}_density"), getattr(s, f"{name}_bit_len"), getattr(s, f"{name}_popcount")) == \
            (bitmap.words.ctypes.data, bitmap.bits, bitmap.popcount)


def test_parameters_of_another_circuit_are_refused(partition):
    r1cs, w, _, _, _, params = partition
    other, ow, *_ = random_circuit(random.Random(1), 20, 2, 30)
    with pytest.raises(ParamsMismatchError):
        c2.c2_inputs(params, other, ow, 1)


def test_bitmaps_at_word_edges():
    for n in (0, 1, 63, 64, 65, 128, 130):
        mask = np.random.default_rng(n).integers(0, 2, n).astype(bool)
        got = c2.Bitmap.of(mask)
        assert len(got.words) == max(1, -(-n // 64)) and bits(got) == mask.astype(int).tolist()
        assert got.popcount == int(mask.sum())


class StandIn:
    """The library's c2_prove as a Python function: it records the call and writes `proof`'s limbs, or fails."""

    def __init__(self, limbs, code=0):
        self.limbs, self.code, self.calls = limbs, code, []

    def c2_prove(self, assignment, count, r, s, out, srs, message, cap):
        self.calls.append((assignment._obj.abc_size, count, ctypes.string_at(r, 32), ctypes.string_at(s, 32), srs))
        os.write(2, b"CUZK_TIMING: gpu_tid=0 batch_add_ms=12\nother line\n")
        if self.code:
            message.value = b"cudaErrorMemoryAllocation: out of memory"
            return self.code
        ctypes.memmove(out, self.limbs.ctypes.data, self.limbs.nbytes)
        return 0


def test_prove_hands_over_montgomery_r_s_and_reads_the_proof_back(partition, capfd):
    r1cs, w, _, _, _, params = partition
    inputs = c2.c2_inputs(params, r1cs, w, 1)
    point_limbs = np.concatenate([params.vk.alpha_g1.limbs[0], params.vk.beta_g2.limbs[0],
                                  params.vk.delta_g1.limbs[0]])
    peer = object.__new__(c2.SupraSealC2)
    peer.lib = StandIn(point_limbs)
    proof, lines = peer.prove(1234, inputs, (5, R - 1))
    assert proof == Proof(params.vk.alpha_g1, params.vk.beta_g2, params.vk.delta_g1)
    assert peer.lib.calls == [(inputs.abc_size, 1, FrArray.from_ints([5]).limbs.tobytes(),
                               FrArray.from_ints([R - 1]).limbs.tobytes(), 1234)]
    assert lines == ["CUZK_TIMING: gpu_tid=0 batch_add_ms=12", "other line"]
    assert "batch_add_ms=12" in capfd.readouterr().err          # copied to the real stderr for the log
    peer.lib = StandIn(point_limbs, code=2)
    with pytest.raises(c2.PeerError, match="error 2: cudaErrorMemoryAllocation"):
        peer.prove(1234, inputs, (5, 6))


def test_the_fork_s_timing_lines_are_read():
    lines = ["CUZK_TIMING: split_vectors_ms=3 setup_to_split_ms=4",
             "CUZK_NTT_H: d_b_alloc=0ms ntt_kernels=41ms coset_intt_sync=9ms msm_init=0ms msm_invoke=180ms "
             "msm_dtor=1ms total=232ms",
             "CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=233",
             "CUZK_TIMING: b_g2_msm_ms=510 num_circuits=1",
             "CUZK_TIMING: mutex_held_ms=700 total_start_fn_ms=820",
             "CUZK_TIMING: set pool release threshold to MAX on gpu 0",
             "unrelated=5"]
    assert c2.parse_timing(lines) == {"split_vectors_ms": 3, "setup_to_split_ms": 4, "ntt_h_d_b_alloc": 0,
                                      "ntt_h_ntt_kernels": 41, "ntt_h_coset_intt_sync": 9, "ntt_h_msm_init": 0,
                                      "ntt_h_msm_invoke": 180, "ntt_h_msm_dtor": 1, "ntt_h_total": 232,
                                      "ntt_msm_h_ms": 233, "b_g2_msm_ms": 510, "mutex_held_ms": 700,
                                      "total_start_fn_ms": 820}


@pytest.mark.parametrize("variant", ["cuzk-fork", "upstream"])
def test_the_built_library_lays_its_structs_out_as_ctypes_does(variant):
    path = c2.LIBRARIES[variant]
    if not path.is_file():
        pytest.skip(f"{path.name} is not built (VARIANT={variant} sh benchmarks/peers/build.sh c2 builds it, "
                    f"35-72 s: too slow to compile in a test)")
    peer = c2.SupraSealC2(path)                    # PeerError on any difference
    assert peer.layout()[:len(c2.LAYOUT)] == [size for _, size in c2.LAYOUT]
    assert peer.variant == variant


def test_arguments_and_their_refusals(capsys):
    args = bench.parse_args([])
    assert (args.scale, args.device_memory_gib, args.reps, args.matvec, args.variant) == \
        (1.0, [0.0, 16.0], 3, "device", "cuzk-fork")
    args = bench.parse_args(["--scale", "0.0625", "--device-memory-gib", "16,0,24", "--reps", "2",
                             "--params-dir", "/tmp/p", "--variant", "upstream"])
    assert (args.scale, args.device_memory_gib, args.reps, str(args.params_dir)) == (0.0625, [16.0, 0.0, 24.0], 2,
                                                                                     "/tmp/p")
    for bad in (["--reps", "0"], ["--scale", "2"], ["--scale", "x"], ["--device-memory-gib", "16,x"],
                ["--device-memory-gib", "-1"], ["--variant", "other"], ["--seed", "-1"], ["--nope"]):
        with pytest.raises(SystemExit) as exit_:
            bench.parse_args(bad)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and err.startswith("bench_c2_peer: ") and err.count("\n") == 1, (bad, err)
    r, s = bench.blinding_of(1)
    assert 0 < r < R and 0 < s < R and (r, s) == bench.blinding_of(1) != bench.blinding_of(2)


def test_a_missing_library_is_refused_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, str(BENCHMARKS / "bench_c2_peer.py"), "--lib", str(tmp_path / "no.so"),
                           "--json", str(tmp_path / "c2.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    missing = tmp_path / "no.so"
    assert done.stderr == f"bench_c2_peer: no {missing}; build it first with sh benchmarks/peers/build.sh c2\n"
    assert not (tmp_path / "c2.json").exists()          # refused before anything was measured


# ------------------------------------------------------------ the whole run, on stand-ins for the card and the peer


class StandInCard(CpuBackend):
    """The CPU backend answering the GPU backend's other calls the benchmark makes (plans, memory figures)."""
    info = types.SimpleNamespace(name="stand-in card", arch="sm_90", memory_bytes=80 << 30)

    def __init__(self):
        super().__init__()
        self.budgets, self.released, self.unplanned = [], 0, 0
        ctx = types.SimpleNamespace(reset_peak=lambda: None, trim_pool=lambda: None)
        self.device = types.SimpleNamespace(ctx=ctx, synchronize=lambda: None)
        self.memory = types.SimpleNamespace(pooled=True)

    def device_budget(self, nbytes=0):
        self.budgets.append(nbytes)
        return nbytes or self.info.memory_bytes

    def device_plan(self, workload, budget, workers=2, g2=True, gathers=False):
        return types.SimpleNamespace(matrices=False, describe=lambda: ["every array resident"])

    def release_plan(self):
        self.unplanned += 1

    def memory_status(self):
        return {"peak": 3 << 30, "pinned": 1 << 30, "free": 70 << 30}

    def release_resident(self):
        self.released += 1


class StandInProvider:
    """The porep-shaped provider's calls over a small satisfied circuit: its parameters written once as the
    provider writes them (a bellperson .params file at the payload's path), read back after."""

    def __init__(self, r1cs, witness):
        self.r1cs, self.witness = r1cs, witness

    def circuit(self, job):
        return self.r1cs

    def load_srs(self, job):
        path = pathlib.Path(job.payload["params"])
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_params(path, insecure_setup(self.r1cs, rng=random.Random(3), warn=False))
        return read_params(path)

    def synthesize(self, job, partition, threads):
        return self.r1cs, self.witness


def rows_at(address, count):
    """count Fr rows (Montgomery limbs) at a raw address, copied."""
    return FrArray(np.ctypeslib.as_array((ctypes.c_uint64 * (4 * count)).from_address(address))
                   .reshape(count, 4).copy())


def bits_at(address, count):
    words = np.ctypeslib.as_array((ctypes.c_uint64 * max(1, -(-count // 64))).from_address(address))
    return np.array([int(words[i // 64]) >> (i % 64) & 1 for i in range(count)], dtype=bool)


class StandInLibrary:
    """The shim's entry points in Python: the SRS read from the .params file, and a proof made from nothing
    but what the Assignment's pointers hold, walked as the peer walks them (every input then the aux A's
    bitmap keeps; B's inputs, then its aux), H from a, b, c past abc_size zero; swap: r and s swapped."""

    def __init__(self, swap=False):
        self.swap, self.srs = swap, {}

    def c2_srs_load(self, path, handle, message, cap):
        handle._obj.value = len(self.srs) + 1
        self.srs[handle._obj.value] = read_params(path.decode())
        return 0

    def c2_srs_counts(self, srs, out):
        for i, q in enumerate(("h", "l", "a", "b_g1", "b_g2")):
            out[i] = len(getattr(self.srs[srs], q))

    def c2_srs_free(self, srs):
        del self.srs[srs]

    def c2_prove(self, assignment, count, r, s, out, srs, message, cap):
        p, params, cpu = assignment._obj, self.srs[srs], get_backend("cpu")
        inputs, aux = rows_at(p.inp_assignment_data, p.inp_assignment_size), rows_at(p.aux_assignment_data,
                                                                                      p.aux_assignment_size)
        n = len(params.h) + 1
        a, b, c = (FrArray.concat([rows_at(x, p.abc_size), FrArray.zeros(n - p.abc_size)]) for x in (p.a, p.b, p.c))
        a_rows = FrArray.concat([inputs, aux[np.flatnonzero(bits_at(p.a_aux_density, p.a_aux_bit_len))]])
        b_rows = FrArray.concat([inputs[np.flatnonzero(bits_at(p.b_inp_density, p.b_inp_bit_len))],
                                 aux[np.flatnonzero(bits_at(p.b_aux_density, p.b_aux_bit_len))]])
        h = cpu.h_scalars(a, b, c, 1, Flavor.BELLMAN)
        sums = MsmSums(cpu.msm(params.a, a_rows, 1)[0], cpu.msm(params.l, aux, 1)[0] + cpu.msm(params.h, h, 1)[0],
                       cpu.msm(params.b_g1, b_rows, 1)[0], cpu.msm(params.b_g2, b_rows, 1)[0])
        blinding = tuple(rows_at(x, 1).to_ints()[0] for x in ((s, r) if self.swap else (r, s)))
        proof = assemble(params.vk, sums, None, Stopwatch(None), blinding=blinding)
        limbs = np.concatenate([proof.a.limbs[0], proof.b.limbs[0], proof.c.limbs[0]])
        ctypes.memmove(out, limbs.ctypes.data, limbs.nbytes)
        os.write(2, b"CUZK_TIMING: mutex_held_ms=7 total_start_fn_ms=9\n")
        return 0


@pytest.fixture
def stand_ins(monkeypatch):
    """bench_c2_peer's card, provider and peer replaced; the peer's library returned (swap it to break it)."""
    r1cs, witness, _ = porep_like(70, num_public=3, seed=11)
    card, lib = StandInCard(), StandInLibrary()
    cpu = get_backend("cpu")
    monkeypatch.setattr(bench, "get_backend", lambda name: card if name == "gpu" else cpu)
    monkeypatch.setattr(bench, "PorepShapedProvider", lambda: StandInProvider(r1cs, witness))

    def peer(path):
        got = object.__new__(c2.SupraSealC2)
        got.lib, got.path, got.variant = lib, path, "cuzk-fork"
        return got
    monkeypatch.setattr(bench, "SupraSealC2", peer)
    return card, lib


def test_a_run_proves_with_both_and_compares_the_proofs(stand_ins, tmp_path, capsys):
    card, lib = stand_ins
    report = tmp_path / "c2.json"
    argv = ["--scale", "0.001", "--params-dir", str(tmp_path / "params"), "--reps", "2", "--json", str(report)]
    assert bench.main(argv) == 0
    got = json.loads(report.read_text())
    assert got["params_made"] and got["proofs"] == "identical" and all(got["verified"].values())
    assert [(r["prover"], r["budget"]) for r in got["c2"]] == [("ours", "the card's"), ("ours", "16 GiB"),
                                                               ("supraseal-c2 (cuzk-fork)", "none: it runs as it is")]
    ours, peer = got["c2"][0], got["c2"][2]
    assert ours["whole_ms"] >= ours["region_ms"] > 0 and ours["matvec"] == "host"
    assert peer["cuzk_mutex_held_ms"] == peer["region_ms"] == 7 and peer["call_ms"] > 0 and peer["srs_load_s"] >= 0
    for row in got["c2"]:
        assert {"host_used_gib", "rss_gib", "rss_peak_gib"} <= set(row)
    assert card.budgets[:2] == [0, 16 << 30] and card.released and card.unplanned and not lib.srs   # the card let
    # go, the SRS freed
    out = capsys.readouterr().out
    assert "made and written" in out and "proofs: identical across 9" in out
    assert bench.main(argv) == 0                                    # the .params file read, not made again
    assert not json.loads(report.read_text())["params_made"]


def test_a_peer_proof_that_differs_fails_the_run(stand_ins, tmp_path, capsys):
    _, lib = stand_ins
    lib.swap = True
    report = tmp_path / "c2.json"
    assert bench.main(["--scale", "0.001", "--params-dir", str(tmp_path), "--reps", "1", "--device-memory-gib", "0",
                       "--json", str(report)]) == 1
    got = json.loads(report.read_text())
    assert got["proofs"] == "DIFFER" and len(got["verified"]) == 2 and all(got["verified"].values())
    assert "proofs: DIFFER" in capsys.readouterr().out


def test_the_scale_shrinks_to_the_disk_only_when_asked(stand_ins, tmp_path, monkeypatch, capsys):
    assert bench.free_bytes(tmp_path / "not" / "made") > 0            # the nearest folder that exists
    monkeypatch.setattr(bench, "free_bytes", lambda folder: 13_000_000_000)      # scale 1/4's file fits, not 1/2's
    assert bench.fitting_scale(tmp_path, 1.0, 0, shrink=True) == 0.25
    with pytest.raises(InvalidInputError, match=r"scale 1 need ~49.8 GB in .*13.0 GB free: .*\(or --shrink-to-disk\)"):
        bench.fitting_scale(tmp_path, 1.0, 0, shrink=False)
    bench.params_path(tmp_path, 1.0, 0).write_bytes(b"")                       # a file there is taken as it is
    assert bench.fitting_scale(tmp_path, 1.0, 0, shrink=False) == 1.0
    monkeypatch.setattr(bench, "free_bytes", lambda folder: 0)
    assert bench.main(["--scale", "0.5", "--shrink-to-disk", "--params-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err                                      # down to the least circuit, then refused
    assert err.startswith("bench_c2_peer: the parameters at scale 0.000244141 need") and err.count("\n") == 1
