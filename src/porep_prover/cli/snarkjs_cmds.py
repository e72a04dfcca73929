# SPDX-License-Identifier: Apache-2.0
"""porep-prover commands in snarkjs's own argument order:

    porep-prover groth16 prove circuit.zkey witness.wtns proof.json public.json
    porep-prover groth16 verify verification_key.json public.json proof.json
    porep-prover zkey export verificationkey circuit.zkey verification_key.json
    porep-prover zkey insecure-setup circuit.r1cs circuit.zkey     (tests and benchmarks only)

`groth16 verify` prints "OK!" and exits 0 on a valid proof, prints
"Invalid proof" and exits 1 otherwise, as snarkjs does.

Each command imports porep_prover.snarkjs (numpy, the native kernels) when it
runs: building the parser imports none of it.
"""
from __future__ import annotations

import sys
import time
import warnings

from ..errors import KeyIntegrityError
from .file_kinds import naming


def cmd_groth16_prove(args) -> int:
    from .. import snarkjs
    zkey = snarkjs.read_zkey(args.zkey, check_subgroup=args.check_subgroup)
    witness = snarkjs.read_wtns(args.witness)
    r1cs = snarkjs.read_r1cs(args.r1cs).r1cs if args.r1cs else None
    timings: dict = {}
    t = time.perf_counter()
    try:                       # the proof verified unless --no-verify: one that fails is never written
        proof, public = snarkjs.prove(zkey, witness, backend=args.backend, threads=args.threads, r1cs=r1cs,
                                      check=not args.no_check, timings=timings, verify=not args.no_verify)
    except KeyIntegrityError as exc:
        exc.key_file = args.zkey      # the key is at fault (or, without --r1cs, may be): its file named
        raise
    secs = time.perf_counter() - t
    snarkjs.write_proof(args.proof, proof)
    snarkjs.write_public(args.public, public)
    if args.verbose:
        print(f"{args.proof}: proof in {secs * 1000:.1f} ms " +
              " ".join(f"{k}={v * 1000:.1f}ms" for k, v in timings.items()), file=sys.stderr)
    return 0


def cmd_groth16_verify(args) -> int:
    from .. import snarkjs
    with naming(args.vk):
        vk = snarkjs.read_verification_key(args.vk)
    with naming(args.public):
        public = snarkjs.read_public(args.public)
    with naming(args.proof):
        proof = snarkjs.read_proof(args.proof)
    if len(public) + 1 != len(vk.ic):
        print(f"Invalid proof: {len(public)} public inputs, the key expects {len(vk.ic) - 1}", file=sys.stderr)
        return 1
    if snarkjs.verify(vk, public, proof):
        print("OK!")
        return 0
    print("Invalid proof", file=sys.stderr)
    return 1


def cmd_zkey_export_vk(args) -> int:
    from .. import snarkjs
    with naming(args.zkey):
        vk = snarkjs.read_zkey(args.zkey).vk
    snarkjs.write_verification_key(args.output, vk)
    return 0


def cmd_zkey_insecure_setup(args) -> int:
    from .. import snarkjs
    from ..groth16.insecure_setup import InsecureSetupWarning
    print("WARNING: insecure test setup; the toxic waste is known to this process. "
          "Never use this key to secure anything.", file=sys.stderr)
    with naming(args.r1cs):
        circuit = snarkjs.read_r1cs(args.r1cs, threads=args.threads)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureSetupWarning)
        key = snarkjs.insecure_zkey(circuit, backend=args.backend, threads=args.threads)
    snarkjs.write_zkey(args.zkey, key)
    if args.vk:
        snarkjs.write_verification_key(args.vk, key.vk)
    return 0


def register(sub, common) -> None:
    """Add the groth16 and zkey command groups to the subparsers `sub`."""
    g = sub.add_parser("groth16", help="snarkjs-compatible Groth16 (.zkey, .wtns, JSON)")
    gs = g.add_subparsers(dest="action", required=True)
    p = gs.add_parser("prove", help="prove from a .zkey and a .wtns, writing proof.json and public.json")
    p.add_argument("zkey")
    p.add_argument("witness")
    p.add_argument("proof")
    p.add_argument("public")
    p.add_argument("--r1cs", help="check the witness and the key against this .r1cs first (names a failing "
                                  "constraint); a proof that fails then says if the witness or the key is at fault")
    p.add_argument("--no-check", action="store_true", help="skip checking the witness against --r1cs")
    p.add_argument("--no-verify", action="store_true", help="write the proof without verifying it first (by "
                   "default a proof that does not verify is not written)")
    p.add_argument("--check-subgroup", action="store_true", help="subgroup-check every key point")
    p.add_argument("-v", "--verbose", action="store_true", help="print the timings")
    common(p)
    p.set_defaults(func=cmd_groth16_prove)
    p = gs.add_parser("verify", help="verify proof.json (exit 0 and OK! when valid)")
    p.add_argument("vk")
    p.add_argument("public")
    p.add_argument("proof")
    common(p, backend=False)
    p.set_defaults(func=cmd_groth16_verify)

    z = sub.add_parser("zkey", help="snarkjs proving keys").add_subparsers(dest="action", required=True)
    e = z.add_parser("export", help="export from a .zkey").add_subparsers(dest="what", required=True)
    p = e.add_parser("verificationkey", help="write verification_key.json as snarkjs does")
    p.add_argument("zkey")
    p.add_argument("output")
    common(p, backend=False)
    p.set_defaults(func=cmd_zkey_export_vk)
    p = z.add_parser("insecure-setup", help="INSECURE .zkey for a circom .r1cs (tests, benchmarks)")
    p.add_argument("r1cs")
    p.add_argument("zkey")
    p.add_argument("--vk", help="also write verification_key.json")
    common(p)
    p.set_defaults(func=cmd_zkey_insecure_setup)
