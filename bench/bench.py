#!/usr/bin/env python3
"""storegate side by side with nginx: the driver behind bench/run.sh.

Starts, all on 127.0.0.1: the sandbox (`storegate sandbox`, with a generated catalog), a
gateway with its cache, a gateway without it, nginx serving the gateway's bytes as static
files, nginx `proxy_cache` in front of the gateway (the anchors' configurations), and, for a
moment, nginx as a logging proxy to learn which upstream calls one gateway miss makes. Then:

  1. gateway cache hits, GET /api/rest/products/1 as Guest, JSON and XML;
  2. nginx proxy_cache hits in front of the gateway, same URL and bytes;
  3. nginx serving the same bytes as static files;
  4. the miss path: the gateway without cache against the sandbox, and the sandbox called
     directly for the same upstream calls; at one connection, the gateway's own added p50;
  5. coalescing: BENCH_BURST concurrent cold requests for one product, counting the
     sandbox's calls for it;
  6. memory: resident size after reading every generated product (Admin view) through a
     gateway capped at BENCH_CACHE_MAX_BYTES;
  7. two gateways sharing one Redis with the second-level cache on (STOREGATE_REDIS_URL,
     STOREGATE_SHARED_CACHE=1): BENCH_SHARED_PRODUCTS distinct products read through both,
     first one instance then the other, then both at once; the sandbox's product calls per
     distinct product (two unshared instances make 2 by construction; the target is 1);
  8. a signed OAuth 1.0a call's cost against a Bearer one, at one connection, with the SQLite
     store and with a MariaDB store and Redis (bench/signed.py);
  9. rate limits: cache hits with limits off, on, and on across a fleet in Redis, in the same
     rounds; memory under floods of distinct guests and usernames (bench/limits_rows.py).

Row 0, the gzip rows (1g, 3g) and the hits at equal load are bench/edge_rows.py's (issue 23):
the floor (bench/floor.rs), gzip hits against nginx's gzip_static, the p99s when every client
pauses between requests. The gateways run with production defaults (the access log on).

Rows 1-5 use a sandbox with a small generated catalog (BENCH_PRODUCTS_SMALL): the sandbox
answers searches by scanning every product, so with 100,000 products its own time (2-3 ms a
search) would drown the gateway's in row 4. Row 6 uses a second sandbox with BENCH_PRODUCTS;
it reads the Admin view, which costs the sandbox one scan per product instead of two.

Load rows run interleaved, BENCH_REPS rounds, a format's rows in turn, reversed every other
round (edge_rows.in_round_order); the table shows each row's median round.
Every wrk run is bounded by -d and a timeout; every process started here is stopped by PID.
"""

import asyncio
import concurrent.futures
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import edge_rows
from wrk_scripts import lua_fill, lua_sequence
from processes import Processes
from processes import wait_http as shared_wait_http

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
# BENCH_BIN: another build to measure the same way (an earlier commit, for a before/after).
BIN = Path(os.environ.get("BENCH_BIN") or edge_rows.target_dir(ROOT) / "release" / "storegate")
# BENCH_BEFORE: a second build run in the same session, its rows 1j, 1x and 4a interleaved
# with this build's, each next to its counterpart in every round, so that the machine's drift
# (on a shared 2-core VM, nginx's own rows move by 10% between runs) hits both alike.
BEFORE = Path(os.environ["BENCH_BEFORE"]) if os.environ.get("BENCH_BEFORE") else None
# The sandboxes always come from the current build, so that a before/after (BENCH_BIN) puts
# both gateways in front of the very same upstream.
SANDBOX_BIN = edge_rows.target_dir(ROOT) / "release" / "storegate"

DURATION = int(os.environ.get("BENCH_DURATION", "10"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "2"))
REPS = int(os.environ.get("BENCH_REPS", "3"))
THREADS = int(os.environ.get("BENCH_THREADS", "2"))
CONNS = int(os.environ.get("BENCH_CONNECTIONS", "64"))
LATENCY_MS = int(os.environ.get("BENCH_LATENCY_MS", "0"))
PRODUCTS = int(os.environ.get("BENCH_PRODUCTS", "100000"))
PRODUCTS_SMALL = int(os.environ.get("BENCH_PRODUCTS_SMALL", "1000"))
ONLY = set(filter(None, os.environ.get("BENCH_ONLY", "").split(",")))  # development: load,latency,burst,memory,shared,signed,limits
SIGNED_REQUESTS = int(os.environ.get("BENCH_SIGNED_REQUESTS", "5000"))
CACHE_MAX = int(os.environ.get("BENCH_CACHE_MAX_BYTES", str(256 * 1024 * 1024)))
BURST = int(os.environ.get("BENCH_BURST", "1000"))
FILL_MAX_SECS = int(os.environ.get("BENCH_FILL_MAX_SECS", "420"))
PORT_BASE = int(os.environ.get("BENCH_PORT_BASE", "18180"))
SHARED_PRODUCTS = int(os.environ.get("BENCH_SHARED_PRODUCTS", "200"))

TOKEN = "bench-integration-token"
ADMIN_KEY = "bench-admin-key-0123456789"
HOST = "127.0.0.1"

PORTS = {
    name: PORT_BASE + i
    for i, name in enumerate(
        ["sandbox", "gw", "gw_nocache", "gw_mem", "gw_discover", "static", "cache", "logger", "sandbox_big",
         "redis", "gw_shared_a", "gw_shared_b", "gw_before", "gw_before_nocache",
         "floor", "floor_xml", "floor_gz", "gw_signed_sqlite", "gw_signed_mariadb", "mariadb",
         "gw_lim_off", "gw_lim_on", "gw_lim_fleet", "gw_lim_flood"]
    )
}

PROCS = Processes(OUT, ROOT)
processes = PROCS.running  # name -> Popen


def log(text):
    print(text, flush=True)


# ---------------------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------------------


def port_free(port):
    with socket.socket() as s:
        # As the servers do: connections of an earlier run waiting in TIME_WAIT do not count.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
            return True
        except OSError:
            return False


start, stop, stop_all = PROCS.start, PROCS.stop, PROCS.stop_all


def start_gateway(name, env, binary=None):
    """A gateway from BIN, or `binary` (BENCH_BEFORE), in an empty working directory."""
    return PROCS.start_gateway(name, binary or BIN, env)


def wait_redis(port, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection((HOST, port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit(f"redis-server did not answer on port {port}")


def wait_text(url, text, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if text.encode() in response.read():
                    return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit(f"{url} never said {text!r}")


def wait_http(url, timeout=120, headers=None):
    shared_wait_http(url, timeout, headers=headers)


def http(method, url, headers=None, body=None, timeout=30):
    request = urllib.request.Request(url, method=method, headers=headers or {}, data=body)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def rss_parts_mb(pid):
    """A process's resident memory split into its own (anonymous) pages and the mapped files'
    (the binary's code and data, shared with the page cache), in MiB."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan"), float("nan")
    field = lambda name: int(re.search(rf"^{name}:\s+(\d+)", status, re.M).group(1)) / 1024
    return field("RssAnon"), field("RssFile")


def rss_mb(pid):
    """Resident memory of a process and its children (nginx workers), in MiB."""
    total = 0
    pids = [pid]
    try:
        children = subprocess.run(
            ["pgrep", "-P", str(pid)], capture_output=True, text=True, timeout=5
        ).stdout.split()
        pids += [int(c) for c in children]
    except Exception:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def sandbox_stats(name="sandbox"):
    _, _, body = http("GET", f"http://{HOST}:{PORTS[name]}/__sandbox/stats")
    return json.loads(body)


def sandbox_reset(name="sandbox"):
    http("POST", f"http://{HOST}:{PORTS[name]}/__sandbox/stats/reset")


def wanted(section):
    return not ONLY or section in ONLY


def gateway_env(port, sandbox="sandbox", **extra):
    env = {
        "STOREGATE_LISTEN": f"{HOST}:{port}",
        "STOREGATE_UPSTREAM_URL": f"http://{HOST}:{PORTS[sandbox]}",
        "STOREGATE_UPSTREAM_TOKEN": TOKEN,
        "STOREGATE_ADMIN_KEY": ADMIN_KEY,
        "STOREGATE_TOKEN_SECRET": "bench-token-secret",
        # Production defaults: the access log stays on (issue 23), written to the process's
        # log file in bench/out/ by the gateway's log thread.
    }
    env.update({f"STOREGATE_{k.upper()}": str(v) for k, v in extra.items()})
    return env


# ---------------------------------------------------------------------------------------
# nginx (the configurations of shared/reference/anchors.md)
# ---------------------------------------------------------------------------------------

# Tuned as an operator tuning for speed would (so the comparison is against nginx at its
# best): one worker per core, each with its own listening socket (`reuseport`, as the
# gateway's workers), accepting in batches; sendfile, no access log, long keep-alive
# connections, and the open-file cache, so a hit opens no file and stats nothing.
NGINX_COMMON = """
worker_processes 2;
worker_rlimit_nofile 65536;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; multi_accept on; }}
"""

NGINX_HTTP_SPEED = (
    "access_log off; server_tokens off; sendfile on; tcp_nopush on; tcp_nodelay on;\n"
    "  keepalive_requests 1000000; keepalive_timeout 75s;\n"
    "  open_file_cache max=10000 inactive=60s; open_file_cache_valid 60s;\n"
    "  open_file_cache_min_uses 1; open_file_cache_errors on;"
)


def nginx_conf(kind, directory):
    head = NGINX_COMMON.format(dir=directory)
    if kind == "static":
        return head + f"""
http {{
  {NGINX_HTTP_SPEED}
  types {{ application/json json; application/xml xml; }}
  server {{ listen {HOST}:{PORTS['static']} backlog=4096 reuseport; root {OUT}/www; location / {{ }}
    location /gz/ {{ gzip_static on; }} }}
}}
"""
    if kind == "cache":
        # The anchors' proxy_cache setup; the key adds Accept, because the gateway serves
        # JSON and XML at one URL (without it nginx would hand XML to a JSON client).
        return head + f"""
http {{
  {NGINX_HTTP_SPEED}
  proxy_cache_path {directory}/cache levels=1:2 keys_zone=api:10m max_size=256m inactive=10m use_temp_path=off;
  upstream backend {{ server {HOST}:{PORTS['gw']}; keepalive 64; }}
  server {{
    listen {HOST}:{PORTS['cache']} backlog=4096 reuseport;
    location / {{
      proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_cache api; proxy_cache_valid 200 10m;
      proxy_cache_key "$scheme$proxy_host$request_uri$http_accept";
      proxy_cache_lock on;
      proxy_cache_use_stale error timeout updating http_500 http_502 http_503 http_504;
      proxy_cache_background_update on;
      add_header X-Cache $upstream_cache_status;
    }}
  }}
}}
"""
    if kind == "logger":
        return head + f"""
http {{
  log_format calls '$request_method $request_uri';
  access_log {directory}/calls.log calls;
  upstream sandbox {{ server {HOST}:{PORTS['sandbox']}; keepalive 8; }}
  server {{
    listen {HOST}:{PORTS['logger']};
    location / {{ proxy_pass http://sandbox; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $http_host; }}
  }}
}}
"""
    raise ValueError(kind)


def start_nginx(kind):
    directory = OUT / f"nginx-{kind}"
    directory.mkdir(parents=True, exist_ok=True)
    # A cache left by an earlier run (of another build, whose bytes differ) must not answer.
    shutil.rmtree(directory / "cache", ignore_errors=True)
    (directory / "cache").mkdir()
    # Workers run as an unprivileged user: let them write the cache and read the files.
    os.chmod(directory, 0o777)
    os.chmod(directory / "cache", 0o777)
    conf = directory / "nginx.conf"
    conf.write_text(nginx_conf(kind, directory))
    nginx = "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else "nginx"
    return start(
        f"nginx-{kind}",
        [nginx, "-p", str(directory), "-e", str(directory / "error.log"), "-c", str(conf),
         "-g", "daemon off;"],
    )


# ---------------------------------------------------------------------------------------
# wrk
# ---------------------------------------------------------------------------------------

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def to_ms(text):
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not match:
        return float("nan")
    return float(match.group(1)) * UNITS[match.group(2)]


def wrk(url, duration, threads=THREADS, conns=CONNS, headers=None, script=None):
    argv = ["wrk", f"-t{threads}", f"-c{conns}", f"-d{duration}s", "--latency", "--timeout", "5s"]
    for name, value in (headers or {}).items():
        argv += ["-H", f"{name}: {value}"]
    if script:
        argv += ["-s", str(script)]
    argv.append(url)
    result = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 30)
    text = result.stdout
    stats = {"raw": text}
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    stats["rps"] = float(m.group(1)) if m else 0.0
    for pct, key in (("50%", "p50"), ("99%", "p99")):
        m = re.search(rf"^\s+{re.escape(pct)}\s+(\S+)", text, re.M)
        stats[key] = to_ms(m.group(1)) if m else float("nan")
    m = re.search(r"Latency\s+(\S+)", text)
    stats["avg"] = to_ms(m.group(1)) if m else float("nan")
    m = re.search(r"(\d+) requests in", text)
    stats["requests"] = int(m.group(1)) if m else 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    stats["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: (.*)", text)
    stats["socket_errors"] = m.group(1).strip() if m else ""
    return stats


# ---------------------------------------------------------------------------------------
# Row 5: a burst of cold concurrent requests
# ---------------------------------------------------------------------------------------


async def burst(port, path, count, timeout=60):
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: application/json\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    connections = []
    for _ in range(count):
        connections.append(await asyncio.open_connection(HOST, port))
    gate = asyncio.Event()

    async def one(reader, writer):
        await gate.wait()
        writer.write(request)
        await writer.drain()
        data = await reader.read()
        writer.close()
        return data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/1.1") else "?"

    tasks = [asyncio.create_task(one(r, w)) for r, w in connections]
    started = time.time()
    gate.set()
    statuses = await asyncio.wait_for(asyncio.gather(*tasks), timeout)
    return statuses, time.time() - started


# ---------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------


def median_run(runs):
    return sorted(runs, key=lambda r: r["rps"])[len(runs) // 2]


def fmt(value, digits=2):
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    return f"{value:,.{digits}f}"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "www").mkdir(exist_ok=True)
    os.chmod(OUT, 0o755)
    busy = [name for name, port in PORTS.items() if not port_free(port)]
    if busy:
        sys.exit(f"ports in use: {', '.join(f'{n}={PORTS[n]}' for n in busy)}; set BENCH_PORT_BASE")

    cores = os.cpu_count()
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    wrk_version = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split("\n")[0]
    nginx_version = subprocess.run(
        ["/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else "nginx", "-v"],
        capture_output=True, text=True,
    ).stderr.strip()

    log(f"== sandboxes: {PRODUCTS_SMALL} and {PRODUCTS} generated products, {LATENCY_MS} ms added per call")
    for name, count in (("sandbox", PRODUCTS_SMALL), ("sandbox_big", PRODUCTS)):
        start(
            name,
            [str(SANDBOX_BIN), "sandbox", "--listen", f"{HOST}:{PORTS[name]}",
             "--latency-ms", str(LATENCY_MS), "--products", str(count)],
            env={"STOREGATE_UPSTREAM_TOKEN": TOKEN},
        )
    for name in ("sandbox", "sandbox_big"):
        wait_http(f"http://{HOST}:{PORTS[name]}/__sandbox/stats", timeout=300)

    log("== gateways (cache on, cache off)")
    start_gateway("gw", env=gateway_env(PORTS["gw"], cache_ttl_secs=600))
    start_gateway("gw_nocache", env=gateway_env(PORTS["gw_nocache"], cache_ttl_secs=0))
    gateways = ["gw", "gw_nocache"]
    if BEFORE:
        log(f"== the same two from BENCH_BEFORE={BEFORE}")
        start_gateway("gw_before", gateway_env(PORTS["gw_before"], cache_ttl_secs=600), BEFORE)
        start_gateway("gw_before_nocache", gateway_env(PORTS["gw_before_nocache"], cache_ttl_secs=0), BEFORE)
        gateways += ["gw_before", "gw_before_nocache"]
    for name in gateways:
        wait_http(f"http://{HOST}:{PORTS[name]}/healthz")

    product_path = "/api/rest/products/1"
    gw_url = f"http://{HOST}:{PORTS['gw']}{product_path}"
    bodies = {}
    for fmt_name, accept in (("json", "application/json"), ("xml", "application/xml")):
        status, headers, body = http("GET", gw_url, {"Accept": accept})
        if status != 200:
            sys.exit(f"gateway answered {status} for {product_path} ({fmt_name}): {body[:200]!r}")
        bodies[fmt_name] = body
        (OUT / "www" / f"product.{fmt_name}").write_bytes(body)
    os.chmod(OUT / "www", 0o755)
    for f in (OUT / "www").iterdir():
        os.chmod(f, 0o644)

    log("== nginx: static files and proxy_cache in front of the gateway")
    start_nginx("static")
    start_nginx("cache")
    wait_http(f"http://{HOST}:{PORTS['static']}/product.json")
    wait_http(f"http://{HOST}:{PORTS['cache']}/healthz")
    cache_url = f"http://{HOST}:{PORTS['cache']}{product_path}"
    static_url = {f: f"http://{HOST}:{PORTS['static']}/product.{f}" for f in ("json", "xml")}
    for fmt_name, accept in (("json", "application/json"), ("xml", "application/xml")):
        for _ in range(3):
            status, headers, body = http("GET", cache_url, {"Accept": accept})
        if headers.get("X-Cache") != "HIT" or body != bodies[fmt_name]:
            sys.exit(f"nginx proxy_cache does not hit with the gateway's bytes ({fmt_name}): "
                     f"X-Cache {headers.get('X-Cache')!r}, {len(body)} bytes, "
                     f"{'the same' if body == bodies[fmt_name] else 'other'} bytes than the gateway's")
        _, _, body = http("GET", static_url[fmt_name])
        if body != bodies[fmt_name]:
            sys.exit(f"nginx static does not serve the gateway's bytes ({fmt_name})")

    gw_base = f"http://{HOST}:{PORTS['gw']}"
    gzip_headers = {"Accept": "application/json", "Accept-Encoding": "gzip"}
    sizes = {}
    # The floor and the gzip rows are load rows: a run of other sections (a BENCH_BIN of an
    # earlier commit, without compression, for row 8's before and after) skips them.
    if wanted("load"):
        log("== the floor (a bare hyper server with the same bytes) and the gzip list")
        sizes = edge_rows.prepare(gw_base, OUT / "www")
        edge_rows.check_nginx_gzip(f"http://{HOST}:{PORTS['static']}", sizes)
        floor_bin = edge_rows.floor_binary(ROOT)
        for name, file, url, headers in (
            ("floor", "product.json", gw_url, {"Accept": "application/json"}),
            ("floor_xml", "product.xml", gw_url, {"Accept": "application/xml"}),
            ("floor_gz", "gz/list.json.gz", gw_base + edge_rows.LIST_PATH, gzip_headers),
        ):
            head = edge_rows.hit_head(url, headers, OUT / f"{name}.head")
            start(name, [str(floor_bin), f"{HOST}:{PORTS[name]}", str(OUT / "www" / file), str(head)])
            wait_http(f"http://{HOST}:{PORTS[name]}/")
    floor_url = {n: f"http://{HOST}:{PORTS[n]}/" for n in ("floor", "floor_xml", "floor_gz")}
    list_url = gw_base + edge_rows.LIST_PATH
    if sizes:
        log(f"   list of 20: " + ", ".join(f"{c} {n:,} B" for c, n in sizes.items()))

    log("== the upstream calls of one gateway miss (nginx logging proxy)")
    start_nginx("logger")
    wait_http(f"http://{HOST}:{PORTS['logger']}/__sandbox/stats")
    discover_env = gateway_env(PORTS["gw_discover"], cache_ttl_secs=0)
    discover_env["STOREGATE_UPSTREAM_URL"] = f"http://{HOST}:{PORTS['logger']}"
    start_gateway("gw_discover", env=discover_env)
    wait_http(f"http://{HOST}:{PORTS['gw_discover']}/healthz")
    calls_log = OUT / "nginx-logger" / "calls.log"
    calls_log.write_text("")
    http("GET", f"http://{HOST}:{PORTS['gw_discover']}{product_path}", {"Accept": "application/json"})
    time.sleep(0.5)
    calls = [tuple(line.split(" ", 1)) for line in calls_log.read_text().splitlines() if line]
    stop("gw_discover")
    stop("nginx-logger")
    if not calls:
        sys.exit("no upstream call seen for a gateway miss")
    log(f"   {len(calls)} calls: " + "; ".join(f"{m} {u.split('?')[0]}" for m, u in calls))
    sequence_script = lua_sequence(OUT / "sequence.lua", calls, TOKEN)
    single_scripts = [
        lua_sequence(OUT / f"call-{i}.lua", [call], TOKEN) for i, call in enumerate(calls)
    ]

    sandbox_url = f"http://{HOST}:{PORTS['sandbox']}/"
    rows = [
        # A format's floor, gateway and nginx rows run one after the other, so that each
        # round's ratios meet the same moment of the machine (bench/edge_rows.py).
        ("0j", "floor: bare hyper, the same bytes, JSON", floor_url["floor"], {"Accept": "application/json"}, None, "floor"),
        ("1j", "gateway cache hit, JSON", gw_url, {"Accept": "application/json"}, None, "gw"),
        ("2j", "nginx proxy_cache hit, JSON", cache_url, {"Accept": "application/json"}, None, "nginx-cache"),
        ("3j", "nginx static file, JSON", static_url["json"], {}, None, "nginx-static"),
        ("0x", "floor: bare hyper, the same bytes, XML", floor_url["floor_xml"], {"Accept": "application/xml"}, None, "floor_xml"),
        ("1x", "gateway cache hit, XML", gw_url, {"Accept": "application/xml"}, None, "gw"),
        ("2x", "nginx proxy_cache hit, XML", cache_url, {"Accept": "application/xml"}, None, "nginx-cache"),
        ("3x", "nginx static file, XML", static_url["xml"], {}, None, "nginx-static"),
        ("0g", "floor: bare hyper, the gzip list's bytes", floor_url["floor_gz"], gzip_headers, None, "floor_gz"),
        ("1g", "gateway cache hit, 20-product list, gzip", list_url, gzip_headers, None, "gw"),
        ("3g", "nginx gzip_static, the same gzip bytes", f"http://{HOST}:{PORTS['static']}/gz/list.json",
         gzip_headers, None, "nginx-static"),
        ("4a", "gateway miss path (cache off), JSON",
         f"http://{HOST}:{PORTS['gw_nocache']}{product_path}", {"Accept": "application/json"}, None, "gw_nocache"),
        ("4b", f"sandbox direct, the same {len(calls)} calls in turn (per call)",
         sandbox_url, {}, sequence_script, "sandbox"),
    ]
    if BEFORE:
        before_url = f"http://{HOST}:{PORTS['gw_before']}{product_path}"
        twins = {
            "1j": ("1j<", "BENCH_BEFORE cache hit, JSON", before_url, {"Accept": "application/json"}, None, "gw_before"),
            "1x": ("1x<", "BENCH_BEFORE cache hit, XML", before_url, {"Accept": "application/xml"}, None, "gw_before"),
            "4a": ("4a<", "BENCH_BEFORE miss path (cache off), JSON",
                   f"http://{HOST}:{PORTS['gw_before_nocache']}{product_path}", {"Accept": "application/json"},
                   None, "gw_before_nocache"),
        }
        rows = [r for row in rows for r in ([twins[row[0]]] if row[0] in twins else []) + [row]]
    if wanted("load"):
        results = {key: [] for key, *_ in rows}
        upstream = {key: [] for key, *_ in rows}
        rss = {}
        for rep in range(1, REPS + 1):
            for key, title, url, headers, script, server in edge_rows.in_round_order(rows, rep):
                wrk(url, WARMUP, headers=headers, script=script)
                sandbox_reset()
                run = wrk(url, DURATION, headers=headers, script=script)
                calls_made = sum(sandbox_stats().values())
                results[key].append(run)
                upstream[key].append((calls_made, run["requests"]))
                rss[key] = rss_mb(processes[server].pid)
                log(f"   round {rep} {key:>2} {title:<58} {run['rps']:>10,.0f} req/s  "
                    f"p50 {fmt(run['p50'])} ms  p99 {fmt(run['p99'])} ms"
                    + (f"  non-2xx {run['non2xx']}" if run["non2xx"] else "")
                    + (f"  socket errors: {run['socket_errors']}" if run["socket_errors"] else ""))
        log("== hits at equal load: every connection pauses between an answer and its next request")
        paced = edge_rows.run_paced(rows, REPS, wrk, WARMUP, DURATION // 2 or 1, OUT, fmt, log)
        edge_rows.report(ROOT / "bench" / "RESULTS.md", rows, results, paced, sizes, median_run, fmt, log,
                         f"Commit `{commit}`, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
                         f"wrk -t{THREADS} -c{CONNS}, {DURATION} s runs after {WARMUP} s warm-ups, "
                         f"{REPS} interleaved rounds (a format's rows reversed every other round), median round")

    if wanted("load") and BEFORE:
        log(f"== {BIN.name} against BENCH_BEFORE ({BEFORE.name}), req/s: medians, and the median of each "
            f"round's ratio (the two ran next to each other in every round)")
        for key in ("1j", "1x", "4a"):
            now = [r["rps"] for r in results[key]]
            then = [r["rps"] for r in results[key + "<"]]
            paired = statistics.median(a / b for a, b in zip(now, then) if b)
            log(f"   {key}: {statistics.median(then):>10,.0f} before, {statistics.median(now):>10,.0f} now: "
                f"{statistics.median(now) / statistics.median(then):.3f}x; paired by round {paired:.3f}x "
                f"(rounds {', '.join(f'{a / b:.3f}' for a, b in zip(now, then) if b)})")

    if wanted("latency"):
        log("== the miss path at one connection: the gateway's own added latency")
        latency_runs = {"gw": [], "calls": []}
        single = max(3, DURATION // 2)
        for rep in range(1, REPS + 1):
            gw_run = wrk(f"http://{HOST}:{PORTS['gw_nocache']}{product_path}", single, threads=1, conns=1,
                         headers={"Accept": "application/json"})
            call_runs = [wrk(sandbox_url, single, threads=1, conns=1, script=s) for s in single_scripts]
            latency_runs["gw"].append(gw_run)
            latency_runs["calls"].append(call_runs)
            added = gw_run["p50"] - sum(r["p50"] for r in call_runs)
            log(f"   round {rep}: gateway p50 {fmt(gw_run['p50'], 3)} ms, sum of the calls' p50 "
                f"{fmt(sum(r['p50'] for r in call_runs), 3)} ms, added {fmt(added, 3)} ms")
        added_by_round = [
            g["p50"] - sum(r["p50"] for r in c) for g, c in zip(latency_runs["gw"], latency_runs["calls"])
        ]
        added_p50 = statistics.median(added_by_round)
        gw_c1 = sorted(latency_runs["gw"], key=lambda r: r["p50"])[len(latency_runs["gw"]) // 2]
        calls_c1_p50 = statistics.median(sum(r["p50"] for r in c) for c in latency_runs["calls"])
        calls_c1_p99 = statistics.median(sum(r["p99"] for r in c) for c in latency_runs["calls"])

    if wanted("burst"):
        log(f"== coalescing: {BURST} concurrent cold requests for one product")
        # A generated product nobody has read yet.
        target_sku = f"GEN-{max(1, PRODUCTS_SMALL // 2):06d}"
        status, _, body = http("GET", f"http://{HOST}:{PORTS['sandbox']}/rest/default/V1/products/{target_sku}",
                               {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json"})
        if status != 200:
            sys.exit(f"the sandbox has no {target_sku} (BENCH_PRODUCTS_SMALL={PRODUCTS_SMALL})")
        target_id = json.loads(body)["id"]
        sandbox_reset()
        statuses, burst_secs = asyncio.run(burst(PORTS["gw"], f"/api/rest/products/{target_id}", BURST))
        stats = sandbox_stats()
        product_calls = sum(v for k, v in stats.items() if k == f"GET /V1/products/{target_sku}")
        burst_ok = sum(1 for s in statuses if s == "200")
        log(f"   {burst_ok}/{BURST} answered 200 in {burst_secs:.2f}s; sandbox calls: {stats}")

    if wanted("memory"):
        log(f"== memory: every generated product through a gateway capped at {CACHE_MAX} bytes")
        start_gateway("gw_mem", env=gateway_env(PORTS["gw_mem"], sandbox="sandbox_big", cache_ttl_secs=3600, cache_max_bytes=CACHE_MAX))
        wait_http(f"http://{HOST}:{PORTS['gw_mem']}/healthz")
        rss_live = rss_mb(processes["gw_mem"].pid)
        # Ready is after the warm-up, which loads the product index (issue 33): the resident
        # size at ready less the one at live is what the index and the lookups cost, apart
        # from the cache's entries that the fill adds.
        ready_deadline = time.time() + 120
        while True:
            status, _, ready_body = http("GET", f"http://{HOST}:{PORTS['gw_mem']}/readyz")
            if status == 200 or time.time() > ready_deadline:
                break
            time.sleep(0.2)
        m = re.search(rb'"product_ids":\s*(\d+)', ready_body)
        indexed = int(m.group(1)) if m else -1
        status, _, body = http("GET", f"http://{HOST}:{PORTS['sandbox_big']}/rest/default/V1/products/GEN-000001",
                               {"Authorization": f"Bearer {TOKEN}"})
        first_id = json.loads(body)["id"]
        last_id = first_id + PRODUCTS - 1
        fill_script = lua_fill(OUT / "fill.lua", first_id, last_id, ADMIN_KEY)
        rss_before = rss_mb(processes["gw_mem"].pid)
        sandbox_reset("sandbox_big")
        fill_started = time.time()
        wrk(f"http://{HOST}:{PORTS['gw_mem']}/", FILL_MAX_SECS, threads=1, conns=CONNS, script=fill_script)
        fill_secs = time.time() - fill_started
        product_reads = sum(v for k, v in sandbox_stats("sandbox_big").items() if k.startswith("GET /V1/products/GEN-"))
        time.sleep(1)
        _, _, metrics = http("GET", f"http://{HOST}:{PORTS['gw_mem']}/metrics")
        metrics = metrics.decode()

        def metric(name):
            m = re.search(rf"^{name} (\S+)", metrics, re.M)
            return float(m.group(1)) if m else float("nan")

        mem_rss = rss_mb(processes["gw_mem"].pid)
        mem_anon, mem_file = rss_parts_mb(processes["gw_mem"].pid)
        weight = metric("storegate_cache_weight_bytes")
        entries = metric("storegate_cache_entries")
        evictions = metric("storegate_cache_evictions_total")
        served = metric(
            'storegate_http_request_duration_seconds_count\\{route="/api/rest/products/\\{id\\}",'
            'method="GET",status="200",user_type="admin"\\}'
        )
        log(f"   {served:,.0f} products served (200), {product_reads:,} product reads upstream in "
            f"{fill_secs:.0f}s; RSS {mem_rss:.1f} MiB (anonymous {mem_anon:.1f}, files {mem_file:.1f}) "
            f"(at start {rss_before:.1f}: {rss_live:.1f} when live, before the warm-up's {indexed:,} "
            f"product index pairs); cache weight {weight / 2**20:.1f} MiB in {entries:,.0f} entries, "
            f"{evictions:,.0f} evictions")
    if wanted("shared"):
        log(f"== two gateways sharing the second-level cache: {SHARED_PRODUCTS} distinct products each way")
        start("redis", ["redis-server", "--port", str(PORTS["redis"]), "--bind", HOST,
                        "--save", "", "--appendonly", "no"])
        wait_redis(PORTS["redis"])
        for name in ("gw_shared_a", "gw_shared_b"):
            start_gateway(name, env=gateway_env(
                PORTS[name], cache_ttl_secs=600, redis_url=f"redis://{HOST}:{PORTS['redis']}/0", shared_cache=1))
        for name in ("gw_shared_a", "gw_shared_b"):
            wait_http(f"http://{HOST}:{PORTS[name]}/healthz")
            wait_text(f"http://{HOST}:{PORTS[name]}/readyz", '"redis":"up"')
        status, _, body = http("GET", f"http://{HOST}:{PORTS['sandbox']}/rest/default/V1/products/GEN-000001",
                               {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json"})
        first_gen = json.loads(body)["id"]
        # Generated products no other row reads (row 5 reads the middle one).
        offset = 10
        in_turn = range(first_gen + offset, first_gen + offset + SHARED_PRODUCTS)
        at_once = range(in_turn.stop, in_turn.stop + SHARED_PRODUCTS)
        if at_once.stop - first_gen > PRODUCTS_SMALL // 2:
            sys.exit(f"BENCH_SHARED_PRODUCTS={SHARED_PRODUCTS} needs BENCH_PRODUCTS_SMALL >= {4 * SHARED_PRODUCTS + 40}")

        def read(name, product_id):
            status, _, body = http("GET", f"http://{HOST}:{PORTS[name]}/api/rest/products/{product_id}",
                                   {"Accept": "application/json"})
            if status != 200:
                sys.exit(f"{name} answered {status} for product {product_id}: {body[:200]!r}")

        def shared_product_calls():
            return sum(v for k, v in sandbox_stats().items() if k.startswith("GET /V1/products/GEN-"))

        sandbox_reset()
        for product_id in in_turn:
            read("gw_shared_a", product_id)
        for product_id in in_turn:
            read("gw_shared_b", product_id)
        shared_in_turn = shared_product_calls() / SHARED_PRODUCTS
        sandbox_reset()
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda args: read(*args),
                          [(name, pid) for pid in at_once for name in ("gw_shared_a", "gw_shared_b")]))
        shared_at_once = shared_product_calls() / SHARED_PRODUCTS
        _, _, metrics_b = http("GET", f"http://{HOST}:{PORTS['gw_shared_b']}/metrics")
        l2_hits = re.search(rb"^storegate_shared_cache_hits_total (\S+)", metrics_b, re.M)
        l2_hits = float(l2_hits.group(1)) if l2_hits else float("nan")
        log(f"   product calls per distinct product: {shared_in_turn:.2f} in turn, {shared_at_once:.2f} at once; "
            f"second instance's shared-cache hits {l2_hits:,.0f}")
    signed_lines = []
    if wanted("signed"):
        log("== row 8: a signed OAuth 1.0a call against a Bearer one, at one connection")
        if "redis" not in processes:
            start("redis", ["redis-server", "--port", str(PORTS["redis"]), "--bind", HOST,
                            "--save", "", "--appendonly", "no"])
            wait_redis(PORTS["redis"])
        import signed
        signed_lines = signed.measure({
            "log": log, "host": HOST, "ports": PORTS, "out": OUT, "binary": BIN, "reps": REPS,
            "requests": SIGNED_REQUESTS, "admin_key": ADMIN_KEY, "start": start,
            "start_gateway": start_gateway, "gateway_env": gateway_env, "wait_http": wait_http,
        })
        log("\n".join(signed_lines))
    limit_lines, limit_ratios = [], {}
    if wanted("limits"):
        log("== row 9: rate limits on a cache hit (off, on, on across Redis), and floods of distinct clients")
        import limits_rows
        limit_lines, limit_ratios = limits_rows.measure(globals() | {"processes": processes})
        log("\n".join(limit_lines))
    stop_all()
    if ONLY:
        log(f"partial run (BENCH_ONLY={','.join(sorted(ONLY))}): no table written")
        return

    # -----------------------------------------------------------------------------------
    # The table
    # -----------------------------------------------------------------------------------
    med = {key: median_run(runs) for key, runs in results.items()}

    def per_request(key):
        made = sum(c for c, _ in upstream[key])
        requests = sum(r for _, r in upstream[key])
        return made / requests if requests else float("nan")

    def ratio(a, b):
        return med[a]["rps"] / med[b]["rps"] if med[b]["rps"] else float("nan")

    header = "| # | scenario | req/s | p50 ms | p99 ms | × row 2 | × row 3 | upstream calls | RSS MB |"
    lines = [header, "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for key, title, *_ in rows:
        m = med[key]
        fmt_key = key[1]
        r2 = ratio(key, "2" + fmt_key) if key[0] in "13" and fmt_key in "jx" else None
        r3 = ratio(key, "3" + fmt_key) if key[0] in "12" and fmt_key in "jx" else None
        if key == "4a":
            calls_col = f"{per_request(key):.2f} per request"
        elif key == "4b":
            calls_col = f"{len(calls)} per set"
        else:
            calls_col = f"{sum(c for c, _ in upstream[key])}"
        lines.append(
            f"| {key} | {title} | {m['rps']:,.0f} | {fmt(m['p50'])} | {fmt(m['p99'])} | "
            f"{fmt(r2) if r2 is not None else ''} | {fmt(r3) if r3 is not None else ''} | "
            f"{calls_col} | {rss[key]:.0f} |"
        )
    lines.append(
        f"| 4c | gateway miss path at 1 connection, JSON | {gw_c1['rps']:,.0f} | "
        f"{fmt(gw_c1['p50'], 3)} | {fmt(gw_c1['p99'], 3)} |  |  | {len(calls)} per request |  |"
    )
    lines.append(
        f"| 4d | sandbox direct, each of those calls at 1 connection (sum) |  | "
        f"{fmt(calls_c1_p50, 3)} | {fmt(calls_c1_p99, 3)} |  |  | {len(calls)} |  |"
    )
    lines.append(
        f"| 4e | **gateway's own added latency on a miss** (4c − 4d) |  | **{fmt(added_p50, 3)}** |  |  |  |  |  |"
    )
    lines.append(
        f"| 5 | {BURST} concurrent cold requests for one product ({burst_ok} × 200 in "
        f"{burst_secs:.2f} s) |  |  |  |  |  | **{product_calls}** product call(s), "
        f"{sum(stats.values())} in all |  |"
    )
    lines.append(
        f"| 6 | {product_reads:,} distinct products read (Admin) through a gateway capped at {CACHE_MAX / 2**20:.0f} MiB "
        f"(cache {weight / 2**20:.0f} MiB, {entries:,.0f} entries) |  |  |  |  |  | "
        f"{product_reads:,} product reads | **{mem_rss:.0f}** |"
    )
    lines.append(
        f"| 7 | two gateways sharing one Redis (second-level cache on): {SHARED_PRODUCTS} distinct products "
        f"read through both, in turn / at once |  |  |  |  |  | **{shared_in_turn:.2f}** / "
        f"**{shared_at_once:.2f}** product calls per distinct product |  |"
    )
    lines.extend(signed_lines + limit_lines)
    table = "\n".join(lines)

    def check(ok):
        return "met" if ok else "**missed**"

    targets = [
        f"- row 1 ≥ row 2 in req/s and p99 no worse: JSON {ratio('1j', '2j'):.2f}×, p99 "
        f"{fmt(med['1j']['p99'])} vs {fmt(med['2j']['p99'])} ms; XML {ratio('1x', '2x'):.2f}×, p99 "
        f"{fmt(med['1x']['p99'])} vs {fmt(med['2x']['p99'])} ms: "
        + check(ratio("1j", "2j") >= 1 and ratio("1x", "2x") >= 1
                and med["1j"]["p99"] <= med["2j"]["p99"] and med["1x"]["p99"] <= med["2x"]["p99"]),
        f"- row 1 ≥ 0.8 × row 3: JSON {ratio('1j', '3j'):.2f}, XML {ratio('1x', '3x'):.2f}: "
        + check(ratio("1j", "3j") >= 0.8 and ratio("1x", "3x") >= 0.8),
        f"- the gateway adds < 0.3 ms at p50 on a miss: {added_p50:.3f} ms: " + check(added_p50 < 0.3),
        f"- row 5 makes exactly one upstream product call: {product_calls}: " + check(product_calls == 1),
        f"- row 6 at most the cap + 24 MiB ({CACHE_MAX / 2**20 + 24:.0f} MiB, issue 33; issue 5's bound was "
        f"the cap + 64): {mem_rss:.0f} MiB: "
        + check(mem_rss <= CACHE_MAX / 2**20 + 24),
        f"- row 7 one upstream product call per distinct product for two instances: "
        f"{shared_in_turn:.2f} in turn, {shared_at_once:.2f} at once: "
        + check(shared_in_turn <= 1.0 and shared_at_once <= 1.0),
    ] + [f"- row 9 hits with rate limits on ≥ 0.95 × off, in the same rounds: {limit_ratios['9b']:.3f}× "
         f"(instance), {limit_ratios['9c']:.3f}× (fleet): " + check(min(limit_ratios.values()) >= 0.95)] * bool(limit_ratios)
    machine = (f"{cores} cores ({cpu}), {platform.system()} {platform.release()}; "
               f"{wrk_version}; {nginx_version}")
    params = (f"wrk -t{THREADS} -c{CONNS}, {DURATION} s per run after a {WARMUP} s warm-up, "
              f"{REPS} interleaved rounds, median round shown; sandbox latency {LATENCY_MS} ms; "
              f"body {len(bodies['json'])} B JSON / {len(bodies['xml'])} B XML")
    log("")
    log(f"storegate {commit}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    log(f"machine: {machine}")
    log(f"load: {params}")
    log("")
    log(table)
    log("")
    log("\n".join(targets))

    all_runs = ["| round | row | req/s | p50 ms | p99 ms | non-2xx |", "|--:|---|--:|--:|--:|--:|"]
    for key, runs in results.items():
        for i, run in enumerate(runs, 1):
            all_runs.append(f"| {i} | {key} | {run['rps']:,.0f} | {fmt(run['p50'])} | {fmt(run['p99'])} | {run['non2xx']} |")
    results_md = ROOT / "bench" / "RESULTS.md"
    # Everything from bench/instructions.py's section on (instruction counts, and the
    # before/after comparisons below it, made with BENCH_BEFORE) is kept as it is.
    kept = ""
    if results_md.exists():
        previous = results_md.read_text()
        start_kept = "<!-- instructions -->"
        if start_kept in previous:
            kept = "\n" + start_kept + previous.split(start_kept, 1)[1].rstrip("\n") + "\n"
    results_md.write_text(
        "# Benchmark results\n\n"
        "Written by `bench/run.sh` (do not edit by hand). Every figure below comes from the one run "
        "described here (but for the sections from the instruction counts on, which "
        "`bench/instructions.py` and before/after runs write); rows are explained in `bench/bench.py`'s docstring and "
        "the README.\n\n"
        f"- commit: `{commit}`, run at {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n"
        f"- machine: {machine}; wrk, nginx and the gateway share the cores, all on 127.0.0.1\n"
        f"- load: {params}\n"
        f"- upstream calls of one gateway miss: " + "; ".join(f"`{m} {u.split('?')[0]}`" for m, u in calls) + "\n\n"
        + table + "\n\n## Targets (issue 5)\n\n" + "\n".join(targets)
        + "\n\n## Every round\n\n" + "\n".join(all_runs) + "\n" + kept
    )
    readme = ROOT / "README.md"
    text = readme.read_text()
    start_mark, end_mark = "<!-- bench-table -->\n", "<!-- /bench-table -->"
    if start_mark in text and end_mark in text:
        before, rest = text.split(start_mark, 1)
        _, after = rest.split(end_mark, 1)
        summary = (f"{machine}; {params}; commit `{commit}`.\n\n" + table + "\n\n"
                   + "\n".join(targets) + "\n")
        readme.write_text(before + start_mark + summary + end_mark + after)
    log(f"\nwritten to {results_md.relative_to(ROOT)} and README.md")


if __name__ == "__main__":
    try:
        main()
    finally:
        stop_all()
