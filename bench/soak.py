#!/usr/bin/env python3
"""A bounded soak (issue 32, item 8): does the gateway's memory settle under steady load?

Starts, all on 127.0.0.1: the sandbox (`storegate sandbox`, a generated catalog), one
gateway (the release binary, production defaults: access log on, cache on), with the fleet's
stores when they are installed (a MariaDB OAuth store, `redis-server` for the shared state;
`SOAK_STORES=none` leaves them out). Then, for SOAK_MINUTES, a moderate mixed load at about
SOAK_RPS requests a second from SOAK_CLIENTS keep-alive connections:

  - guest product reads over the catalog (hits, and misses as entries age and renames purge),
    JSON and XML, and product lists;
  - the demo customer's own record and addresses (Bearer token);
  - OAuth 1.0a signed Admin reads (HMAC-SHA1, a fresh nonce each: the verified-credential
    cache, the nonce claim in Redis or the store);
  - writes: Admin renames of products (invalidations), the customer's address created and
    deleted again (shared locks), stock item reads;

and every minute the gateway's resident size (`VmRSS`, and `RssAnon` beside it, from
/proc/PID/status), the cache's weight and entries (`/metrics`), requests done and failed.
The verdict: RSS at the last minute within 10% of RSS at minute 10 (the first minutes fill
the cache and the allocator's pools; the question is whether it settles after).

Writes `bench/soak-out/samples.csv` and the table into bench/RESULTS.md between the soak
markers (everything else kept). Every process started here is stopped by its PID; every wait
and the whole run are bounded (SOAK_MINUTES + 5 minutes). Run it under the heavy lock:

    flock /tmp/storegate-heavy.lock cargo build --release --locked --bin storegate
    flock /tmp/storegate-heavy.lock python3 bench/soak.py

Knobs: SOAK_MINUTES (60), SOAK_RPS (150), SOAK_CLIENTS (6), SOAK_PRODUCTS (5000),
SOAK_STORES (`auto`: MariaDB and Redis when installed; `none`), SOAK_BIN (the binary),
SOAK_PORT_BASE (18480), SOAK_LABEL (the row's name in the table), SOAK_WRITE (1: write
RESULTS.md; 0: print only).
"""

import csv
import datetime
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import signed  # noqa: E402  (the consumer and token import, and the MariaDB start, of row 8)
from processes import Processes, wait_http, write_between_markers  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "soak-out"
HOST = "127.0.0.1"
MINUTES = float(os.environ.get("SOAK_MINUTES", "60"))
RPS = float(os.environ.get("SOAK_RPS", "150"))
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "6"))
PRODUCTS = int(os.environ.get("SOAK_PRODUCTS", "5000"))
STORES = os.environ.get("SOAK_STORES", "auto")
BIN = Path(os.environ.get("SOAK_BIN")
           or Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release" / "storegate")
PORT_BASE = int(os.environ.get("SOAK_PORT_BASE", "18480"))
PORTS = {"sandbox": PORT_BASE, "gw": PORT_BASE + 1, "redis": PORT_BASE + 2, "mariadb": PORT_BASE + 3}
ADMIN_KEY = "soak-admin-key-0123456789"
TOKEN = "soak-integration-token"
DEMO = ("roni_cost@example.com", "Roni-Cost-2024")
ADDRESS = {"firstname": "Soak", "lastname": "Test", "street": ["1 Main St"], "city": "Calder",
           "country_id": "US", "region": "MI", "postcode": "49628", "telephone": "555-0100"}
START_MARK, END_MARK = "<!-- soak -->", "<!-- /soak -->"

PROCS = Processes(OUT, ROOT, log_suffix=".log")
began = time.time()
stop = threading.Event()


def log(*args):
    print(f"[{time.time() - began:7.1f}s]", *args, flush=True)


def rss_of(pid):
    """(VmRSS, RssAnon, AnonHugePages) in bytes: the last is how much of the resident anonymous
    memory is transparent huge pages, which a 2 MiB page keeps whole while anything in it lives."""
    fields = {}
    for source in (f"/proc/{pid}/status", f"/proc/{pid}/smaps_rollup"):
        try:
            with open(source) as text:
                for line in text:
                    name, _, value = line.partition(":")
                    if name in ("VmRSS", "RssAnon", "AnonHugePages"):
                        fields[name] = int(value.split()[0]) * 1024
        except OSError:
            pass
    return fields.get("VmRSS", 0), fields.get("RssAnon", 0), fields.get("AnonHugePages", 0)


def metrics():
    with urllib.request.urlopen(f"http://{HOST}:{PORTS['gw']}/metrics", timeout=10) as response:
        text = response.read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.rsplit(" ", 1)
        try:
            values[name] = float(value)
        except ValueError:
            pass
    return values


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.done = {}
        self.failed = {}

    def add(self, kind, ok):
        with self.lock:
            self.done[kind] = self.done.get(kind, 0) + 1
            if not ok:
                self.failed[kind] = self.failed.get(kind, 0) + 1

    def snapshot(self):
        with self.lock:
            return dict(self.done), dict(self.failed)


COUNTS = Counts()
FAILURES = []


def client(number, customer, signer):
    """One keep-alive connection sending the mix at RPS / CLIENTS requests a second."""
    rng = random.Random(number)
    connection = http.client.HTTPConnection(HOST, PORTS["gw"], timeout=10)
    interval = CLIENTS / RPS
    next_at = time.monotonic()
    token, customer_id = customer

    def send(kind, method, path, headers=None, body=None, ok=(200,)):
        nonlocal connection
        headers = dict(headers or {})
        headers.setdefault("Accept", "application/json")
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            connection = http.client.HTTPConnection(HOST, PORTS["gw"], timeout=10)
            COUNTS.add(kind, False)
            if len(FAILURES) < 20:
                FAILURES.append(f"{kind} {method} {path}: {error}")
            return None, None
        good = response.status in ok
        COUNTS.add(kind, good)
        if not good and len(FAILURES) < 20:
            FAILURES.append(f"{kind} {method} {path}: {response.status} {payload[:200]!r}")
        return response, payload

    bearer = {"Authorization": f"Bearer {token}"}
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    while not stop.is_set():
        roll = rng.random()
        product = rng.randint(1, PRODUCTS)
        if roll < 0.50:
            accept = "application/json" if rng.random() < 0.7 else "application/xml"
            # A generated catalog has gaps in its ids: a 404 is an answer, not a failure.
            send("guest read", "GET", f"/api/rest/products/{product}", {"Accept": accept},
                 ok=(200, 404))
        elif roll < 0.58:
            send("guest list", "GET", f"/api/rest/products?page={rng.randint(1, 50)}&limit=20")
        elif roll < 0.66:
            send("stock read", "GET", f"/api/rest/stockitems/{product}", admin, ok=(200, 404))
        elif roll < 0.76:
            path = rng.choice([f"/api/rest/customers/{customer_id}",
                               f"/api/rest/customers/{customer_id}/addresses"])
            send("customer read", "GET", path, bearer)
        elif roll < 0.86 and signer is not None:
            path = f"/api/rest/products/{rng.randint(1, 200)}"
            send("signed read", "GET", path, signer(path))
        elif roll < 0.94:
            renamed = rng.randint(1, 500)
            send("rename", "PUT", f"/api/rest/products/{renamed}", admin,
                 {"name": f"Soak {renamed} {rng.randint(0, 1_000_000)}"})
        else:
            response, _ = send("address create", "POST",
                               f"/api/rest/customers/{customer_id}/addresses", bearer, ADDRESS)
            location = response.getheader("Location") if response is not None else None
            if location:
                send("address delete", "DELETE", location, bearer)
        next_at += interval
        pause = next_at - time.monotonic()
        if pause > 0:
            stop.wait(pause)
        else:
            next_at = time.monotonic()
    connection.close()


def customer_token():
    body = json.dumps({"username": DEMO[0], "password": DEMO[1]}).encode()
    request = urllib.request.Request(
        f"http://{HOST}:{PORTS['gw']}/api/rest/auth/token", data=body,
        headers={"Content-Type": "application/json", "Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.loads(response.read())
    return answer["access_token"], answer["customer_id"]


def make_signer():
    try:
        from oauthlib.oauth1 import Client
    except ImportError:
        log("no requests-oauthlib: the signed reads are left out")
        return None

    def sign(path):
        client = Client(signed.CONSUMER[0], client_secret=signed.CONSUMER[1],
                        resource_owner_key=signed.ADMIN_TOKEN[0],
                        resource_owner_secret=signed.ADMIN_TOKEN[1])
        _, headers, _ = client.sign(f"http://{HOST}:{PORTS['gw']}{path}", http_method="GET")
        return {"Authorization": headers["Authorization"]}

    return sign


def write_results(section):
    results_md = ROOT / "bench" / "RESULTS.md"
    write_between_markers(results_md, START_MARK, END_MARK, section)
    log(f"written to {results_md.relative_to(ROOT)}")


def main():
    if not BIN.exists():
        raise SystemExit(f"{BIN} is missing: cargo build --release --locked --bin storegate")
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    data = OUT / "data"
    data.mkdir()
    PROCS.start("sandbox", [str(BIN), "sandbox", "--listen", f"{HOST}:{PORTS['sandbox']}",
                            "--products", str(PRODUCTS)], env={"STOREGATE_UPSTREAM_TOKEN": TOKEN})
    wait_http(f"http://{HOST}:{PORTS['sandbox']}/rest/V1/store/storeConfigs", 120, PROCS["sandbox"],
              headers={"Authorization": f"Bearer {TOKEN}"})
    env = {
        "STOREGATE_LISTEN": f"{HOST}:{PORTS['gw']}",
        "STOREGATE_UPSTREAM_URL": f"http://{HOST}:{PORTS['sandbox']}",
        "STOREGATE_UPSTREAM_TOKEN": TOKEN,
        "STOREGATE_ADMIN_KEY": ADMIN_KEY,
        "STOREGATE_TOKEN_SECRET": "soak-token-secret",
        "STOREGATE_DATA_DIR": str(data),
    }
    stores = []
    if STORES != "none":
        if shutil.which("redis-server"):
            PROCS.start("redis", ["redis-server", "--port", str(PORTS["redis"]), "--bind", HOST,
                                  "--save", "", "--appendonly", "no"])
            env["STOREGATE_REDIS_URL"] = f"redis://{HOST}:{PORTS['redis']}/0"
            stores.append("Redis")
        url = signed._mariadb(OUT, PORTS["mariadb"], PROCS.start, log)
        if url:
            env["STOREGATE_DATABASE_URL"] = url
            stores.append("MariaDB OAuth store")
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("STOREGATE_")}
    full_env.update(env)
    signed._import(BIN, full_env, data)
    gateway = PROCS.start_gateway("gw", BIN, env)
    wait_http(f"http://{HOST}:{PORTS['gw']}/healthz", 60, gateway)
    customer = customer_token()
    signer = make_signer()
    log(f"gateway pid {gateway.pid}; stores: {', '.join(stores) or 'SQLite, no Redis'}; "
        f"{RPS:g} req/s from {CLIENTS} connections for {MINUTES:g} min")

    threads = [threading.Thread(target=client, args=(n, customer, signer), daemon=True)
               for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    samples = []
    start = time.monotonic()
    minute = 0
    deadline = start + MINUTES * 60 + 300
    try:
        while minute < MINUTES:
            minute += 1
            wait = start + minute * 60 - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if time.monotonic() > deadline or gateway.poll() is not None:
                raise SystemExit("the gateway exited or the run overran its bound")
            rss, anon, huge = rss_of(gateway.pid)
            values = metrics()
            done, failed = COUNTS.snapshot()
            sample = {
                "minute": minute,
                "rss_mib": rss / 2**20,
                "rss_anon_mib": anon / 2**20,
                "huge_pages_mib": huge / 2**20,
                "cache_weight_mib": values.get("storegate_cache_weight_bytes", 0) / 2**20,
                "cache_entries": int(values.get("storegate_cache_entries", 0)),
                "requests": sum(done.values()),
                "failed": sum(failed.values()),
            }
            samples.append(sample)
            log(f"minute {minute}: RSS {sample['rss_mib']:.1f} MiB (anon {sample['rss_anon_mib']:.1f}, "
                f"huge pages {sample['huge_pages_mib']:.1f}), "
                f"cache {sample['cache_weight_mib']:.1f} MiB / {sample['cache_entries']} entries, "
                f"{sample['requests']} requests, {sample['failed']} failed")
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=15)
    with open(OUT / "samples.csv", "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(samples[0]))
        writer.writeheader()
        writer.writerows(samples)
    done, failed = COUNTS.snapshot()
    report(samples, done, failed, stores)


def report(samples, done, failed, stores):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    label = os.environ.get("SOAK_LABEL") or f"`{commit}`"
    by_minute = {s["minute"]: s for s in samples}
    last = samples[-1]
    ten = by_minute.get(10)
    lines = [
        f"- binary: {label}, run at {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{len(samples)} minutes",
        f"- load: about {RPS:g} req/s from {CLIENTS} keep-alive connections (python, paced); "
        f"sandbox with {PRODUCTS} generated products; stores: {', '.join(stores) or 'SQLite, no Redis'}",
        "- mix: 50% guest product reads (70% JSON, 30% XML), 8% product lists, 8% Admin stock reads, "
        "10% the customer's record and addresses (Bearer), 10% OAuth-signed Admin reads (a fresh nonce "
        "each), 8% Admin renames of 500 products, 6% an address created and deleted",
        "- requests: " + ", ".join(f"{kind} {count:,}" + (f" ({failed[kind]} failed)" if failed.get(kind) else "")
                                   for kind, count in sorted(done.items())),
        "",
        "| minute | RSS MiB | RssAnon MiB | of which huge pages MiB | cache weight MiB | cache entries | requests so far |",
        "|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for s in samples:
        if s["minute"] in (1, 2, 5) or s["minute"] % 5 == 0 or s is last:
            lines.append(f"| {s['minute']} | {s['rss_mib']:.1f} | {s['rss_anon_mib']:.1f} | {s['huge_pages_mib']:.1f} | "
                         f"{s['cache_weight_mib']:.1f} | {s['cache_entries']:,} | {s['requests']:,} |")
    if ten:
        change = (last["rss_mib"] - ten["rss_mib"]) / ten["rss_mib"]
        verdict = "met" if abs(change) <= 0.10 else "missed"
        lines += ["", f"**RSS at minute {last['minute']} against minute 10: {last['rss_mib']:.1f} / "
                  f"{ten['rss_mib']:.1f} MiB = {change:+.1%} (bound ±10%): {verdict}**"]
    if FAILURES:
        lines += ["", "First failures: " + "; ".join(FAILURES[:5])]
    section = "## Soak: memory under a steady mixed load (issue 32, `bench/soak.py`)\n\n" + "\n".join(lines) + "\n"
    print(section)
    if os.environ.get("SOAK_WRITE", "1") != "0":
        write_results(section)


if __name__ == "__main__":
    try:
        main()
    finally:
        stop.set()
        PROCS.stop_all()
