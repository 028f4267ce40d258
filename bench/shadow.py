#!/usr/bin/env python3
"""The dual run's rows (issue 31, docs/dual-run.md "What it costs"): guest cache hits and
misses of `GET /api/rest/products/1` (JSON) through a gateway with no shadow, a shadow at
sample 0.01 and a shadow at sample 1.0, in one run, interleaved round by round, the ratios to
"no shadow" taken within each round. The candidate is a sandbox started and then stopped: every
comparison's candidate read fails at once (connection refused), which is the shadow's cheapest
case for the candidate and its costliest for the counting, and keeps the candidate's own work
off this machine's two cores.

Run under the machine's heavy lock, after a release build:
    cargo build --release && flock /tmp/storegate-heavy.lock python3 bench/shadow.py
Knobs: BENCH_DURATION (s per run, 8), BENCH_REPS (rounds, 3), BENCH_PORT_BASE (18180; this
script uses the ports from BENCH_PORT_BASE + 40 on), and the other BENCH_* of bench.py.
Prints a table and writes it to bench/out/shadow.md.
"""
import os
import statistics
import sys
import time

os.environ.setdefault("BENCH_DURATION", "8")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

BASE = B.PORT_BASE + 40
PORT = {
    "sandbox": BASE,
    "candidate": BASE + 1,
    "none": BASE + 2,
    "s001": BASE + 3,
    "s1": BASE + 4,
    "none_miss": BASE + 5,
    "s001_miss": BASE + 6,
    "s1_miss": BASE + 7,
}
GATEWAYS = [
    ("none", None, 600),
    ("s001", "0.01", 600),
    ("s1", "1", 600),
    ("none_miss", None, 0),
    ("s001_miss", "0.01", 0),
    ("s1_miss", "1", 0),
]
PATH = "/api/rest/products/1"


def env_for(name, sample, ttl):
    env = {
        "STOREGATE_LISTEN": f"{B.HOST}:{PORT[name]}",
        "STOREGATE_UPSTREAM_URL": f"http://{B.HOST}:{PORT['sandbox']}",
        "STOREGATE_UPSTREAM_TOKEN": B.TOKEN,
        "STOREGATE_ADMIN_KEY": B.ADMIN_KEY,
        "STOREGATE_TOKEN_SECRET": "bench-token-secret",
        "STOREGATE_CACHE_TTL_SECS": str(ttl),
    }
    if sample is not None:
        env.update({
            "STOREGATE_SHADOW_UPSTREAM_URL": f"http://{B.HOST}:{PORT['candidate']}",
            "STOREGATE_SHADOW_UPSTREAM_TOKEN": B.TOKEN,
            "STOREGATE_SHADOW_SAMPLE": sample,
        })
    return env


def main():
    busy = [n for n, p in PORT.items() if not B.port_free(p)]
    if busy:
        sys.exit(f"ports in use: {busy}; set BENCH_PORT_BASE")
    B.OUT.mkdir(parents=True, exist_ok=True)
    for name in ("sandbox", "candidate"):
        B.start(name, [str(B.SANDBOX_BIN), "sandbox", "--listen", f"{B.HOST}:{PORT[name]}",
                       "--products", str(B.PRODUCTS_SMALL)],
                env={"STOREGATE_UPSTREAM_TOKEN": B.TOKEN})
        B.wait_http(f"http://{B.HOST}:{PORT[name]}/__sandbox/stats", timeout=300)
    # The candidate stopped: its port refuses.
    B.stop("candidate")
    for name, sample, ttl in GATEWAYS:
        B.start_gateway(name, env_for(name, sample, ttl))
    for name, _, _ in GATEWAYS:
        B.wait_http(f"http://{B.HOST}:{PORT[name]}/healthz")
        status, _, _ = B.http("GET", f"http://{B.HOST}:{PORT[name]}{PATH}", {"Accept": "application/json"})
        if status != 200:
            sys.exit(f"{name} answered {status}")
    rps = {name: [] for name, _, _ in GATEWAYS}
    p99 = {name: [] for name, _, _ in GATEWAYS}
    for round_ in range(B.REPS):
        order = [g for g in GATEWAYS]
        if round_ % 2:
            order.reverse()
        for name, _, _ in order:
            stats = B.wrk(f"http://{B.HOST}:{PORT[name]}{PATH}", B.DURATION,
                          headers={"Accept": "application/json"})
            if stats["non2xx"] or stats["socket_errors"]:
                sys.exit(f"{name}: {stats['non2xx']} non-2xx, errors {stats['socket_errors']}")
            rps[name].append(stats["rps"])
            p99[name].append(stats["p99"])
            B.log(f"round {round_ + 1} {name}: {stats['rps']:.0f} req/s, p99 {stats['p99']:.2f} ms")
            time.sleep(1)
    # The shadowed gateways' own counts: what they compared (all `error`: the candidate is down).
    counts = {}
    for name in ("s001", "s1"):
        _, _, body = B.http("GET", f"http://{B.HOST}:{PORT[name]}/api/rest/shadow/report",
                            {"Accept": "application/json", "Authorization": f"Bearer {B.ADMIN_KEY}"})
        counts[name] = body[:2000]
    lines = [
        f"Dual run rows, {B.REPS} rounds of {B.DURATION} s, wrk {B.THREADS} threads {B.CONNS} connections, "
        f"guest GET {PATH} JSON; the candidate stopped. Median req/s (p99 ms); ratio: median of each round's "
        "ratio to the gateway without a shadow.",
        "",
        "| row | no shadow | sample 0.01 | ratio | sample 1.0 | ratio |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for label, base in (("hit", ""), ("miss (cache off)", "_miss")):
        none, s001, s1 = (rps[f"none{base}"], rps[f"s001{base}"], rps[f"s1{base}"])
        r001 = statistics.median(a / b for a, b in zip(s001, none))
        r1 = statistics.median(a / b for a, b in zip(s1, none))
        lines.append(
            f"| {label} | {statistics.median(none):.0f} ({statistics.median(p99[f'none{base}']):.2f}) "
            f"| {statistics.median(s001):.0f} ({statistics.median(p99[f's001{base}']):.2f}) | {r001:.3f} "
            f"| {statistics.median(s1):.0f} ({statistics.median(p99[f's1{base}']):.2f}) | {r1:.3f} |")
    table = "\n".join(lines)
    B.log("\n" + table)
    (B.OUT / "shadow.md").write_text(table + "\n")
    for name, text in counts.items():
        B.log(f"{name}'s report: {text[:400]}")


if __name__ == "__main__":
    try:
        main()
    finally:
        B.stop_all()
