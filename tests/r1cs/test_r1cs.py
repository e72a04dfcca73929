# SPDX-License-Identifier: Apache-2.0
"""Constraint systems: construction, validation, evaluation, satisfaction, files."""
import numpy as np
import pytest

from porep_prover import FrArray
from porep_prover.circuits import porep_like, square_chain
from porep_prover.errors import CircuitFormatError, R1CSError, UnsatisfiedError, WitnessError
from porep_prover.field.constants import R
from porep_prover.groth16 import R1CS, SparseMatrix


def random_r1cs(rng, m, k, aux, density=3):
    """Random constraints and a witness satisfying them (C_i is a fresh aux var = A.w * B.w)."""
    nv = k + aux + m
    w = [1] + [rng.randrange(R) for _ in range(k - 1 + aux)]
    cons = []
    for i in range(m):
        a = {rng.randrange(k + aux): rng.randrange(R) for _ in range(density)}
        b = {rng.randrange(k + aux): rng.choice([1, R - 1, rng.randrange(R)]) for _ in range(density)}
        av = sum(c * w[v] for v, c in a.items()) % R
        bv = sum(c * w[v] for v, c in b.items()) % R
        cons.append((a, b, {k + aux + i: 1}))
        w.append(av * bv % R)
    return R1CS.from_constraints(k, nv - k, cons), FrArray.from_ints(w)


def test_evaluate_matches_python(rng):
    r1cs, w = random_r1cs(rng, 50, 3, 20)
    a, b, c = r1cs.evaluate(w)
    wi = w.to_ints()
    for mat, got in ((r1cs.a, a), (r1cs.b, b), (r1cs.c, c)):
        coeff = mat.coeff.to_ints()
        want = [sum(coeff[j] * wi[mat.col[j]] for j in range(mat.indptr[i], mat.indptr[i + 1])) % R
                for i in range(mat.rows)]
        assert got.to_ints() == want
    r1cs.check(w)
    assert r1cs.is_satisfied(w)


def test_unsatisfied_names_first_failure(rng):
    r1cs, w = random_r1cs(rng, 40, 2, 10)
    ints = w.to_ints()
    # break the outputs of constraints 17 and 30
    for i in (30, 17):
        ints[2 + 10 + i] = (ints[2 + 10 + i] + 1) % R
    with pytest.raises(UnsatisfiedError, match="constraint 17") as info:
        r1cs.check(FrArray.from_ints(ints))
    assert info.value.constraint == 17


def test_witness_errors(rng):
    r1cs, w = random_r1cs(rng, 5, 2, 3)
    with pytest.raises(WitnessError):
        r1cs.evaluate(w[:-1])
    bad = w.to_ints()
    bad[0] = 2
    with pytest.raises(WitnessError, match="constant one"):
        r1cs.evaluate(FrArray.from_ints(bad))
    with pytest.raises(WitnessError):
        r1cs.evaluate(bad)


def test_validation_errors():
    ok = SparseMatrix.from_rows([{0: 1}])
    with pytest.raises(R1CSError, match="variable 5"):
        R1CS(1, 2, SparseMatrix.from_rows([{5: 1}]), ok, ok)
    with pytest.raises(R1CSError):
        R1CS(0, 2, ok, ok, ok)
    broken = SparseMatrix(np.array([0, 2], dtype=np.int64), np.array([0], dtype=np.uint32), FrArray.from_ints([1]))
    with pytest.raises(R1CSError, match="indptr"):
        R1CS(1, 0, broken, ok, ok)
    with pytest.raises(R1CSError, match="indptr"):
        R1CS(1, 0, ok, SparseMatrix.from_rows([{0: 1}, {0: 1}]), ok)


def test_canonical_form_merges_and_drops():
    m = SparseMatrix.from_arrays(np.array([1, 0, 1, 1, 0]), np.array([2, 3, 2, 0, 1]),
                                 FrArray.from_ints([5, 7, R - 5, 9, 0]), 2)
    assert m.indptr.tolist() == [0, 1, 2] and m.col.tolist() == [3, 0]
    assert m.coeff.to_ints() == [7, 9]
    assert SparseMatrix.from_rows([{3: R, 1: -1}]).col.tolist() == [1]


def test_from_arrays_gives_one_csr_for_any_order(rng):
    """Entries already in (row, col) order (a file's usual order, taken as is)
    and the same entries shuffled, some split into two that sum to them: the
    same matrix, zeros dropped, columns up to 2^32 - 1."""
    nrows = 37
    cells = {(rng.randrange(nrows), rng.choice([rng.randrange(1 << 32), (1 << 32) - 1, 0])): rng.randrange(R)
             for _ in range(400)}
    cells.update({(rng.randrange(nrows), rng.randrange(1000)): 0 for _ in range(20)})
    ordered = sorted(cells.items())
    want = [(rc, v) for rc, v in ordered if v]
    in_order = SparseMatrix.from_arrays(np.array([r for (r, _), _ in ordered]), np.array([c for (_, c), _ in ordered]),
                                        FrArray.from_ints([v for _, v in ordered]), nrows)
    split = []
    for (r, c), v in ordered:
        if rng.random() < 0.3:
            part = rng.randrange(R)
            split += [((r, c), part), ((r, c), (v - part) % R)]
        else:
            split.append(((r, c), v))
    rng.shuffle(split)
    shuffled = SparseMatrix.from_arrays(np.array([r for (r, _), _ in split]), np.array([c for (_, c), _ in split]),
                                        FrArray.from_ints([v for _, v in split]), nrows)
    for m in (in_order, shuffled):
        rows = np.repeat(np.arange(nrows), np.diff(m.indptr)).tolist()
        assert list(zip(zip(rows, m.col.tolist()), m.coeff.to_ints())) == want
    values = FrArray.from_ints([v for _, v in want])
    kept = SparseMatrix.from_arrays(np.array([r for (r, _), _ in want]), np.array([c for (_, c), _ in want]), values,
                                    nrows)
    values.limbs[:] = 0                                # the caller's array changes; the matrix owns its own
    assert kept.coeff.to_ints() == [v for _, v in want]


def test_density_and_domain():
    r1cs, w, _ = square_chain(10)
    d = r1cs.density()
    assert d.a_aux.all() and d.b_aux.all() and not d.b_input.any()
    assert r1cs.domain_size == 16
    assert R1CS.from_constraints(1, 1, [({1: 1}, {1: 1}, {1: 1})] * 3).domain_size == 4
    assert R1CS.from_constraints(2, 1, [({1: 1}, {1: 1}, {2: 1})] * 3).domain_size == 8


def test_demo_circuits_satisfied():
    for make, m in ((square_chain, 33), (porep_like, 1000), (porep_like, 4096 - 5)):
        r1cs, w, public = make(m)
        assert r1cs.num_constraints == m
        r1cs.check(w)
        assert w[1:r1cs.num_inputs].to_ints() == public
    r1cs, w, _ = porep_like(20000)
    values = w.to_ints()
    assert sum(v in (0, 1) for v in values) > 0.75 * len(values)   # mostly bits


def test_save_load_roundtrip(tmp_path, rng):
    r1cs, w = random_r1cs(rng, 30, 3, 7)
    r1cs.save(tmp_path / "c.npz")
    back = R1CS.load(tmp_path / "c.npz")
    assert back.num_inputs == 3 and back.num_aux == r1cs.num_aux
    assert back.evaluate(w)[2] == r1cs.evaluate(w)[2]
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(CircuitFormatError):
        R1CS.load(tmp_path / "junk.npz")
    data = (tmp_path / "c.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[:len(data) // 2])
    with pytest.raises(CircuitFormatError):
        R1CS.load(tmp_path / "cut.npz")


def test_gather_rows_matches_numpy_and_checks_indices(rng):
    import numpy as np

    from porep_prover.r1cs import _r1cs
    src = np.frombuffer(rng.randbytes(32 * 1001), dtype=np.uint64).reshape(1001, 4).copy()
    idx = np.array([rng.randrange(1001) for _ in range(777)], dtype=np.int64)
    out = np.empty((777, 4), dtype=np.uint64)
    _r1cs.gather_rows(src, idx, out, 2)
    assert np.array_equal(out, src[idx])
    for bad in ([1001], [-1], [0, 5000]):
        with pytest.raises(IndexError):
            _r1cs.gather_rows(src, np.array(bad, dtype=np.int64), np.empty((len(bad), 4), np.uint64), 2)
    with pytest.raises(ValueError):
        _r1cs.gather_rows(src, idx, np.empty((5, 4), np.uint64), 2)


def test_tabled_coefficients_match_one_per_entry(tmp_path, rng):
    """A tabled matrix (coefficient table + uint32 indices) evaluates, checks,
    saves, loads and sets up exactly as the same matrix with one coefficient
    an entry; malformed indices are named errors."""
    import random

    import numpy as np

    from porep_prover.circuits import porep_like
    from porep_prover.groth16 import insecure_setup, prove, verify
    r1cs, w, public = porep_like(700, seed=rng.randrange(1000))
    tabled = R1CS(r1cs.num_inputs, r1cs.num_aux, *(m.tabled() for m in (r1cs.a, r1cs.b, r1cs.c)))
    assert tabled.a.coeff_id is not None and len(tabled.a.coeff) < tabled.a.nnz
    assert tabled.a.coefficients() == r1cs.a.coefficients()
    assert all(x == y for x, y in zip(tabled.evaluate(w, 2), r1cs.evaluate(w, 2)))
    tabled.check(w, 2)
    tabled.save(tmp_path / "t.npz")
    again = R1CS.load(tmp_path / "t.npz")
    assert np.array_equal(again.b.coeff_id, tabled.b.coeff_id) and again.b.coeff == tabled.b.coeff
    seed = rng.randrange(1 << 30)
    p_tab = insecure_setup(tabled, rng=random.Random(seed), warn=False)
    p_dir = insecure_setup(r1cs, rng=random.Random(seed), warn=False)
    assert np.array_equal(p_tab.l.limbs, p_dir.l.limbs) and np.array_equal(p_tab.a.limbs, p_dir.a.limbs)
    assert verify(p_tab.vk, public, prove(p_tab, tabled, w))
    m = tabled.a
    bad_ids = m.coeff_id.copy()
    bad_ids[3] = len(m.coeff)
    with pytest.raises(R1CSError, match="past the table"):
        R1CS(r1cs.num_inputs, r1cs.num_aux, SparseMatrix(m.indptr, m.col, m.coeff, bad_ids), tabled.b, tabled.c)
    with pytest.raises(R1CSError, match="uint32"):
        R1CS(r1cs.num_inputs, r1cs.num_aux, SparseMatrix(m.indptr, m.col, m.coeff, m.coeff_id[:-1]),
             tabled.b, tabled.c)
