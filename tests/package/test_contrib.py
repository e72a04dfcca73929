# SPDX-License-Identifier: Apache-2.0
"""What contrib/ gives operators of the daemon holds together: the Grafana
dashboard loads and charts only metrics the daemon exports, the Prometheus
job scrapes the default status address, and the systemd unit runs the
daemon as the README says, stopping within its drain."""
import configparser
import json
import pathlib
import re
import shlex

from porep_prover.cli import _engine_options, build_parser
from porep_prover.daemon.metrics import DaemonMetrics
from porep_prover.engine.config import default_sections

CONTRIB = pathlib.Path(__file__).resolve().parents[2] / "contrib"
NAME = re.compile(r"\bporep_prover_[a-z0-9_]+")


def exported() -> set[str]:
    """Every sample name the daemon's metrics can expose."""
    suffixes = {"counter": ("_total",), "gauge": ("",), "histogram": ("_bucket", "_sum", "_count")}
    return {family.name + s for family in DaemonMetrics().registry.collect() for s in suffixes[family.type]}


def test_the_dashboard_charts_only_exported_metrics():
    dash = json.loads((CONTRIB / "grafana-dashboard.json").read_text())
    assert {"title", "uid", "panels", "schemaVersion", "templating"} <= set(dash)
    variables = {v["name"] for v in dash["templating"]["list"]}
    queries = [v["definition"] for v in dash["templating"]["list"] if "definition" in v]
    ids, used = set(), set()
    for panel in dash["panels"]:
        assert panel["id"] not in ids and panel["targets"], panel["title"]
        ids.add(panel["id"])
        pos = panel["gridPos"]
        assert 0 <= pos["x"] and pos["x"] + pos["w"] <= 24 and pos["h"] > 0
        assert panel["datasource"]["uid"] == "${datasource}"
        for target in panel["targets"]:
            names = NAME.findall(target["expr"])
            assert names, target["expr"]
            used.update(names)
            assert set(re.findall(r"\$(\w+)", target["expr"])) <= variables | {"__rate_interval"}
    for query in queries:
        used.update(NAME.findall(query))
    assert used <= exported(), sorted(used - exported())
    for wanted in ("proofs_completed_total", "proofs_failed_total", "queue_depth", "running_jobs",
                   "stage_duration_seconds_bucket", "device_efficiency", "device_busy_seconds_total",
                   "srs_resident_bytes", "memory_in_flight_bytes"):
        assert "porep_prover_" + wanted in used


def test_prometheus_scrapes_the_default_status_address():
    text = (CONTRIB / "prometheus.yml").read_text()
    default = default_sections().setting("daemon.status_listen").default
    assert re.search(r"^\s+metrics_path: /metrics$", text, re.M)
    assert re.search(r'^\s+- targets: \["' + re.escape(default) + r'"\]$', text, re.M)


def test_the_systemd_unit():
    unit = configparser.ConfigParser(interpolation=None, strict=True)
    unit.optionxform = str
    unit.read_string((CONTRIB / "porep-prover.service").read_text())
    service = unit["Service"]
    argv = shlex.split(service["ExecStart"])
    assert argv[0].endswith("/porep-prover") and argv[1:4] == ["daemon", "--config",
                                                               "/etc/porep-prover/porep-prover.toml"]
    parser = build_parser()
    args = parser.parse_args(argv[1:])
    _engine_options(parser, args)
    state = f"/var/lib/{service['StateDirectory']}"
    assert f"daemon.state_dir={state}" in argv and service["WorkingDirectory"] == state
    assert service["User"] not in ("", "root") and service["Restart"] == "on-failure"
    assert service["KillSignal"] == "SIGTERM"
    assert float(service["TimeoutStopSec"]) > default_sections().setting("daemon.drain_timeout_seconds").default
    for breaks_the_gpu in ("PrivateDevices", "DevicePolicy", "MemoryDenyWriteExecute"):
        assert breaks_the_gpu not in service
    assert unit["Install"]["WantedBy"] == "multi-user.target"
