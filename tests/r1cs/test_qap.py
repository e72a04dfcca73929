# SPDX-License-Identifier: Apache-2.0
"""The QAP at tau for parameter generation (native/qap.c): the column
evaluations and the queries' scalars, against Python ints, on several
thread counts (the work is split by rows, columns and chunks: any count
gives the same values)."""
import random

import numpy as np
import pytest

from porep_prover import FrArray
from porep_prover.circuits import porep_like
from porep_prover.field.constants import R
from porep_prover.groth16 import insecure_setup
from porep_prover.groth16.insecure_setup import query_scalars
from porep_prover.r1cs import _r1cs


def random_csr(rng, rows, ncols, tabled):
    counts = [rng.choice([0, 1, 1, 2, 3, 7]) for _ in range(rows)]
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    nnz = int(indptr[-1])
    hot = rng.randrange(ncols)          # one column in many rows: a bucket much fuller than the rest
    col = np.array([hot if rng.random() < 0.2 else rng.randrange(ncols) for _ in range(nnz)], dtype=np.uint32)
    if tabled:
        table = [1, R - 1, 2, rng.randrange(R)]
        ids = np.array([rng.randrange(len(table)) for _ in range(nnz)], dtype=np.uint32)
        return indptr, col, FrArray.from_ints(table), ids, [table[i] for i in ids]
    coeff = [rng.randrange(R) for _ in range(nnz)]
    return indptr, col, FrArray.from_ints(coeff), None, coeff


@pytest.mark.parametrize("tabled", [False, True], ids=["direct", "tabled"])
def test_column_evaluations_match_python(rng, tabled):
    for rows, ncols in ((1, 1), (rng.randrange(2, 300), rng.randrange(1, 200)), (3001, 5003)):
        indptr, col, coeff, ids, per_entry = random_csr(rng, rows, ncols, tabled)
        lagrange = [rng.randrange(R) for _ in range(rows)]
        want = [0] * ncols
        for i in range(rows):
            for e in range(indptr[i], indptr[i + 1]):
                want[col[e]] = (want[col[e]] + per_entry[e] * lagrange[i]) % R
        for threads in (1, 2, 3):
            out = FrArray.from_ints([rng.randrange(R) for _ in range(ncols)])     # overwritten, not added to
            assert _r1cs.eval_columns(indptr, col, coeff.limbs, FrArray.from_ints(lagrange).limbs, out.limbs,
                                      threads, ids) == 0
            assert out.to_ints() == want, (rows, ncols, threads)


def test_query_scalars_match_python(rng):
    ncols, k = rng.randrange(40, 3000), rng.randrange(1, 30)
    at, bt, ct = ([rng.randrange(R) for _ in range(ncols)] for _ in range(3))
    a_keep = np.array([1] * k + [rng.random() < 0.9 for _ in range(ncols - k)], dtype=np.uint8)
    b_keep = np.array([rng.random() < 0.3 for _ in range(ncols)], dtype=np.uint8)
    alpha, beta, gamma_inv, delta_inv = (rng.randrange(1, R) for _ in range(4))
    lin = [(beta * a + alpha * b + c) % R for a, b, c in zip(at, bt, ct)]
    for threads in (1, 2, 5):
        ic, l_, a, b = (FrArray.zeros(size) for size in (k, ncols - k, int(a_keep.sum()), int(b_keep.sum())))
        _r1cs.query_scalars(*(FrArray.from_ints(v).limbs for v in (at, bt, ct)), a_keep, b_keep,
                            FrArray.from_ints([alpha, beta, gamma_inv, delta_inv]).limbs, ic.limbs, l_.limbs,
                            a.limbs, b.limbs, threads)
        assert ic.to_ints() == [v * gamma_inv % R for v in lin[:k]]
        assert l_.to_ints() == [v * delta_inv % R for v in lin[k:]]
        assert a.to_ints() == [v for v, keep in zip(at, a_keep) if keep]
        assert b.to_ints() == [v for v, keep in zip(bt, b_keep) if keep]


def test_query_scalars_refuse_lengths_that_disagree():
    z = FrArray.zeros
    cols = [z(10).limbs] * 3
    keep = np.ones(10, np.uint8)
    waste = z(4).limbs
    for args, words in (((cols[0], cols[1], z(9).limbs, keep, keep, waste, z(2).limbs, z(8).limbs, z(10).limbs,
                          z(10).limbs), "columns"),
                        ((*cols, keep, keep, z(3).limbs, z(2).limbs, z(8).limbs, z(10).limbs, z(10).limbs),
                         "4 constants"),
                        ((*cols, keep, keep, waste, z(2).limbs, z(7).limbs, z(10).limbs, z(10).limbs), "ic \\+ l"),
                        ((*cols, keep, keep, waste, z(2).limbs, z(8).limbs, z(9).limbs, z(10).limbs), "keep")):
        with pytest.raises(ValueError, match=words):
            _r1cs.query_scalars(*args, 1)


def test_setup_times_its_steps_and_its_scalars_are_the_queries(rng):
    r1cs, _, _ = porep_like(rng.randrange(100, 400))
    seed = rng.randrange(1 << 30)
    laps = {}
    params = insecure_setup(r1cs, rng=random.Random(seed), warn=False, laps=laps)
    assert list(laps) == ["lagrange", "columns", "scalars", "h powers", "ic", "h", "l", "a", "b_g1", "b_g2"]
    assert all(v >= 0 for v in laps.values())
    d = r1cs.density()
    assert len(params.a) == r1cs.num_inputs + int(d.a_aux.sum())
    assert len(params.b_g1) == len(params.b_g2) == int(d.b_input.sum() + d.b_aux.sum())
    columns = [FrArray.from_ints([rng.randrange(R) for _ in range(r1cs.num_variables)]) for _ in range(3)]
    got = query_scalars(r1cs, columns, (3, 5, 7, 11), 2)
    assert got.a.to_ints() == [v for v, keep in zip(columns[0].to_ints(), [True] * r1cs.num_inputs + list(d.a_aux))
                               if keep]
