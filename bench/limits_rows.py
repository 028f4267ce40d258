"""Row 9 of bench/bench.py: what rate limits cost a cache hit, and what millions of clients
cost in memory (issue 34).

  9a. gateway cache hit, GET /api/rest/products/1 as Guest, JSON, limits off;
  9b. the same with STOREGATE_RATE_LIMITS on (a guest limit no run reaches, so every request
      is counted and admitted and carries `RateLimit`), one instance counting alone;
  9c. the same counted across a fleet in Redis (STOREGATE_REDIS_URL): leases of the budget
      refilled in the background, no Redis call per request;
  9d. the per-round ratios 9b/9a and 9c/9a (the rows run next to each other in every round,
      reversed every other one): the target is 0.95 or more;
  9e. memory under a flood of distinct guests (a random `X-Forwarded-For` per request from
      a trusted proxy): resident size before and after, the windows and pools held (bounded
      by the table's cap), and again once the window has passed (state expires);
  9f. the same for distinct usernames on `POST /api/rest/auth/token` (a wrong password each,
      the sign-in guard's windows).

Rows 9a-9c are wrk runs like rows 1-3 (the same -t/-c, durations and rounds).
"""

import re
import statistics
import time

from wrk_scripts import GUEST_FLOOD, USERNAME_FLOOD

LIMITS = "guest=1000000000/60s,customer=1000000000/60s"

def _metrics(http, url):
    _, _, body = http("GET", url)
    text = body.decode()

    def value(name):
        m = re.search(rf"^{re.escape(name)} (\S+)", text, re.M)
        return float(m.group(1)) if m else float("nan")

    return value


def measure(g):
    """Rows 9a-9f: the table's lines and the 9b/9a, 9c/9a ratios. `g` is bench.py's globals
    (its helpers, settings and running processes)."""
    ctx = {
        "log": g["log"], "host": g["HOST"], "ports": g["PORTS"], "http": g["http"], "wrk": g["wrk"],
        "out": g["OUT"], "reps": g["REPS"], "warmup": g["WARMUP"], "duration": g["DURATION"],
        "flood_secs": int(g["os"].environ.get("BENCH_LIMITS_FLOOD_SECS", "30")),
        "start_gateway": g["start_gateway"], "gateway_env": g["gateway_env"], "wait_http": g["wait_http"],
        "wait_text": g["wait_text"], "rss_mb": g["rss_mb"], "pid": lambda name: g["processes"][name].pid,
        "stop": g["stop"],
    }
    if "redis" not in g["processes"]:
        g["start"]("redis", ["redis-server", "--port", str(g["PORTS"]["redis"]), "--bind", g["HOST"],
                             "--save", "", "--appendonly", "no"])
        g["wait_redis"](g["PORTS"]["redis"])
    log, host, ports, http = ctx["log"], ctx["host"], ctx["ports"], ctx["http"]
    wrk, out, reps = ctx["wrk"], ctx["out"], ctx["reps"]
    path = "/api/rest/products/1"
    redis_url = f"redis://{host}:{ports['redis']}/0"
    setups = [
        ("9a", "gateway cache hit, JSON, rate limits off", "gw_lim_off", {}),
        ("9b", "the same, rate limits on, counted by the instance", "gw_lim_on", {"rate_limits": LIMITS}),
        ("9c", "the same, rate limits on, counted across the fleet (Redis)", "gw_lim_fleet",
         {"rate_limits": LIMITS, "redis_url": redis_url}),
    ]
    for _, _, name, extra in setups:
        ctx["start_gateway"](name, env=ctx["gateway_env"](ports[name], cache_ttl_secs=600, **extra))
    for _, _, name, _ in setups:
        ctx["wait_http"](f"http://{host}:{ports[name]}/healthz")
    status, headers, _ = http("GET", f"http://{host}:{ports['gw_lim_fleet']}{path}", {"Accept": "application/json"})
    if status != 200 or "RateLimit" not in headers:
        raise SystemExit(f"row 9c's gateway answered {status} without RateLimit: {headers}")
    ctx["wait_text"](f"http://{host}:{ports['gw_lim_fleet']}/readyz", '"rate_limits":"fleet"')
    runs = {key: [] for key, *_ in setups}
    accept = {"Accept": "application/json"}
    for rep in range(1, reps + 1):
        order = setups if rep % 2 else list(reversed(setups))
        for key, title, name, _ in order:
            url = f"http://{host}:{ports[name]}{path}"
            wrk(url, ctx["warmup"], headers=accept)
            run = wrk(url, ctx["duration"], headers=accept)
            runs[key].append(run)
            log(f"   round {rep} {key} {title:<58} {run['rps']:>10,.0f} req/s  p50 {run['p50']:.2f} ms  "
                f"p99 {run['p99']:.2f} ms" + (f"  non-2xx {run['non2xx']}" if run["non2xx"] else ""))
    lines = []
    median = {}
    for key, title, name, _ in setups:
        m = sorted(runs[key], key=lambda r: r["rps"])[len(runs[key]) // 2]
        median[key] = m
        lines.append(f"| {key} | {title} | {m['rps']:,.0f} | {m['p50']:.2f} | {m['p99']:.2f} |  |  |"
                     f" {sum(r['non2xx'] for r in runs[key])} non-2xx |  |")
    ratios = {}
    for key in ("9b", "9c"):
        per_round = [a["rps"] / b["rps"] for a, b in zip(runs[key], runs["9a"]) if b["rps"]]
        ratios[key] = statistics.median(per_round)
        log(f"   {key}/9a by round: " + ", ".join(f"{r:.3f}" for r in per_round) + f"; median {ratios[key]:.3f}")
    lines.append(f"| 9d | **hits with limits on ÷ off, median of the rounds' ratios** (target ≥ 0.95) |  |"
                 f" **9b {ratios['9b']:.3f}×, 9c {ratios['9c']:.3f}×** |  |  |  |  |  |")

    log("== row 9e-9f: a flood of distinct guests, then of distinct usernames (memory stays bounded)")
    flood_secs = ctx["flood_secs"]
    flood = "gw_lim_flood"
    ctx["start_gateway"](flood, env=ctx["gateway_env"](
        ports[flood], cache_ttl_secs=600, rate_limits="guest=100/10s", trusted_proxies=host))
    ctx["wait_http"](f"http://{host}:{ports[flood]}/healthz")
    metrics_url = f"http://{host}:{ports[flood]}/metrics"
    http("GET", f"http://{host}:{ports[flood]}{path}", accept)
    rss_start = ctx["rss_mb"](ctx["pid"](flood))
    script = out / "guest-flood.lua"
    script.write_text(GUEST_FLOOD)
    run = wrk(f"http://{host}:{ports[flood]}/", flood_secs, script=script)
    value = _metrics(http, metrics_url)
    guests = run["requests"]
    windows, pools = value("storegate_rate_limit_windows"), value("storegate_rate_limit_pools")
    rss_flood = ctx["rss_mb"](ctx["pid"](flood))
    log(f"   {guests:,} requests from random addresses in {flood_secs} s ({run['rps']:,.0f} req/s); "
        f"windows {windows:,.0f}, pools {pools:,.0f}; RSS {rss_start:.1f} -> {rss_flood:.1f} MiB")
    time.sleep(14)
    value = _metrics(http, metrics_url)
    windows_after, pools_after = value("storegate_rate_limit_windows"), value("storegate_rate_limit_pools")
    rss_after = ctx["rss_mb"](ctx["pid"](flood))
    log(f"   a window (10 s) and more later: windows {windows_after:,.0f}, pools {pools_after:,.0f}; RSS {rss_after:.1f} MiB")
    lines.append(f"| 9e | {guests:,} guest reads from random addresses in {flood_secs} s (`guest=100/10s`): windows / pools "
                 f"held {windows:,.0f} / {pools:,.0f} (cap 262,144), {windows_after:,.0f} / {pools_after:,.0f} 14 s later |"
                 f" {run['rps']:,.0f} |  |  |  |  |  | **{rss_start:.0f} → {rss_flood:.0f} → {rss_after:.0f}** |")

    script = out / "username-flood.lua"
    script.write_text(USERNAME_FLOOD)
    rss_start = ctx["rss_mb"](ctx["pid"](flood))
    run = wrk(f"http://{host}:{ports[flood]}/", flood_secs, script=script)
    value = _metrics(http, metrics_url)
    windows = value("storegate_rate_limit_windows")
    rss_flood = ctx["rss_mb"](ctx["pid"](flood))
    log(f"   {run['requests']:,} sign-ins of random usernames in {flood_secs} s ({run['rps']:,.0f} req/s); "
        f"windows {windows:,.0f}; RSS {rss_start:.1f} -> {rss_flood:.1f} MiB")
    lines.append(f"| 9f | {run['requests']:,} failed sign-ins of random usernames from random addresses in {flood_secs} s "
                 f"(`STOREGATE_SIGNIN_LIMIT` 10/300s): windows held {windows:,.0f} (cap 262,144) | {run['rps']:,.0f} |"
                 f"  |  |  |  |  | **{rss_start:.0f} → {rss_flood:.0f}** |")
    for name in ("gw_lim_off", "gw_lim_on", "gw_lim_fleet", flood):
        ctx["stop"](name)
    return lines, ratios
