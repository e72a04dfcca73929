# SPDX-License-Identifier: Apache-2.0
"""The daemon's live status page (GET /) in a real browser: Debian's
chromium, headless, driven by selenium through Debian's chromedriver (no
browser is downloaded; the tests skip, saying why, without them). The page
shows exactly what /status/live says (every number it shows carries its
JSON path and value), follows a daemon idle and proving a demo job, and a
screenshot of it during the run is written (into the test's folder, and
into $POREP_PROVER_SCREENSHOT_DIR when set)."""
import json
import os
import pathlib
import shutil
import time
import urllib.request

import pytest

from porep_prover.cli import status_view
from status_samples import full_status, serve
from daemon_process import DaemonProcess, demo_request

LOAD_SECONDS = 30.0
WINDOW_SIZE = (1366, 900)        # a laptop's screen


def chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install '.[test]'): the status page's browser tests need it")
    binary, driver = chromium(), shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.skip("no chromium with chromedriver here (Debian: apt-get install chromium chromium-driver): "
                    "the status page's browser tests need them")
    os.environ.setdefault("SE_OFFLINE", "true")          # selenium never fetches a driver or a browser
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-default-apps", f"--window-size={WINDOW_SIZE[0]},{WINDOW_SIZE[1]}"):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"download_restrictions": 3})     # no downloads at all
    session = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    session.set_page_load_timeout(LOAD_SECONDS)
    session.set_script_timeout(LOAD_SECONDS)
    yield session
    session.quit()


def wait_for(browser, script: str, seconds: float = LOAD_SECONDS, what: str = ""):
    """The first true value of a script run in the page, polled for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        value = browser.execute_script(script)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what or script}")
        time.sleep(0.1)


def refreshes(browser) -> int:
    return int(browser.execute_script("return document.body.dataset.refreshes || '0'"))


SHOWN = """return Array.from(document.querySelectorAll('[data-key]')).map(
    e => [e.dataset.key, e.dataset.value === undefined ? null : e.dataset.value, e.textContent]);"""
LANES = """return Array.from(document.querySelectorAll('#lanes .lane')).map(l => [l.dataset.worker,
    Array.from(l.querySelectorAll('.bar')).map(b => [b.dataset.stage, b.dataset.job, b.dataset.partition,
                                                      b.title])]);"""


def at(obj, key: str):
    for part in key.split("."):
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


def formatted(key: str, value) -> str | None:
    """What the terminal view writes for a value (the page writes the same), or None: not compared."""
    last = key.rsplit(".", 1)[-1]
    if key == "status.srs.budget_bytes" and value == 0:
        return "none"
    if last.endswith("bytes"):
        return status_view.size(value)
    if last == "efficiency":
        return status_view.percent(value)
    if last in ("uptime_seconds", "idle_seconds") or key.endswith("longest_gap.seconds"):
        return None
    return str(value) if isinstance(value, int) else None


def test_the_page_shows_what_status_live_says(browser, rng):
    server, status, window = serve(rng, status=full_status(rng, cluster=True))
    with server:
        browser.get(f"http://127.0.0.1:{server.port}/")
        wait_for(browser, "return Number(document.body.dataset.refreshes || 0) >= 1", what="the first refresh")
        shown = browser.execute_script(SHOWN)
        lanes = browser.execute_script(LANES)
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/status/live", timeout=10) as reply:
            live = json.loads(reply.read())
    assert live == {"status": status, "window": window}
    keys = {key for key, _, _ in shown}
    expected = {f"status.queue.{p}" for p in status["queue"]} | {"status.srs.resident_bytes",
                                                                 "window.devices.0.efficiency"}
    expected |= {f"status.memory.host.{k}" for k in status["memory"]["host"]}
    expected |= {f"status.devices.0.memory.{k}_bytes" for k in ("allocated", "planned", "budget", "streamed")}
    expected.add("status.devices.0.copy_wait_seconds")
    expected |= {f"status.jobs.active.{i}.{k}" for i in range(len(status["jobs"]["active"]))
                 for k in ("proved", "in_flight", "queued", "failed", "partitions")}
    expected |= {f"status.cluster.nodes.{i}.{k}" for i in range(len(status["cluster"]["nodes"]))
                 for k in ("partitions_sent", "partitions_done", "partitions_failed", "partitions_rerun", "in_flight")}
    expected |= {f"status.cluster.nodes.{i}.device_figures.{j}.efficiency"        # each node's devices, their own
                 for i, n in enumerate(status["cluster"]["nodes"]) for j in range(len(n["device_figures"]))}
    assert expected <= keys, expected - keys
    for key, value, text in shown:
        assert json.loads(value) == at(live, key), key
        if formatted(key, at(live, key)) is not None:
            assert text == formatted(key, at(live, key)), key
    assert [name for name, _ in lanes] == [lane["worker"] for lane in window["lanes"]]
    for (name, bars), lane in zip(lanes, window["lanes"]):
        assert [(s, j, int(p)) for s, j, p, _ in bars] == [(b["stage"], b["job"], b["partition"]) for b in lane["bars"]]
        for _, job, part, title in bars:
            assert f"job {job} partition {part}" in title, name
    gap = window["devices"][0]["longest_gap"]
    if gap is not None:
        assert browser.execute_script("return document.querySelector('#lanes .gap').title") == gap["text"]


STABLE = ("uptime_seconds", "available_bytes", "idle_seconds", "free_bytes")    # change between two reads


def test_the_page_shows_why_the_server_refused_it(browser, rng):
    server, _, _ = serve(rng, status=full_status(rng))
    with server:
        browser.get(f"http://127.0.0.1:{server.port}/?window=99999")
        wait_for(browser, "return !document.getElementById('error').hidden", what="the error shown")
        text = browser.find_element("id", "error").text
    assert "HTTP 400: window must be seconds from 1 to" in text and "not trying again" in text


# The page redraws once a second, a quick host proves a demo partition in well under 0.1 s: the job has
# partitions enough to be drawn while it runs, and what the page drew is recorded as it is drawn (a check
# between two redraws could miss a job that ran between them).
PARTITIONS = 48
WATCH = """const job = arguments[0];
window.seen = {row: false, kernel: false};
const look = () => {
  window.seen.row ||= document.querySelector(`#jobs tr[data-job="${job}"]`) !== null;
  window.seen.kernel ||= document.querySelector(`#lanes .bar[data-job="${job}"][data-stage="kernel"]`) !== null;
};
new MutationObserver(look).observe(document.body, {childList: true, subtree: true, attributes: true});
look();"""


def test_the_page_follows_a_daemon_through_a_demo_job(browser, tmp_path):
    with DaemonProcess(tmp_path / "state") as daemon:
        base, seconds = f"http://{daemon.status_address}", 40       # a short window: the run's bars are wide
        browser.get(f"{base}/?window={seconds}")
        wait_for(browser, "return Number(document.body.dataset.refreshes || 0) >= 1", what="the idle page")
        assert browser.find_element("id", "window-seconds").text == str(seconds)
        idle = dict(browser.execute_script(LANES))
        assert {"synth0", "cpu.w0", "finalize_0"} <= set(idle) and not any(idle.values())
        assert "no active jobs" in browser.find_element("id", "jobs").text
        reply = daemon.stub().SubmitProof(demo_request(6000, partitions=PARTITIONS), timeout=30)
        job = reply.job_id
        browser.execute_script(WATCH, job)
        wait_for(browser, "return window.seen.row && window.seen.kernel", seconds=120,
                 what="the job in the jobs table and its kernel regions in the lanes")
        try:       # for the screenshot, a run well under way (a quick run may have ended: then as it is)
            wait_for(browser, f"const row = document.querySelector('#jobs tr[data-job=\"{job}\"]');"
                              "return !row || Number(row.querySelector('[data-key$=\".proved\"]').dataset.value) >= 4",
                     seconds=60)
        except AssertionError:
            pass
        shot = tmp_path / "status-page.png"
        assert browser.save_screenshot(str(shot)) and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if os.environ.get("POREP_PROVER_SCREENSHOT_DIR"):
            folder = pathlib.Path(os.environ["POREP_PROVER_SCREENSHOT_DIR"])
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shot, folder / "status-page.png")
        print(f"screenshot: {shot}")
        wait_for(browser, "return document.querySelector('[data-key=\"status.jobs.counts.completed\"]')"
                          "?.dataset.value === '1' && document.querySelector('#jobs tr[data-job]') === null",
                 seconds=180, what="the job completed on the page")
        seen = refreshes(browser)
        wait_for(browser, f"return Number(document.body.dataset.refreshes) > {seen}", what="one more refresh")
        shown = browser.execute_script(SHOWN)
        with urllib.request.urlopen(base + "/status", timeout=10) as reply:
            status = json.loads(reply.read())
        with urllib.request.urlopen(f"{base}/status/live?window={seconds}", timeout=10) as reply:
            window = json.loads(reply.read())["window"]
        compared = 0
        for key, value, _ in shown:
            if key.rsplit(".", 1)[-1] in STABLE:
                continue
            truth = at(status, key[len("status."):]) if key.startswith("status.") else at(window, key[len("window."):])
            assert json.loads(value) == truth, key
            compared += 1
        assert compared >= 20
        bars = [bar for lane in window["lanes"] for bar in lane["bars"] if bar["job"] == job]
        assert {b["partition"] for b in bars if b["stage"] == "kernel"} == set(range(PARTITIONS))
