# SPDX-License-Identifier: Apache-2.0
"""The parameter cache: the files job kinds make stay within a size bound,
the least recently used removed first (the one just made never), use
survives a restart (modification times), nothing but the cache's own names
is touched; `porep-prover cache` lists and prunes; the demo kind keeps its
parameters there."""
import json
import os
import random
import time

import pytest

from porep_prover.cli import main
from porep_prover.daemon import demo
from porep_prover.engine import Job
from porep_prover.errors import InvalidInputError
from porep_prover.groth16 import ParamsCache


def put(cache: ParamsCache, name: str, size: int, age: float) -> None:
    """A file of `size` bytes last used `age` seconds ago."""
    os.makedirs(cache.folder, exist_ok=True)
    path = cache.path(name)
    with open(path, "wb") as f:
        f.write(os.urandom(size))
    t = time.time() - age
    os.utime(path, (t, t))


def test_least_recently_used_go_first_and_the_new_one_stays(tmp_path):
    sizes = [random.randrange(1000, 5000) for _ in range(6)]
    cache = ParamsCache(tmp_path, max_bytes=sum(sizes[:3]) + 10)
    names = [f"set-{i}.params" for i in range(6)]
    for i, (name, size) in enumerate(zip(names, sizes)):
        put(cache, name, size, age=1000 - i * 100)        # set-0 the oldest
    cache.use("set-1.params")                             # used now: the newest but for the one made
    put(cache, "made.pmap", 100, age=5000)                # old mtime: made() marks it used
    removed = cache.made("made.pmap")
    left = {e.name for e in cache.entries()}
    assert "made.pmap" in left and "set-1.params" in left
    assert cache.total_bytes() <= cache.max_bytes
    order = [e.name for e in removed]
    assert order == sorted(order, key=lambda n: names.index(n))          # oldest first
    # every one removed older than every one left but the one used (none may be left: then any order holds)
    assert all(names.index(n) < min((names.index(x) for x in left if x in names and x != "set-1.params"),
                                    default=len(names))
               for n in order)


def test_a_file_bigger_than_the_bound_is_kept_alone(tmp_path):
    cache = ParamsCache(tmp_path, max_bytes=100)
    put(cache, "old.params", 50, age=10)
    put(cache, "huge.params", 1000, age=0)
    assert [e.name for e in cache.made("huge.params")] == ["old.params"]
    assert [e.name for e in cache.entries()] == ["huge.params"]


def test_only_the_caches_own_files_are_counted_or_removed(tmp_path):
    cache = ParamsCache(tmp_path, max_bytes=1)
    put(cache, "a.params", 500, age=100)
    for other in ("a.params.tmp4242", "notes.txt", ".hidden.params"):
        (tmp_path / other).write_bytes(b"x" * 700)
    (tmp_path / "link.params").symlink_to(tmp_path / "notes.txt")
    (tmp_path / "dir.params").mkdir()
    assert [e.name for e in cache.entries()] == ["a.params"]
    assert [e.name for e in cache.prune()] == ["a.params"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hidden.params", "a.params.tmp4242", "dir.params",
                                                          "link.params", "notes.txt"]


@pytest.mark.parametrize("name", ["../x.params", "a/b.params", "x.txt", "", "-x.params", "x" * 300 + ".params",
                                  None, "x.params\n"])
def test_names_outside_the_caches_form_are_refused(tmp_path, name):
    with pytest.raises(InvalidInputError, match="name"):
        ParamsCache(tmp_path).path(name)


def test_no_bound_removes_nothing_and_a_missing_folder_is_empty(tmp_path):
    cache = ParamsCache(tmp_path / "none", max_bytes=0)
    assert cache.entries() == [] and cache.prune() == []
    cache = ParamsCache(tmp_path, max_bytes=0)
    put(cache, "a.params", 10, age=0)
    assert cache.prune() == [] and [e.name for e in cache.prune(0)] == ["a.params"]


def test_the_bound_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE", str(tmp_path))
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE_GIB", "3")
    cache = ParamsCache()
    assert cache.folder == str(tmp_path) and cache.max_bytes == 3 << 30
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE_GIB", "-1")
    with pytest.raises(InvalidInputError, match="POREP_PROVER_PARAMS_CACHE_GIB"):
        ParamsCache()


def test_the_command_lists_and_prunes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE", str(tmp_path))
    cache = ParamsCache()
    sizes = {f"k{i}.params": random.randrange(1 << 20, 3 << 20) for i in range(3)}
    for i, (name, size) in enumerate(sizes.items()):
        put(cache, name, size, age=300 - i * 100)
    assert main(["cache", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in listing["files"]] == list(sizes) and listing["total_bytes"] == sum(sizes.values())
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert out.index("k0.params") < out.index("k2.params") and "3 files" in out
    keep = (sizes["k2.params"] + 4096) / 2**30              # room for the newest alone
    assert main(["cache", "prune", "--max-gib", f"{keep:.9f}"]) == 0
    assert "removed k0.params" in capsys.readouterr().out
    assert [e.name for e in cache.entries()] == ["k2.params"]
    assert main(["cache", "--dir", str(tmp_path), "prune", "--all"]) == 0
    assert cache.entries() == []
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE_GIB", "0")
    assert main(["cache", "prune"]) == 2
    assert "give --max-gib or --all" in capsys.readouterr().err


def test_the_demo_kind_keeps_its_parameters_within_the_bound(tmp_path, monkeypatch):
    """Jobs of three constraint counts: the cache never holds more than its
    bound allows, the oldest set goes, and a set still there is read, not made."""
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE_GIB", "0")
    provider = demo.DemoProvider(str(tmp_path))
    counts = random.sample(range(40, 90), 3)
    first = provider.load_srs(Job(demo.KIND, 1, {"constraints": counts[0], "seed": 0}))
    one = os.path.getsize(tmp_path / demo.params_name(counts[0]))
    provider.cache.max_bytes = int(one * 1.5)        # room for one set of about this size
    provider.load_srs(Job(demo.KIND, 1, {"constraints": counts[1], "seed": 0}))
    assert [e.name for e in provider.cache.entries()] == [demo.params_name(counts[1])]
    made = []
    monkeypatch.setattr(demo, "insecure_setup", lambda *a, **k: made.append(1))
    again = provider.load_srs(Job(demo.KIND, 1, {"constraints": counts[1], "seed": 0}))
    assert not made and again.h is not None and first.h is not None
