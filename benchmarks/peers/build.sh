#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the peers that benchmarks/bench_peers.py runs beside porep_prover:
# sppark's BLS12-381 MSM (G1, G2) and NTT with the benchmark's entry points
# (sppark_peers.cu), linked with blst, into one shared library in a build
# folder of its own (never the package):
#
#   benchmarks/peers/build/libsppark_peers.so
#
# Environment: PEERS, the folder holding sppark/ and blst/ (default: shared/peers
# beside the repository); ARCH, the GPU arch (default sm_90); NVCC (default nvcc);
# OUT, the build folder (default benchmarks/peers/build). Needs no GPU.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PEERS=${PEERS:-$ROOT/../shared/peers}
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
OUT=${OUT:-$HERE/build}
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
# the defines sppark's own build of its MSM passes (poc/msm-cuda/build.rs, rust/src/build.rs's common_flags):
# the curve, __ADX__ as blst was built, error messages in RustError. None touches G2's arithmetic or its
# layout; what its G2 needs is in sppark_peers.cu (affine_fp2_h)
"$NVCC" -std=c++17 -O2 -arch="$ARCH" -DFEATURE_BLS12_381 -D__ADX__ -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE \
    -I"$PEERS/sppark" -I"$PEERS/blst/src" -Xcompiler -fPIC -Xcompiler -Wno-unused-function -shared -o libsppark_peers.so \
    "$HERE/sppark_peers.cu" "$PEERS/sppark/util/all_gpus.cpp" libblst.a
