# SPDX-License-Identifier: Apache-2.0
"""The log formats (logging.format): text lines and JSON records, what each
record holds, and the timeline report reading the events from either."""
import datetime
import json
import logging

import pytest

from porep_prover.circuits import porep_like
from porep_prover.cli import main
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.engine.logs import JsonFormatter, configure_logging, remove_handlers
from porep_prover.engine.timeline import LOG as TIMELINE_LOG
from porep_prover.engine.timeline import analyze, read_log
from porep_prover.errors import ConfigError
from porep_prover.groth16 import insecure_setup

TIMELINE_FIELDS = {"event": str, "ts": float, "job": str, "partition": int, "worker": str, "device": str}


def ordered(events):
    """Events in one order (threads log an event just after keeping it: the log's order may differ)."""
    return sorted(events, key=lambda e: (e.t, e.event, e.job, e.partition, e.worker))


def run_logged(tmp_path, rng, **settings):
    """A small engine run with the logging settings given; (its events, the settings)."""
    cfg = load_config(overrides={"engine.partition_workers": 2, "engine.threads": 1, "engine.devices": ["cpu"],
                                 "logging.file": str(tmp_path / "engine.log"), **settings})
    r1cs, _, _ = porep_like(203)
    params = insecure_setup(r1cs, warn=False)
    witnesses = [porep_like(203, seed=rng.randrange(1 << 20))[1] for _ in range(rng.randrange(1, 4))]
    root = logging.getLogger("porep_prover")
    level = root.level
    handlers = configure_logging(cfg)
    try:
        with Engine(cfg) as engine:
            engine.prove(inline_job(params, r1cs, witnesses), timeout=120)
        try:
            raise ValueError("a failure with its traceback")
        except ValueError:
            logging.getLogger("porep_prover.engine").exception("something failed: %d", 42)
    finally:
        remove_handlers(handlers)
        root.setLevel(level)
    return engine.timeline.events(), cfg


def test_json_records_have_their_fields_and_the_timeline_reads_them(tmp_path, rng, capsys):
    events, _ = run_logged(tmp_path, rng, **{"logging.format": "json", "logging.level": "DEBUG"})
    log = tmp_path / "engine.log"
    records = [json.loads(line) for line in log.read_text().splitlines()]    # every line one JSON object
    assert records and all({"time", "level", "logger", "message"} <= set(r) for r in records)
    for r in records:
        stamp = datetime.datetime.fromisoformat(r["time"].replace("Z", "+00:00"))
        assert r["time"].endswith("Z") and stamp.utcoffset() == datetime.timedelta(0)
    timeline = sorted((r for r in records if r["logger"] == "porep_prover.timeline"),
                      key=lambda r: (r["ts"], r["event"], r["job"], r["partition"], r["worker"]))
    assert len(timeline) == len(events)
    for r, event in zip(timeline, ordered(events)):
        assert all(isinstance(r[k], kind) for k, kind in TIMELINE_FIELDS.items())
        assert r["message"] == r["event"] == event.event and r["ts"] == event.t and r["job"] == event.job
        assert "TIMELINE" not in r["message"]
    failed = [r for r in records if r["message"] == "something failed: 42"]
    assert len(failed) == 1 and failed[0]["level"] == "ERROR" and "ValueError: a failure" in failed[0]["exception"]
    assert ordered(read_log(log)) == ordered(events)
    assert main(["timeline", str(log)]) == 0
    assert "GPU efficiency" in capsys.readouterr().out


def test_without_a_timeline_file_the_events_stay_out_of_the_main_log_at_info(tmp_path, rng):
    events, _ = run_logged(tmp_path, rng, **{"logging.format": "json"})
    records = [json.loads(line) for line in (tmp_path / "engine.log").read_text().splitlines()]
    assert events and records
    assert not [r for r in records if r["logger"] == "porep_prover.timeline"]


@pytest.mark.parametrize("form", ["text", "json"])
def test_the_timeline_file_in_either_format(tmp_path, rng, form):
    events, _ = run_logged(tmp_path, rng, **{"logging.format": form, "logging.timeline": str(tmp_path / "t.log")})
    lines = (tmp_path / "t.log").read_text().splitlines()
    assert len(lines) == len(events)
    if form == "json":
        assert all(json.loads(line)["logger"] == "porep_prover.timeline" for line in lines)
    else:
        assert all(" TIMELINE {" in line for line in lines)
    assert ordered(read_log(tmp_path / "t.log")) == ordered(events)
    assert not read_log(tmp_path / "engine.log")        # the events went to their own file only


def test_read_log_skips_what_is_not_an_event(tmp_path):
    good = {"time": "2026-12-05T10:00:00.000Z", "level": "INFO", "logger": "porep_prover.timeline",
            "message": "GPU_START", "event": "GPU_START", "ts": 1.5, "job": "j", "partition": 3, "worker": "w",
            "device": "d"}
    lines = [json.dumps(good),
             json.dumps({**good, "partition": "3"}),                  # a field of another type
             json.dumps({**good, "ts": True}),
             json.dumps({k: v for k, v in good.items() if k != "ts"}),
             json.dumps({"time": "x", "level": "INFO", "logger": "porep_prover.engine", "message": "started"}),
             "[1, 2]", "{not json", "{" * 100_000, "TIMELINE " + json.dumps({"event": "GPU_END", "t": 2}),
             "2026-12-05 INFO porep_prover.engine engine started",
             json.dumps({**{k: v for k, v in good.items() if k != "ts"}, "t": 2.5, "event": "GPU_END"})]  # 0.1.0's
    (tmp_path / "mixed.log").write_text("\n".join(lines) + "\n")
    got = read_log(tmp_path / "mixed.log")
    assert [(e.event, e.t, e.partition) for e in got] == [("GPU_START", 1.5, 3), ("GPU_END", 2, -1),
                                                           ("GPU_END", 2.5, 3)]


def test_a_runs_json_log_reads_back_into_the_timeline_of_its_text_log(tmp_path, rng, capsys):
    """One run logging its events twice: the text timeline file and a JSON-lines file."""
    json_log = tmp_path / "timeline.jsonl"
    handler = logging.FileHandler(json_log)
    handler.setFormatter(JsonFormatter())
    TIMELINE_LOG.addHandler(handler)
    try:
        events, _ = run_logged(tmp_path, rng, **{"logging.format": "text", "logging.timeline": str(tmp_path / "t.log")})
    finally:
        TIMELINE_LOG.removeHandler(handler)
        handler.close()
    text, records = read_log(tmp_path / "t.log"), read_log(json_log)
    assert ordered(records) == ordered(text) == ordered(events)      # two threads' records may pass each other
    assert analyze(records) == analyze(text)
    for line in json_log.read_text().splitlines():          # every record with the documented fields, no other
        record = json.loads(line)
        assert set(record) == {"time", "level", "logger", "message"} | set(TIMELINE_FIELDS)
        assert all(isinstance(record[k], kind) for k, kind in TIMELINE_FIELDS.items())
    reports = []
    for log in (tmp_path / "t.log", json_log):
        assert main(["timeline", str(log), "--json"]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    assert reports[0] == reports[1] and reports[0]["devices"]


def test_an_unknown_format_is_a_config_error():
    with pytest.raises(ConfigError, match="logging.format") as info:
        load_config(overrides={"logging.format": "xml"})
    assert info.value.key == "logging.format"
    assert load_config(overrides={"logging.format": "json"}).get("logging.format") == "json"
