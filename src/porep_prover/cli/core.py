# SPDX-License-Identifier: Apache-2.0
"""porep-prover commands around our own formats (bellperson parameters, .npz
circuits): demo, circuit generate, setup, prove, verify, params info. Circuits
and witnesses may also be circom's .r1cs and snarkjs's .wtns."""
from __future__ import annotations

import json
import os
import sys
import time
import warnings

from .. import __version__, circuits
from ..backend import get_backend
from ..errors import PorepProverError
from ..config import resolve_threads
from ..snarkjs import prove as snarkjs_prove
from ..snarkjs import read_public, read_r1cs, read_wtns
from ..snarkjs import read_zkey as snarkjs_read_zkey
from ..groth16 import (InsecureSetupWarning, Parameters, PreparedVerifyingKey, Proof, R1CS, VerifyingKey,
                      insecure_setup, load_params, load_witness, prove, read_mapped, save_witness, verify,
                      write_mapped, write_params)
from ..groth16.params_mapped import is_mapped, is_mapped_file

CIRCUITS = circuits.CIRCUITS


def _progress(enabled: bool):
    if not enabled:
        return None

    def report(section: str, done: int, total: int) -> None:
        print(f"\r  {section}: {done}/{total} points", end="\n" if done == total else "", file=sys.stderr, flush=True)
    return report


def _write_json(path: str, obj) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def _magic(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(4)


def load_circuit(path: str) -> R1CS:
    """Our .npz circuit, or circom's .r1cs (recognised by its magic)."""
    return read_r1cs(path).r1cs if _magic(path) == b"r1cs" else R1CS.load(path)


def load_any_witness(path: str):
    """Our raw witness, or snarkjs's .wtns (recognised by its magic)."""
    return read_wtns(path) if _magic(path) == b"wtns" else load_witness(path)


def _read_key(path: str) -> VerifyingKey:
    """A verifying key from a params file, vk.json or a binary vk."""
    with open(path, "rb") as f:
        head = f.read(1)
    # A JSON key starts with "{"; binary keys start with a big-endian coordinate
    # (top byte below 0x1b) or the infinity flag, never "{".
    if head == b"{":
        with open(path) as f:
            return VerifyingKey.from_json(f.read())
    if is_mapped_file(path):
        return read_mapped(path).vk
    data = open(path, "rb").read()
    try:
        return VerifyingKey.from_bytes(data)
    except PorepProverError:
        return VerifyingKey.read_prefix(memoryview(data))[0]


def _read_proof(path: str) -> list[Proof]:
    data = open(path, "rb").read()
    if data[:1] in (b"{", b"["):
        obj = json.loads(data)
        return [Proof.from_json(p) for p in obj] if isinstance(obj, list) else [Proof.from_json(obj)]
    return Proof.split(data)


# ------------------------------------------------------------------ commands


def cmd_demo(args) -> int:
    threads = resolve_threads(args.threads)
    backend = args.backend
    be = get_backend(backend)
    print(f"porep-prover {__version__} demo: {args.circuit}, {args.constraints} constraints, "
          f"backend {be.name}, {threads} threads")
    rows = []
    t = time.perf_counter()
    r1cs, witness, public = CIRCUITS[args.circuit](args.constraints, seed=args.seed)
    rows.append(("synthesize circuit + witness", time.perf_counter() - t))
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureSetupWarning)
        params = insecure_setup(r1cs, backend="cpu", threads=threads)   # test parameters: on the CPU
    rows.append(("setup (INSECURE, test only)", time.perf_counter() - t))
    timings: dict = {}
    proofs = []
    for _ in range(args.proofs):
        t = time.perf_counter()
        proofs.append(prove(params, r1cs, witness, backend=backend, threads=threads, timings=timings))
        rows.append(("prove", time.perf_counter() - t))
    t = time.perf_counter()
    pvk = PreparedVerifyingKey(params.vk)
    ok = all(verify(pvk, public, p) for p in proofs)
    rows.append(("verify (arkworks pairings)", time.perf_counter() - t))
    print(f"  constraints {r1cs.num_constraints}, inputs {r1cs.num_inputs}, aux {r1cs.num_aux}, "
          f"domain {r1cs.domain_size}")
    for name, secs in rows:
        print(f"  {name:<32} {secs * 1000:10.1f} ms")
    for name, secs in timings.items():
        print(f"    prove/{name:<25} {secs / args.proofs * 1000:10.1f} ms (mean)")
    print("  proof " + proofs[0].to_bytes().hex()[:64] + "...")
    print("OK: every proof verifies" if ok else "FAILED: a proof did not verify")
    return 0 if ok else 1


def cmd_circuit_generate(args) -> int:
    r1cs, witness, public = CIRCUITS[args.kind](args.constraints, seed=args.seed)
    r1cs.save(args.output)
    save_witness(args.witness, witness)
    _write_json(args.public, [str(v) for v in public])
    print(f"{args.output}: {r1cs.num_constraints} constraints, {r1cs.num_inputs} inputs, {r1cs.num_aux} aux; "
          f"witness {args.witness}; public inputs {args.public}")
    return 0


def cmd_setup(args) -> int:
    print("WARNING: insecure test setup; the toxic waste is known to this process. "
          "Never use these parameters to secure anything.", file=sys.stderr)
    r1cs = load_circuit(args.circuit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureSetupWarning)
        params = insecure_setup(r1cs, backend=args.backend, threads=args.threads)
    write_params(args.output, params, threads=args.threads)
    if args.vk:
        _write_json(args.vk, params.vk.to_json())
    print(f"{args.output}: {params.summary()}")
    return 0


def cmd_prove(args) -> int:
    r1cs = load_circuit(args.circuit)
    witness = load_any_witness(args.witness)
    timings: dict = {}
    if _magic(args.params) == b"zkey":
        # a snarkjs key: its own flavour (5-based roots, odd-coset H)
        zkey = snarkjs_read_zkey(args.params, check_subgroup=args.check_subgroup)
        t = time.perf_counter()
        proof, _ = snarkjs_prove(zkey, witness, backend=args.backend, threads=args.threads, r1cs=r1cs,
                                 check=not args.no_check, timings=timings)
    else:
        params = load_params(args.params, check_subgroup=args.check_subgroup, threads=args.threads,
                             progress=_progress(args.progress))
        t = time.perf_counter()
        proof = prove(params, r1cs, witness, backend=args.backend, threads=args.threads, check=not args.no_check,
                      timings=timings)
    secs = time.perf_counter() - t
    with open(args.output, "wb") as f:
        f.write(proof.to_bytes())
    if args.json:
        _write_json(args.json, proof.to_json())
    if args.public:
        _write_json(args.public, [str(v) for v in witness[1:r1cs.num_inputs].to_ints()])
    print(f"{args.output}: proof in {secs * 1000:.1f} ms " +
          " ".join(f"{k}={v * 1000:.1f}ms" for k, v in timings.items()))
    return 0


def cmd_verify(args) -> int:
    vk = _read_key(args.key)
    public = read_public(args.public)
    proofs = _read_proof(args.proof)
    pvk = PreparedVerifyingKey(vk)
    if all(verify(pvk, public, p) for p in proofs):
        print("OK!")
        return 0
    print("INVALID proof", file=sys.stderr)
    return 1


def cmd_params_map(args) -> int:
    t = time.perf_counter()
    params = load_params(args.params, check_subgroup=args.check_subgroup, threads=args.threads,
                         progress=_progress(args.progress))
    write_mapped(args.output, params)
    print(f"{args.output}: {os.path.getsize(args.output)} bytes in {time.perf_counter() - t:.1f} s")
    return 0


def cmd_params_info(args) -> int:
    t = time.perf_counter()
    params: Parameters = load_params(args.params, check_subgroup=args.check_subgroup, threads=args.threads,
                                     progress=_progress(args.progress))
    info = params.summary()
    info["read_seconds"] = round(time.perf_counter() - t, 3)
    info["subgroup_checked"] = args.check_subgroup
    info["mapped"] = is_mapped(params.h.limbs)
    print(json.dumps(info, indent=1))
    return 0


# ------------------------------------------------------------------ parser


def register(sub, common) -> None:
    """Add this module's commands to the subparsers `sub`."""
    p = sub.add_parser("demo", help="generate a circuit, set up, prove, verify and print timings")
    p.add_argument("--circuit", choices=sorted(CIRCUITS), default="porep-like")
    p.add_argument("--constraints", type=int, default=(1 << 16) - 5)
    p.add_argument("--proofs", type=int, default=3, help="proofs to make (default 3)")
    p.add_argument("--seed", type=int, default=1)
    common(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("circuit", help="demo circuits").add_subparsers(dest="action", required=True)
    g = p.add_parser("generate", help="write a demo circuit, witness and public inputs")
    g.add_argument("--kind", choices=sorted(CIRCUITS), default="porep-like")
    g.add_argument("--constraints", type=int, required=True)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("-o", "--output", required=True, help="circuit file (.npz)")
    g.add_argument("--witness", required=True, help="witness file (32-byte LE values)")
    g.add_argument("--public", required=True, help="public inputs (JSON)")
    g.set_defaults(func=cmd_circuit_generate)

    p = sub.add_parser("setup", help="INSECURE test parameters for a circuit (.npz or circom .r1cs)")
    p.add_argument("circuit")
    p.add_argument("-o", "--output", required=True, help="parameters file (bellperson format)")
    p.add_argument("--vk", help="also write the verifying key as JSON")
    common(p)
    p.set_defaults(func=cmd_setup)

    p = sub.add_parser("prove", help="prove a witness for a circuit (bellperson parameters or a snarkjs .zkey)")
    p.add_argument("params", help="bellperson .params, mapped .pmap, or a snarkjs .zkey (then proved in "
                                  "snarkjs's flavour)")
    p.add_argument("circuit", help="circuit: .npz or circom .r1cs")
    p.add_argument("witness", help="witness: raw 32-byte values or snarkjs .wtns")
    p.add_argument("-o", "--output", required=True, help="proof file (192 bytes)")
    p.add_argument("--json", help="also write the proof as JSON")
    p.add_argument("--public", help="also write the public inputs as JSON")
    p.add_argument("--no-check", action="store_true", help="skip the witness satisfaction check")
    p.add_argument("--check-subgroup", action="store_true", help="subgroup-check every parameter point")
    p.add_argument("--progress", action="store_true", help="report parameter loading progress")
    common(p)
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("verify", help="verify a proof (exit 0 and OK! when valid)")
    p.add_argument("key", help="parameters file, verifying key JSON or binary")
    p.add_argument("public", help="public inputs JSON (list of decimal strings)")
    p.add_argument("proof", help="proof file (192 bytes per partition) or JSON")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("params", help="parameter files").add_subparsers(dest="action", required=True)
    for action, func, text in (("info", cmd_params_info, "sizes of a parameters file (reads and validates it)"),
                               ("map", cmd_params_map, "write parameters as a mapped .pmap file (loaded by "
                                                       "mapping, no decoding)")):
        a = p.add_parser(action, help=text)
        a.add_argument("params", help="bellperson .params or mapped .pmap")
        if action == "map":
            a.add_argument("output", help="the .pmap to write")
        a.add_argument("--check-subgroup", action="store_true")
        a.add_argument("--progress", action="store_true")
        common(a, backend=False)
        a.set_defaults(func=func)
