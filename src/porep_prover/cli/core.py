# SPDX-License-Identifier: Apache-2.0
"""porep-prover commands around our own formats (bellperson parameters, .npz
circuits): demo, circuit generate, setup, prove, verify, params info / map /
digest / check. Circuits
and witnesses may also be circom's .r1cs and snarkjs's .wtns.

Building the parser imports nothing of the prover: each command imports
what it uses (numpy, groth16, snarkjs, rich) when it runs."""
from __future__ import annotations

import json
import os
import sys
import time
import warnings

from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..atomic import atomic_write
from ..errors import KeyIntegrityError, ParamsFormatError
from . import arguments
from .file_kinds import CIRCUIT, PARAMS, WITNESS, check_order, expect, naming

if TYPE_CHECKING:
    from ..groth16 import Parameters, Proof, R1CS, VerifyingKey


def _write_json(path: str, obj) -> None:
    """obj as indented JSON, written whole or not at all."""
    with atomic_write(path) as f:
        f.write((json.dumps(obj, indent=1) + "\n").encode())


def _magic(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(4)


def load_circuit(path: str) -> R1CS:
    """Our .npz circuit, or circom's .r1cs (recognised by its magic); another
    kind of file is a FileKindError saying what it is, and errors name the file."""
    from ..groth16 import R1CS
    from ..snarkjs import read_r1cs
    kind = expect(path, "circuit", CIRCUIT)
    with naming(path):
        return read_r1cs(path).r1cs if kind == "r1cs" else R1CS.load(path)


def load_any_witness(path: str):
    """Our raw witness, or snarkjs's .wtns (recognised by its magic); another
    kind of file is a FileKindError saying what it is, and errors name the file."""
    from ..groth16 import load_witness
    from ..snarkjs import read_wtns
    kind = expect(path, "witness", WITNESS)
    with naming(path):
        return read_wtns(path) if kind == "wtns" else load_witness(path)


def load_params(path: str, **options) -> Parameters:
    """groth16.load_params, its errors naming the file."""
    from ..groth16 import load_params as load
    with naming(path):
        return load(path, **options)


def snarkjs_read_zkey(path: str, **options):
    """snarkjs.read_zkey, its errors naming the file."""
    from ..snarkjs import read_zkey
    with naming(path):
        return read_zkey(path, **options)


def check_prove_files(args) -> None:
    """prove's three files are of the kinds their places take (FileKindError
    naming each misplaced one and the order otherwise)."""
    check_order("prove", ("params", args.params, PARAMS), ("circuit", args.circuit, CIRCUIT),
                ("witness", args.witness, WITNESS))


def _read_key(path: str) -> VerifyingKey:
    """A verifying key from a params or .pmap file, vk.json or a binary vk."""
    from ..groth16.verifier_files import read_verifying_key
    return read_verifying_key(path)


def _read_proof(path: str) -> list[Proof]:
    """The proofs in a binary proof file or proof.json (one or a list)."""
    from ..groth16.verifier_files import read_proofs
    return read_proofs(path)


# ------------------------------------------------------------------ commands


def cmd_demo(args) -> int:
    from ..backend import get_backend
    from ..circuits import CIRCUITS
    from ..config import resolve_threads
    from ..groth16 import InsecureSetupWarning, PreparedVerifyingKey, insecure_setup, prove, verify
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
    from ..circuits import CIRCUITS
    from ..groth16 import save_witness
    r1cs, witness, public = CIRCUITS[args.kind](args.constraints, seed=args.seed)
    r1cs.save(args.output)
    save_witness(args.witness, witness)
    _write_json(args.public, [str(v) for v in public])
    print(f"{args.output}: {r1cs.num_constraints} constraints, {r1cs.num_inputs} inputs, {r1cs.num_aux} aux; "
          f"witness {args.witness}; public inputs {args.public}")
    return 0


def cmd_setup(args) -> int:
    from ..groth16 import InsecureSetupWarning, insecure_setup, write_params
    from . import progress
    print("WARNING: insecure test setup; the toxic waste is known to this process. "
          "Never use these parameters to secure anything.", file=sys.stderr)
    r1cs = load_circuit(args.circuit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureSetupWarning)
        with progress.display(args) as shown:
            params = insecure_setup(r1cs, backend=args.backend, threads=args.threads,
                                    progress=shown.callback(prefix="setup "))
    write_params(args.output, params, threads=args.threads)
    if args.vk:
        _write_json(args.vk, params.vk.to_json())
    print(f"{args.output}: {params.summary()}")
    return 0


def cmd_prove(args) -> int:
    """`porep-prover prove`: a proof from a key, a circuit and a witness, in this process."""
    from ..groth16 import prove
    from ..snarkjs import prove as snarkjs_prove
    from . import progress
    check_prove_files(args)
    r1cs = load_circuit(args.circuit)
    witness = load_any_witness(args.witness)
    timings: dict = {}
    try:                       # the proof verified unless --no-verify: one that fails is never written
        if _magic(args.params) == b"zkey":
            # a snarkjs key: its own flavour (5-based roots, odd-coset H)
            zkey = snarkjs_read_zkey(args.params, check_subgroup=args.check_subgroup)
            t = time.perf_counter()
            proof, _ = snarkjs_prove(zkey, witness, backend=args.backend, threads=args.threads, r1cs=r1cs,
                                     check=not args.no_check, timings=timings, verify=not args.no_verify)
        else:
            with progress.display(args) as shown:
                params = load_params(args.params, check_subgroup=args.check_subgroup, threads=args.threads,
                                     progress=shown.callback(prefix="load "))
            t = time.perf_counter()
            proof = prove(params, r1cs, witness, backend=args.backend, threads=args.threads,
                          check=not args.no_check, timings=timings, verify=not args.no_verify)
    except KeyIntegrityError as exc:
        exc.key_file = args.params    # the key is at fault: its file named
        raise
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
    from ..groth16 import PreparedVerifyingKey, verify
    from ..snarkjs import read_public
    with naming(args.key):
        vk = _read_key(args.key)
    with naming(args.public):
        public = read_public(args.public)
    with naming(args.proof):
        proofs = _read_proof(args.proof)
    pvk = PreparedVerifyingKey(vk)
    if all(verify(pvk, public, p) for p in proofs):
        print("OK!")
        return 0
    print("INVALID proof", file=sys.stderr)
    return 1


def cmd_params_map(args) -> int:
    from ..groth16 import write_mapped
    from . import progress
    t = time.perf_counter()
    with progress.display(args) as shown:
        params = load_params(args.params, check_subgroup=args.check_subgroup, threads=args.threads,
                             progress=shown.callback(prefix="load "))
        write_mapped(args.output, params, threads=args.threads, progress=shown.callback(prefix="map "))
    print(f"{args.output}: {os.path.getsize(args.output)} bytes in {time.perf_counter() - t:.1f} s")
    return 0


def cmd_params_info(args) -> int:
    from ..host_memory import is_mapped
    from . import progress
    t = time.perf_counter()
    with progress.display(args) as shown:
        params = load_params(args.params, check_subgroup=args.check_subgroup, threads=args.threads,
                             progress=shown.callback(prefix="load "))
    info: dict[str, Any] = params.summary()
    info["read_seconds"] = round(time.perf_counter() - t, 3)
    info["subgroup_checked"] = args.check_subgroup
    info["mapped"] = is_mapped(params.h.limbs)
    print(json.dumps(info, indent=1))
    return 0


def cmd_params_digest(args) -> int:
    from ..groth16.params_digest import file_digest, write_sidecar
    from . import progress
    with progress.display(args) as shown:
        digest = file_digest(args.file, progress=shown.callback(progress.BYTES))
    print(digest)
    if args.write:
        print(f"wrote {write_sidecar(args.file, digest)}", file=sys.stderr)
    return 0


def cmd_params_check(args) -> int:
    """Exit 0 when the file matches, 1 (one line naming the file) when it does
    not; errors that leave nothing to check against are exit 2 as usual."""
    from ..groth16 import read_mapped
    from ..groth16.params_digest import check_digest, digest_beside, digest_from_parameters_json
    from ..groth16.params_mapped import is_mapped_file
    from . import progress
    expected = args.digest
    if args.parameters_json:
        expected = digest_from_parameters_json(args.parameters_json, os.path.basename(args.file))
    checked = []
    try:
        if is_mapped_file(args.file):
            read_mapped(args.file, threads=args.threads)
            checked.append("the checksum of every section")
        if not checked or expected is not None or digest_beside(args.file) is not None:
            with progress.display(args) as shown:
                checked.append(f"digest {check_digest(args.file, expected, shown.callback(progress.BYTES))}")
    except ParamsFormatError as exc:
        print(f"porep-prover: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"{args.file}: OK, " + " and ".join(checked))
    return 0


# ------------------------------------------------------------------ parser


def register(sub, common) -> None:
    """Add this module's commands to the subparsers `sub`."""
    p = sub.add_parser("demo", help="generate a circuit, set up, prove, verify and print timings")
    p.add_argument("--circuit", choices=arguments.CIRCUITS, default="porep-like")
    p.add_argument("--constraints", type=arguments.CONSTRAINTS, default=(1 << 16) - 5,
                   help=f"constraints, 1 to {arguments.MAX_CONSTRAINTS} (porep-like: at least 8)")
    p.add_argument("--proofs", type=arguments.PROOFS, default=3,
                   help=f"proofs to make, 1 to {arguments.MAX_PROOFS} (default 3)")
    p.add_argument("--seed", type=arguments.SEED, default=1, help="the circuit's seed, 0 to 2^64 - 1")
    common(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("circuit", help="demo circuits").add_subparsers(dest="action", required=True)
    g = p.add_parser("generate", help="write a demo circuit, witness and public inputs")
    g.add_argument("--kind", choices=arguments.CIRCUITS, default="porep-like")
    g.add_argument("--constraints", type=arguments.CONSTRAINTS, required=True,
                   help=f"constraints, 1 to {arguments.MAX_CONSTRAINTS} (porep-like: at least 8)")
    g.add_argument("--seed", type=arguments.SEED, default=1, help="the circuit's seed, 0 to 2^64 - 1")
    g.add_argument("-o", "--output", required=True, help="circuit file (.npz)")
    g.add_argument("--witness", required=True, help="witness file (32-byte LE values)")
    g.add_argument("--public", required=True, help="public inputs (JSON)")
    common(g, backend=False)
    g.set_defaults(func=cmd_circuit_generate)

    p = sub.add_parser("setup", help="INSECURE test parameters for a circuit (.npz or circom .r1cs)")
    p.add_argument("circuit")
    p.add_argument("-o", "--output", required=True, help="parameters file (bellperson format)")
    p.add_argument("--vk", help="also write the verifying key as JSON")
    arguments.progress_option(p)
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
    p.add_argument("--no-verify", action="store_true", help="write the proof without verifying it first (by "
                   "default a proof that does not verify is not written; the error names the witness, the "
                   "device or the key at fault)")
    p.add_argument("--check-subgroup", action="store_true", help="subgroup-check every parameter point")
    arguments.progress_option(p)
    common(p)
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("verify", help="verify a proof (exit 0 and OK! when valid)")
    p.add_argument("key", help="parameters file, verifying key JSON or binary")
    p.add_argument("public", help="public inputs JSON (list of decimal strings)")
    p.add_argument("proof", help="proof file (192 bytes per partition) or JSON")
    common(p, backend=False)
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
        arguments.progress_option(a)
        common(a, backend=False)
        a.set_defaults(func=func)
    a = p.add_parser("digest", help="Filecoin's digest of a file: the first 32 hex characters of its BLAKE2b-512")
    a.add_argument("file", help="a parameters file (.params, .pmap, .vk: any file)")
    a.add_argument("--write", action="store_true", help="also write it beside the file, as FILE.digest")
    arguments.progress_option(a)
    a.set_defaults(func=cmd_params_digest)
    a = p.add_parser("check", help="check a parameters file against its digest (exit 0 when it matches, 1 when "
                                   "not); a .pmap also against its own checksums")
    a.add_argument("file", help="a parameters file (.params, .pmap, .vk: any file)")
    source = a.add_mutually_exclusive_group()
    source.add_argument("--digest", metavar="HEX", help="the digest it must have (default: the one in FILE.digest, "
                                                        "else in a parameters.json beside it)")
    source.add_argument("--parameters-json", metavar="PATH", help="a Filecoin parameters.json that lists the file")
    arguments.progress_option(a)
    common(a, backend=False)
    a.set_defaults(func=cmd_params_check)
