# SPDX-License-Identifier: Apache-2.0
"""Every code block of README.md and plugins/README.md works as written.

```python blocks: each runs in a fresh interpreter in an empty folder.
```sh blocks: every `porep-prover ...` command line parses (its optional
[groups] left out, and put in with each of their alternatives, the
placeholders N, K, HEX and PATH filled); the command-line tour (the block
under "## Command line") also runs, line after line, against the files its
earlier lines make. A line of another program must be one of NOT_RUN.
Blocks without a language are text (folder trees) and must hold no command.
"""
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from porep_prover.cli import _engine_options, build_parser, main

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = (ROOT / "README.md", ROOT / "plugins" / "README.md")
RUN_SECTIONS = {"## Command line"}          # sh blocks that run; the others (GPU, bench, snarkjs files) parse
# other programs' lines: installing and the test suite itself (what .ci/run does)
NOT_RUN = {"python3 -m pip install .", "npm ci --prefix tests/interop",
           'python3 -m pip install ".[test]" ./plugins/porep-prover-*', "python3 -m pytest -q"}
# an operator's service setup, as root on a host (README "Run as a service"; tests/package/test_contrib.py checks
# the unit)
NOT_RUN |= {"useradd --system --home-dir /var/lib/porep-prover --shell /usr/sbin/nologin porep-prover",
            "install -D -m 0644 contrib/porep-prover.example.toml /etc/porep-prover/porep-prover.toml",
            "install -m 0644 contrib/porep-prover.service /etc/systemd/system/porep-prover.service",
            "systemctl daemon-reload", "systemctl enable --now porep-prover", "journalctl -u porep-prover -f",
            "curl -s http://127.0.0.1:9821/status"}
# a cluster's hosts (README "Run on a cluster"; plugins/porep-prover-ray/tests run a local cluster)
NOT_RUN |= {'python3 -m pip install ".[ray]" ./plugins/porep-prover-ray', "ray start --head --port 6379 --num-gpus 0",
            "ray start --address 10.0.0.5:6379"}
# a lent GPU host's run (README "A device run"; tests/bench/test_device_run.py checks its plan and steps)
NOT_RUN |= {"python3 benchmarks/device_run.py --dry-run", "python3 benchmarks/device_run.py --quick",
            "python3 benchmarks/device_run.py --steps install,warm,lane",
            "python3 benchmarks/device_run.py --steps inputs,inputs-direct,partition",
            "python3 benchmarks/device_run.py --steps engine-16,engine-card,peers",
            "python3 benchmarks/device_run.py --steps real-c1,real-card",
            "python3 benchmarks/device_run.py --steps winning,window"}
# a sector sealed here by the porep plugin (README "The real PoRep"; plugins/porep-prover-porep/tests/test_provider.py
# runs it)
NOT_RUN |= {"python3 -m porep_prover_porep seal c1.json --proof StackedDrg2KiBV1_1 --miner-id 1000 --sector-number 7"}
GROUP = re.compile(r"\[([^\[\]]*)\]")


def blocks():
    """(doc, heading, language, first line number, text) of every fenced block."""
    for doc in DOCS:
        heading, fence = "", None
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            if fence is None and line.startswith("#"):
                heading = line.strip()
            elif line.startswith("```"):
                if fence is None:
                    fence, start, body = line[3:].strip(), number + 1, []
                else:
                    yield doc.relative_to(ROOT), heading, fence, start, "\n".join(body) + "\n"
                    fence = None
            elif fence is not None:
                body.append(line)
        assert fence is None, f"{doc}: a block is not closed"


def commands(text: str):
    """The commands of a shell block: its lines less comments, split at &&."""
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            yield from (part.strip() for part in line.split("&&"))


def alternatives(group: str) -> list[str]:
    """The choices of an optional group: whole options (a | b) or values (--circuit x|y)."""
    if " | " in group:
        return [g.strip() for g in group.split(" | ")]
    words = group.split()
    return [" ".join(words[:-1] + [v]) for v in words[-1].split("|")] if "|" in words[-1] else [group]


def variants(command: str) -> list[str]:
    """The command without its optional groups, then with every group in,
    taking its k-th alternative (its last when it has fewer) for each k."""
    groups = [alternatives(g) for g in GROUP.findall(command)]
    out = [GROUP.sub("", command)]
    for k in range(max((len(g) for g in groups), default=0)):
        picks = iter([g[min(k, len(g) - 1)] for g in groups])
        out.append(GROUP.sub(lambda _, picks=picks: next(picks), command))
    return [" ".join(v.split()) for v in out]


def fill(command: str, values: dict) -> list[str]:
    """argv of a command line (without the program's name), placeholders filled."""
    argv = shlex.split(command)
    assert argv[0] == "porep-prover", command
    filled = [values.get(a, a) for a in argv[1:]]
    return [v() if callable(v) else v for v in filled]


def parses(argv: list[str]) -> None:
    parser = build_parser()
    try:
        _engine_options(parser, parser.parse_args(argv))
    except SystemExit as exc:
        raise AssertionError(f"porep-prover {' '.join(argv)}: usage error") from exc


PARSE_VALUES = {"N": "300", "K": "1", "HEX": "0" * 32, "PATH": "parameters.json"}


def test_every_block_is_known():
    found = {"python": 0, "sh": 0, "": 0}
    for doc, _, lang, start, text in blocks():
        assert lang in found, f"{doc}:{start}: a ```{lang} block: add it to this test"
        found[lang] += 1
        if lang == "":
            assert not [c for c in commands(text) if c.startswith(("porep-prover ", "python"))], \
                f"{doc}:{start}: a command in a text block"
    assert found["python"] >= 3 and found["sh"] >= 6


def test_every_command_line_parses():
    count = 0
    for doc, _, lang, start, text in blocks():
        if lang != "sh":
            continue
        for command in commands(text):
            if not command.startswith("porep-prover"):
                assert command in NOT_RUN, f"{doc}:{start}: {command!r} is neither porep-prover nor in NOT_RUN"
                continue
            for variant in variants(command):
                parses(fill(variant, PARSE_VALUES))
                count += 1
    assert count >= 30


def python_blocks():
    return [pytest.param(text, id=f"{doc}:{start}") for doc, _, lang, start, text in blocks() if lang == "python"]


@pytest.mark.parametrize("code", python_blocks())
def test_python_block_runs(code, tmp_path):
    (tmp_path / "snippet.py").write_text(code)
    env = dict(os.environ, POREP_PROVER_THREADS="2")
    run = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snippet.py"]       # and leaves nothing behind


def test_the_command_line_tour_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)

    def digest():
        from porep_prover.groth16 import file_digest
        return file_digest("c.params")

    def parameters_json():
        path = tmp_path / "elsewhere" / "parameters.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"c.params": {"cid": "", "digest": digest(), "sector_size": 0}}))
        return str(path)

    values = {"N": "300", "K": "1", "HEX": digest, "PATH": parameters_json}
    tour = [text for _, heading, lang, _, text in blocks() if lang == "sh" and heading in RUN_SECTIONS]
    assert len(tour) == 1
    ran = []
    for command in commands(tour[0]):
        groups = GROUP.findall(command)
        for variant in (variants(command)[1:] if groups else [command]):    # every group in, each alternative
            argv = fill(variant, values)
            status = main(argv)
            out = capsys.readouterr()
            assert status == 0, f"porep-prover {' '.join(argv)}: exit {status}: {out.err[-2000:]}"
            ran.append(argv[:2])
    assert ["verify", "c.params"] in ran and ["params", "check"] in ran and len(ran) >= 12
    assert {"c.npz", "w.bin", "public.json", "c.params", "vk.json", "proof.bin", "proof.json", "c.pmap",
            "c.params.digest"} <= {p.name for p in tmp_path.iterdir()}
