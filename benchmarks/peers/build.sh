#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the peers the benchmarks run beside porep_prover, each linked with blst into a shared library in a
# build folder of its own (never the package). Targets (the first argument, default sppark):
#
#   sppark  sppark's BLS12-381 MSM (G1, G2) and NTT with bench_peers.py's entry points (sppark_peers.cu):
#           benchmarks/peers/build/libsppark_peers.so
#   c2      supraseal-c2, the whole-partition C2 prover, compiled from $PEERS/supraseal-c2/$VARIANT with
#           bench_c2_peer.py's entry points (supraseal_c2_shim.cu): VARIANT cuzk-fork (the default, the fork
#           the reference engine builds) gives benchmarks/peers/build/libsupraseal_c2.so, VARIANT upstream
#           benchmarks/peers/build/libsupraseal_c2_upstream.so. One translation unit: 35-72 s.
#
# Environment: PEERS, the folder holding sppark/, blst/ and supraseal-c2/ (default: shared/peers beside the
# repository); ARCH, the GPU arch (default sm_90); NVCC (default nvcc); OUT, the build folder (default
# benchmarks/peers/build); VARIANT (c2 only). Needs no GPU.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PEERS=${PEERS:-$ROOT/../shared/peers}
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
OUT=${OUT:-$HERE/build}
TARGET=${1:-sppark}
VARIANT=${VARIANT:-cuzk-fork}
case "$TARGET" in
    sppark) ;;
    c2)
        case "$VARIANT" in
            cuzk-fork) LIBRARY=libsupraseal_c2.so; VARIANT_FLAGS=-DC2_CUZK ;;
            upstream) LIBRARY=libsupraseal_c2_upstream.so; VARIANT_FLAGS= ;;
            *) echo "build.sh: VARIANT is cuzk-fork or upstream, not $VARIANT" >&2; exit 1 ;;
        esac
        if [ ! -f "$PEERS/supraseal-c2/$VARIANT/groth16_cuda.cu" ]; then
            echo "build.sh: no supraseal-c2/$VARIANT/groth16_cuda.cu under $PEERS (set PEERS)" >&2
            exit 1
        fi ;;
    *) echo "build.sh: the target is sppark or c2, not $TARGET" >&2; exit 1 ;;
esac
if [ ! -d "$PEERS/sppark" ] || [ ! -d "$PEERS/blst" ]; then
    echo "build.sh: no sppark/ and blst/ under $PEERS (set PEERS)" >&2
    exit 1
fi
PEERS=$(cd "$PEERS" && pwd)
mkdir -p "$OUT"
cd "$OUT"
# blst's own build writes libblst.a into the current folder (sppark's host arithmetic links against it)
[ -f libblst.a ] || sh "$PEERS/blst/build.sh" -fPIC
set -x
# the defines sppark's own builds pass (poc/msm-cuda/build.rs, rust/src/build.rs's common_flags; supraseal-c2's
# build.rs the same): the curve, __ADX__ as blst was built, error messages in RustError. For sppark, none
# touches G2's arithmetic or its layout; what its G2 needs is in sppark_peers.cu (affine_fp2_h)
if [ "$TARGET" = sppark ]; then
    "$NVCC" -std=c++17 -O2 -arch="$ARCH" -DFEATURE_BLS12_381 -D__ADX__ -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE \
        -I"$PEERS/sppark" -I"$PEERS/blst/src" -Xcompiler -fPIC -Xcompiler -Wno-unused-function -shared \
        -o libsppark_peers.so "$HERE/sppark_peers.cu" "$PEERS/sppark/util/all_gpus.cpp" libblst.a
else
    # as supraseal-c2's build.rs compiles groth16_cuda.cu, -O3 and the warnings it silences included
    "$NVCC" -std=c++17 -O3 -arch="$ARCH" -DFEATURE_BLS12_381 -D__ADX__ -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE \
        $VARIANT_FLAGS -I"$PEERS/supraseal-c2/$VARIANT" -I"$PEERS/sppark" -I"$PEERS/blst/src" \
        -Xcompiler -fPIC -Xcompiler -Wno-subobject-linkage,-Wno-unused-function -shared \
        -o "$LIBRARY" "$HERE/supraseal_c2_shim.cu" "$PEERS/sppark/util/all_gpus.cpp" libblst.a
fi
