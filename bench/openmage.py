"""Row 9: storegate in front of a live OpenMage store (issue 20 item 7).

Needs a running OpenMage store seeded as `../shared/openmage/` describes (the admin OAuth token,
the consumer, store views 1 and 2), at `BENCH_OPENMAGE_URL` (default http://127.0.0.1), and the
release build (`cargo build --release`). Everything on loopback; each load run bounded in time.

  9a. the store itself: a Guest's `GET /api/rest/products/1`, the same wrk settings as 9b;
  9b. the gateway's cached reads of the same URL (cache on, production defaults: the access log
      on), and 9b/9a;
  9c. a miss at one connection: the gateway with its cache off (every read goes to the store)
      against the store's own Guest read at one connection; 9c's added p50 is the gateway's
      p50 minus the store's. A Guest product miss makes five store calls, four of them side by
      side (the Admin's product, its websites, categories and images) and the Guest's rendering
      after the product (in parallel with the store-view lookup): two round trips in a row.

Usage: `python3 bench/openmage.py` (prints one table; `BENCH_DURATION`, `BENCH_CONNECTIONS`).
"""

import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import edge_rows  # noqa: E402

STORE = os.environ.get("BENCH_OPENMAGE_URL", "http://127.0.0.1").rstrip("/")
BIN = Path(os.environ.get("BENCH_BIN") or edge_rows.target_dir(ROOT) / "release" / "storegate")
DURATION = int(os.environ.get("BENCH_DURATION", "10"))
CONNS = int(os.environ.get("BENCH_CONNECTIONS", "16"))
HOST = "127.0.0.1"
PORT_CACHED, PORT_NOCACHE = 18291, 18292
PATH = "/api/rest/products/1"


def padded(prefix, fill):
    return (prefix + fill * 32)[:32]


def gateway(port, ttl, data):
    env = dict(os.environ)
    env.update({
        "STOREGATE_BACKEND": "openmage",
        "STOREGATE_UPSTREAM_URL": STORE,
        "STOREGATE_UPSTREAM_TOKEN": padded("admintoken", "a"),
        "STOREGATE_UPSTREAM_TOKEN_SECRET": padded("adminsecret", "a"),
        "STOREGATE_UPSTREAM_CONSUMER_KEY": "k" * 32,
        "STOREGATE_UPSTREAM_CONSUMER_SECRET": "s" * 32,
        "STOREGATE_OPENMAGE_STORE_VIEWS": "default=1,de=2",
        "STOREGATE_LISTEN": f"{HOST}:{port}",
        "STOREGATE_ADMIN_KEY": "bench-admin-key-0123456789",
        "STOREGATE_TOKEN_SECRET": "bench-token-secret",
        "STOREGATE_DATA_DIR": str(data / str(port)),
        "STOREGATE_CACHE_TTL_SECS": str(ttl),
    })
    log = open(data / f"gw-{port}.log", "wb")
    proc = subprocess.Popen([str(BIN)], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=data)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://{HOST}:{port}/healthz", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    sys.exit(f"the gateway on {port} did not start: see {data}/gw-{port}.log")


def wrk(url, conns, threads):
    argv = ["wrk", f"-t{threads}", f"-c{conns}", f"-d{DURATION}s", "--latency", "--timeout", "5s",
            "-H", "Accept: application/json", url]
    text = subprocess.run(argv, capture_output=True, text=True, timeout=DURATION + 30).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    units = {"us": 0.001, "ms": 1.0, "s": 1000.0}

    def pct(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)", text, re.M)
        return float(m.group(1)) * units[m.group(2)] if m else float("nan")

    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if non2xx:
        sys.exit(f"{url}: {non2xx.group(1)} answers were not 2xx:\n{text}")
    return rps, pct(50), pct(99)


def main():
    if not BIN.exists():
        sys.exit(f"no release build at {BIN}: cargo build --release")
    urllib.request.urlopen(urllib.request.Request(STORE + PATH, headers={"Accept": "application/json"}),
                           timeout=10).read()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        cached = gateway(PORT_CACHED, 600, data)
        nocache = gateway(PORT_NOCACHE, 0, data)
        try:
            gw = f"http://{HOST}:{PORT_CACHED}{PATH}"
            urllib.request.urlopen(urllib.request.Request(gw, headers={"Accept": "application/json"})).read()
            rows = []
            store = wrk(STORE + PATH, CONNS, 2)
            hits = wrk(gw, CONNS, 2)
            rows.append(("9a", f"OpenMage itself, Guest product read, {CONNS} conns", *store))
            rows.append(("9b", f"storegate cached, same read, {CONNS} conns", *hits))
            store_one = wrk(STORE + PATH, 1, 1)
            miss_one = wrk(f"http://{HOST}:{PORT_NOCACHE}{PATH}", 1, 1)
            rows.append(("9c-", "OpenMage itself, 1 conn", *store_one))
            rows.append(("9c", "storegate miss (cache off), 1 conn", *miss_one))
        finally:
            cached.kill()
            nocache.kill()
    print("| # | scenario | req/s | p50 ms | p99 ms |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row[0]} | {row[1]} | {row[2]:.0f} | {row[3]:.2f} | {row[4]:.2f} |")
    print()
    print(f"9b/9a: cached reads {hits[0] / store[0]:.0f}x the store's own rate")
    print(f"9c: a miss adds {miss_one[1] - store_one[1]:.1f} ms at p50 over one store read "
          f"({miss_one[1]:.1f} ms against {store_one[1]:.1f} ms)")


if __name__ == "__main__":
    main()
