"""Row 10: store round trips per cold operation (issue 33), over both back ends.

A phone's walk of 16 operations, each timed alone, and each one's calls to the store counted
from the gateway's own `storegate_upstream_call_duration_seconds` (calls by endpoint
template, read from `/metrics` before and after the operation):

- **Magento 2**: the sandbox alone (`storegate sandbox --latency-ms 100`, every answer 100 ms
  late), the gateway in front of it (cache on, the access log off). Sequential round trips =
  wall time / 100 ms: what a phone waits in units of the store's latency.
- **OpenMage**: the gateway in front of the live store (`BENCH_OPENMAGE_URL`, default
  http://127.0.0.1, seeded as ../shared/openmage/ says). Its calls take what PHP takes
  (30-100 ms), so the table counts calls per operation, and the depth (sequential round trips)
  is the longest chain of calls the operation made, read from the same counts' timing:
  wall time / the median call's time is printed beside it, for what it is worth. The walk
  writes (an address, a product, a sign-in that replaces customer 1's store token): run it
  under `flock /tmp/openmage.lock`; it restores the seeded snapshot at the end
  (`BENCH_OPENMAGE_RESET`, the reset command of ../shared/openmage/README.md; `none` skips it).

Each operation has a budget (the least number of sequential round trips the store's API
allows, and for OpenMage the least number of calls); the table shows both and the script
exits 1 when an operation goes more than one above its least or the Magento 2 total above 17
(`BENCH_ROUND_TRIPS_STRICT=0`: report only). The same budgets are checked by
`tests/e2e/round_trips.rs` on every test run (calls counted, no latency).

Usage: `python3 bench/round_trips.py [magento2|openmage|both]` (default magento2);
`BENCH_BIN` the gateway binary (default target/release/storegate, else target/debug);
`BENCH_LATENCY_MS` (100); `--write-results` puts the tables into bench/RESULTS.md between
`<!-- round-trips -->` markers.
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from processes import Processes, wait_http  # noqa: E402

HOST = "127.0.0.1"
LATENCY_MS = int(os.environ.get("BENCH_LATENCY_MS", "100"))
PORT_BASE = int(os.environ.get("BENCH_PORT_BASE", "18380"))
ADMIN_KEY = "bench-admin-key-0123456789"
TOKEN = "bench-integration-token"
STORE = os.environ.get("BENCH_OPENMAGE_URL", "http://127.0.0.1").rstrip("/")
RESET = os.environ.get(
    "BENCH_OPENMAGE_RESET",
    "mariadb -S /tmp/m1/run/mysqld.sock -uroot m1 < /tmp/m1/m1-seeded.sql; rm -rf /tmp/m1/www/var/cache/*",
)
STRICT = os.environ.get("BENCH_ROUND_TRIPS_STRICT", "1") != "0"
START, END = "<!-- round-trips -->", "<!-- /round-trips -->"


def binary():
    if os.environ.get("BENCH_BIN"):
        return Path(os.environ["BENCH_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    for kind in ("release", "debug"):
        if (target / kind / "storegate").exists():
            return target / kind / "storegate"
    sys.exit("no storegate binary: cargo build --release (under flock /tmp/storegate-heavy.lock)")


# ---------------------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------------------

# (name, least sequential round trips, least calls on OpenMage, method, path, who, body)
# Paths take {product}, {list_product}, {customer}, {address} from the back end's fixture.
WALK = [
    ("guest product list (cold)", 1, 1, "GET", "/products?limit=5", "guest", None),
    ("guest product (cold)", 1, None, "GET", "/products/{guest_product}", "guest", None),
    ("admin product (cold)", 1, None, "GET", "/products/{admin_product}", "admin", None),
    ("guest images (cold)", 1, 1, "GET", "/products/{images_product}/images", "guest", None),
    ("category products (cold)", 1, 1, "GET", "/products/category/{category}", "guest", None),
    ("customer sign-in", 2, 2, "POST", "/auth/token", "guest", "signin"),
    ("customer product (cold, group prices)", 1, None, "GET", "/products/{tier_product}",
     "customer", None),
    ("customer address create", 2, 1, "POST", "/customers/{customer}/addresses", "customer",
     "address"),
    ("customer own record", 1, 2, "GET", "/customers/{customer}", "customer", None),
    ("customer addresses", 1, 1, "GET", "/customers/{customer}/addresses", "customer", None),
    ("customer orders", 1, 1, "GET", "/orders", "customer", None),
    ("customer order (one)", 1, 1, "GET", "/orders/{order}", "customer", None),
    ("admin stock list", 1, 1, "GET", "/stockitems?limit=10", "admin", None),
    ("admin product update", 1, None, "PUT", "/products/{update_product}", "admin", "product"),
    ("guest product (repeat: a hit)", 0, 0, "GET", "/products/{guest_product}", "guest", None),
    ("customer product (repeat: a hit)", 0, 0, "GET", "/products/{tier_product}", "customer",
     None),
]

# Fixture values per back end: the sandbox's seed (fixtures/sandbox) and OpenMage's seed
# (../shared/openmage/seed.php).
FIXTURES = {
    "magento2": {
        "guest_product": 6, "admin_product": 7, "images_product": 1, "category": 5,
        "update_product": 8,
        "tier_product": 5, "customer": 1, "order": 1,
        "username": "roni_cost@example.com", "password": "Roni-Cost-2024",
        "country": "US", "region": "Texas",
    },
    "openmage": {
        "guest_product": 1, "admin_product": 5, "images_product": 3, "category": 2,
        "update_product": 4,
        "tier_product": 2, "customer": 1, "order": 1,
        "username": "john@example.com", "password": "Password123",
        "country": "US", "region": "Texas",
    },
}

# The least number of calls on OpenMage where it differs from the depth, as
# tests/openmage/round_trips.rs counts them (docs/benchmarks.md, row 10, says why): a product
# record is the store's product, its websites, categories and gallery read side by side (the
# store has no one call for them, and every resource of the product reads that record), a
# shopper's product adds the store's own answer to them (their prices, through their session
# for a customer, whose group and tax destination are their record and addresses); the
# store's sign-in is its authorization page, five steps, then who signed in.
OPENMAGE_LEAST_CALLS = {
    "guest product (cold)": 5,
    "admin product (cold)": 4,
    "guest images (cold)": 4,
    "customer sign-in": 6,
    "customer product (cold, group prices)": 7,
    "admin product update": 1,
}


def body_of(kind, fx):
    if kind == "signin":
        return {"username": fx["username"], "password": fx["password"]}
    if kind == "address":
        return {"firstname": "Walk", "lastname": "Er", "street": ["1 Round Trip Road"],
                "city": "Austin", "country_id": fx["country"], "region": fx["region"],
                "postcode": "73301", "telephone": "555-0100"}
    if kind == "product":
        return {"name": "Walked product"}
    return None


# ---------------------------------------------------------------------------------------
# Talking to the gateway
# ---------------------------------------------------------------------------------------


def call(base, method, path, headers, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, method=method, data=data, headers=headers)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def upstream_calls(origin):
    """Store calls so far, by `METHOD endpoint`, and their summed seconds."""
    with urllib.request.urlopen(origin + "/metrics", timeout=10) as response:
        text = response.read().decode()
    counts, sums = {}, {}
    pattern = re.compile(
        r'^storegate_upstream_call_duration_seconds_(count|sum)\{(.*)\} ([0-9.e+-]+)$')
    for line in text.splitlines():
        found = pattern.match(line)
        if not found:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', found.group(2)))
        key = f'{labels.get("method")} {labels.get("endpoint")}'
        target = counts if found.group(1) == "count" else sums
        target[key] = target.get(key, 0) + float(found.group(3))
    return counts, sums


def difference(after, before):
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0) > 0}


def walk(origin, fx, wanted_who=None):
    """Runs the walk once; one row per operation."""
    base = origin + "/api/rest"
    token = None
    rows = []
    for name, least, least_calls, method, path, who, body in WALK:
        path = path.format(**fx)
        headers = {"Accept": "application/json"}
        if who == "admin":
            headers["Authorization"] = f"Bearer {ADMIN_KEY}"
        elif who == "customer":
            headers["Authorization"] = f"Bearer {token}"
        before, before_secs = upstream_calls(origin)
        started = time.perf_counter()
        status, answer_headers, answer = call(base, method, path, headers,
                                              body_of(body, fx) if body else None)
        wall = time.perf_counter() - started
        after, after_secs = upstream_calls(origin)
        calls = difference(after, before)
        secs = difference(after_secs, before_secs)
        if status >= 300:
            sys.exit(f"{name}: {method} {path} answered {status}: {answer[:300]!r}")
        if body == "signin":
            token = json.loads(answer)["access_token"]
        rows.append({
            "name": name, "least": least, "wall": wall, "calls": calls, "secs": secs,
            "cache": answer_headers.get("X-Cache", ""), "status": status,
            "least_calls": least_calls,
        })
    return rows


# ---------------------------------------------------------------------------------------
# The two set-ups
# ---------------------------------------------------------------------------------------


def run_magento2(procs, out, gateway_bin):
    sandbox_port, gw_port = PORT_BASE, PORT_BASE + 1
    procs.start("sandbox", [str(gateway_bin), "sandbox", "--listen", f"{HOST}:{sandbox_port}",
                            "--latency-ms", str(LATENCY_MS)],
                env={"STOREGATE_UPSTREAM_TOKEN": TOKEN})
    wait_http(f"http://{HOST}:{sandbox_port}/__sandbox/stats", 60, procs["sandbox"])
    procs.start_gateway("gateway", gateway_bin, {
        "STOREGATE_LISTEN": f"{HOST}:{gw_port}",
        "STOREGATE_UPSTREAM_URL": f"http://{HOST}:{sandbox_port}",
        "STOREGATE_UPSTREAM_TOKEN": TOKEN,
        "STOREGATE_ADMIN_KEY": ADMIN_KEY,
        "STOREGATE_TOKEN_SECRET": "bench-token-secret",
        "STOREGATE_ACCESS_LOG": "off",
        "STOREGATE_DATA_DIR": str(out / "gw-data"),
    })
    origin = f"http://{HOST}:{gw_port}"
    ready(origin, procs["gateway"])
    return walk(origin, FIXTURES["magento2"])


def padded(prefix, fill):
    return (prefix + fill * 32)[:32]


def run_openmage(procs, out, gateway_bin):
    gw_port = PORT_BASE + 2
    data = out / "gw-om-data"
    shutil.rmtree(data, ignore_errors=True)
    env = {
        "STOREGATE_BACKEND": "openmage",
        "STOREGATE_UPSTREAM_URL": STORE,
        "STOREGATE_UPSTREAM_TOKEN": padded("admintoken", "a"),
        "STOREGATE_UPSTREAM_TOKEN_SECRET": padded("adminsecret", "a"),
        "STOREGATE_UPSTREAM_CONSUMER_KEY": "k" * 32,
        "STOREGATE_UPSTREAM_CONSUMER_SECRET": "s" * 32,
        "STOREGATE_OPENMAGE_STORE_VIEWS": "default=1,de=2",
        "STOREGATE_LISTEN": f"{HOST}:{gw_port}",
        "STOREGATE_ADMIN_KEY": ADMIN_KEY,
        "STOREGATE_TOKEN_SECRET": "bench-token-secret",
        "STOREGATE_ACCESS_LOG": "off",
        "STOREGATE_DATA_DIR": str(data),
        # The store's sign-in is its own authorization page, played step by step (six calls
        # in a row, each a PHP page): more than the default deadline on a busy machine.
        "STOREGATE_UPSTREAM_TIMEOUT_MS": "30000",
    }
    procs.start_gateway("gateway-openmage", gateway_bin, env)
    origin = f"http://{HOST}:{gw_port}"
    try:
        ready(origin, procs["gateway-openmage"])
        return walk(origin, FIXTURES["openmage"])
    finally:
        procs.stop("gateway-openmage")
        if RESET != "none":
            subprocess.run(RESET, shell=True, check=False)


def ready(origin, process):
    """Until `/readyz` says ready (a warm start and the lookups loaded), at most 120 s."""
    wait_http(origin + "/healthz", 60, process)
    until = time.time() + 120
    while time.time() < until:
        try:
            with urllib.request.urlopen(origin + "/readyz", timeout=5) as response:
                if response.status == 200:
                    return
        except urllib.error.HTTPError:
            pass
        time.sleep(0.1)
    sys.exit(f"{origin}/readyz never said ready")


# ---------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------


def depth(row):
    return row["wall"] * 1000 / LATENCY_MS


def magento2_table(rows):
    lines = [f"Magento 2 (the sandbox, every answer {LATENCY_MS} ms late; access log off)", "",
             "| # | operation | round trips | least possible | store calls | calls |",
             "|--:|---|--:|--:|--:|---|"]
    failures = []
    for i, row in enumerate(rows, 1):
        trips = depth(row)
        calls = sum(row["calls"].values())
        named = ", ".join(f"{k} x{int(v)}" if v > 1 else k for k, v in sorted(row["calls"].items()))
        lines.append(f"| {i} | {row['name']} | {trips:.2f} | {row['least']} | {int(calls)} | "
                     f"{named or '(none: ' + (row['cache'] or 'cache') + ')'} |")
        if trips > row["least"] + 1.5:
            failures.append(f"{row['name']}: {trips:.2f} round trips, least {row['least']}")
    total = sum(depth(r) for r in rows)
    least = sum(r["least"] for r in rows)
    lines.append(f"| | **total** | **{total:.1f}** | {least} | "
                 f"{int(sum(sum(r['calls'].values()) for r in rows))} | |")
    if total > 17.5:
        failures.append(f"total {total:.1f} round trips, at most 17")
    return lines, failures


def openmage_table(rows):
    median_call = statistics.median(
        [s / c for r in rows for k, s in r["secs"].items() for c in [r["calls"][k]] if c] or [1])
    lines = [f"OpenMage (the live store; a call's median time in this walk {median_call * 1000:.0f} ms)",
             "", "| # | operation | store calls | least possible | wall ms | calls |",
             "|--:|---|--:|--:|--:|---|"]
    failures = []
    for i, row in enumerate(rows, 1):
        calls = int(sum(row["calls"].values()))
        least = OPENMAGE_LEAST_CALLS.get(row["name"], row["least_calls"])
        if least is None:
            least = row["least"]
        named = ", ".join(f"{k} x{int(v)}" if v > 1 else k for k, v in sorted(row["calls"].items()))
        lines.append(f"| {i} | {row['name']} | {calls} | {least} | {row['wall'] * 1000:.0f} | "
                     f"{named or '(none: ' + (row['cache'] or 'cache') + ')'} |")
        if calls > least + 1:
            failures.append(f"{row['name']}: {calls} calls, least {least}")
    lines.append(f"| | **total** | **{sum(int(sum(r['calls'].values())) for r in rows)}** | "
                 f"{sum(OPENMAGE_LEAST_CALLS.get(r['name'], r['least_calls'] if r['least_calls'] is not None else r['least']) for r in rows)} | "
                 f"{sum(r['wall'] for r in rows) * 1000:.0f} | |")
    return lines, failures


def write_results(text):
    results = ROOT / "bench" / "RESULTS.md"
    current = results.read_text() if results.exists() else ""
    block = f"{START}\n{text}\n{END}"
    if START in current and END in current:
        current = current[: current.index(START)] + block + current[current.index(END) + len(END):]
    else:
        current = current.rstrip("\n") + "\n\n## Store round trips per cold operation (row 10)\n\n" + block + "\n"
    results.write_text(current)


def main():
    which = next((a for a in sys.argv[1:] if not a.startswith("--")), "magento2")
    gateway_bin = binary()
    out = Path(tempfile.mkdtemp(prefix="storegate-round-trips-"))
    procs = Processes(out, ROOT, log_suffix=".log")
    sections, failures = [], []
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    try:
        if which in ("magento2", "both"):
            lines, failed = magento2_table(run_magento2(procs, out, gateway_bin))
            sections.append("\n".join(lines))
            failures += failed
        if which in ("openmage", "both"):
            lines, failed = openmage_table(run_openmage(procs, out, gateway_bin))
            sections.append("\n".join(lines))
            failures += failed
    finally:
        procs.stop_all()
    text = f"Commit `{commit}`, {gateway_bin.parent.name} build.\n\n" + "\n\n".join(sections)
    print(text)
    if "--write-results" in sys.argv:
        write_results(text)
    if failures:
        print("\nover budget:\n  " + "\n  ".join(failures))
        if STRICT:
            sys.exit(1)
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
