"""Row 8 of bench/bench.py: what an OAuth 1.0a signed call costs (issue 21).

The same cached read, `GET /api/rest/products/1` as Admin, at one keep-alive connection:

  8a. with `Authorization: Bearer <admin key>` (a digest compare);
  8b. signed with HMAC-SHA1 by an imported admin access token, the OAuth store the embedded
      SQLite file and nonces claimed in it (one write per call): the single machine's setup;
  8c. the same, the store a MariaDB shared by a fleet and nonces in Redis (the fleet's setup;
      only when `mariadbd` is installed);
  8d. the signed call's added p50 over 8a, for 8b and 8c.

Every request is signed before the clock starts (a fresh nonce each), so the client's own
signing is not measured; the rows differ only in what the gateway does. At one connection
the figures are latencies, not throughput: the gateway's verification (base string, HMAC,
the verified-credential cache, the nonce claim) is what 8d shows.
"""

import http.client
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

ADMIN_TOKEN = ("0" * 31 + "a", "0" * 31 + "b")
CONSUMER = ("bench" + "c" * 27, "bench" + "d" * 27)


def _tables(directory):
    """The original's oauth_consumer / oauth_token tables as `mysql --batch` writes them."""
    consumers = directory / "consumers.tsv"
    consumers.write_text(
        "entity_id\tname\tkey\tsecret\tcallback_url\trejected_callback_url\n"
        f"1\tbench\t{CONSUMER[0]}\t{CONSUMER[1]}\tNULL\tNULL\n"
    )
    tokens = directory / "tokens.tsv"
    tokens.write_text(
        "entity_id\tconsumer_id\tadmin_id\tcustomer_id\ttype\ttoken\tsecret\trevoked\tauthorized\n"
        f"1\t1\t1\tNULL\taccess\t{ADMIN_TOKEN[0]}\t{ADMIN_TOKEN[1]}\t0\t1\n"
    )
    return consumers, tokens


def _import(binary, env, directory):
    consumers, tokens = _tables(directory)
    subprocess.run(
        [str(binary), "oauth", "import", "--consumers", str(consumers), "--tokens", str(tokens)],
        env=env, check=True, capture_output=True, timeout=60,
    )


def _signed_headers(url, count):
    from oauthlib.oauth1 import Client

    headers = []
    for _ in range(count):
        client = Client(
            CONSUMER[0], client_secret=CONSUMER[1],
            resource_owner_key=ADMIN_TOKEN[0], resource_owner_secret=ADMIN_TOKEN[1],
        )
        _, signed, _ = client.sign(url, http_method="GET")
        headers.append({"Authorization": signed["Authorization"], "Accept": "application/json"})
    return headers


def _run(host, port, path, headers):
    """Sends each prepared header once over one connection: req/s, p50, p99 (ms), non-200s."""
    connection = http.client.HTTPConnection(host, port, timeout=10)
    latencies, failures = [], 0
    began = time.perf_counter()
    for header in headers:
        start = time.perf_counter()
        connection.request("GET", path, headers=header)
        response = connection.getresponse()
        response.read()
        latencies.append((time.perf_counter() - start) * 1000)
        failures += response.status != 200
    elapsed = time.perf_counter() - began
    connection.close()
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50": statistics.median(latencies),
        "p99": latencies[int(len(latencies) * 0.99) - 1],
        "non200": failures,
    }


def _mariadb(directory, port, start, log):
    """A MariaDB for row 8c, or None when it is not installed."""
    server = shutil.which("mariadbd") or ("/usr/sbin/mariadbd" if Path("/usr/sbin/mariadbd").exists() else None)
    if not server or not shutil.which("mariadb-install-db"):
        log("   row 8c skipped: mariadb-server is not installed")
        return None
    data = directory / "mariadb"
    shutil.rmtree(data, ignore_errors=True)
    subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}",
                    "--auth-root-authentication-method=normal", "--skip-test-db", "--user=root"],
                   check=True, capture_output=True, timeout=120)
    socket = directory / "mariadb.sock"
    start("mariadb", [server, "--no-defaults", f"--datadir={data}", f"--port={port}",
                      "--bind-address=127.0.0.1", f"--socket={socket}", "--skip-name-resolve",
                      "--skip-log-bin", "--user=root"])
    sql = ("CREATE DATABASE IF NOT EXISTS storegate; "
           "CREATE USER IF NOT EXISTS 'bench'@'127.0.0.1' IDENTIFIED BY 'bench-pw'; "
           "GRANT ALL ON storegate.* TO 'bench'@'127.0.0.1';")
    for _ in range(300):
        done = subprocess.run(["mariadb", "--no-defaults", f"--socket={socket}", "-u", "root", "-e", sql],
                              capture_output=True)
        if done.returncode == 0:
            return f"mysql://bench:bench-pw@127.0.0.1:{port}/storegate"
        time.sleep(0.1)
    raise SystemExit("MariaDB did not start for row 8c")


def measure(ctx):
    """Rows 8a-8d. `ctx` holds bench.py's helpers and settings (see the call there)."""
    log, host, ports = ctx["log"], ctx["host"], ctx["ports"]
    try:
        import oauthlib  # noqa: F401  (the signing client of rows 8b and 8c)
    except ImportError:
        log("   row 8 skipped: python3 -m pip install requests-oauthlib")
        return []
    out = ctx["out"] / "signed"
    out.mkdir(parents=True, exist_ok=True)
    path = "/api/rest/products/1"
    count = ctx["requests"]
    setups = [("8b", "OAuth HMAC-SHA1, SQLite store (nonce written per call)", "gw_signed_sqlite", {})]
    # BENCH_SIGNED_MARIADB=0 leaves 8c out: a build from before the shared store (a
    # BENCH_BIN for the before and after of 8b) has no STOREGATE_DATABASE_URL.
    if os.environ.get("BENCH_SIGNED_MARIADB", "1") == "0":
        log("   row 8c skipped: BENCH_SIGNED_MARIADB=0")
        url = None
    else:
        url = _mariadb(out, ports["mariadb"], ctx["start"], log)
    if url:
        setups.append(("8c", "OAuth HMAC-SHA1, MariaDB store, nonces in Redis", "gw_signed_mariadb",
                       {"database_url": url, "redis_url": f"redis://{host}:{ports['redis']}/0"}))
    for _, _, name, extra in setups:
        data = out / name
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir(parents=True)
        env = ctx["gateway_env"](ports[name], cache_ttl_secs=600, data_dir=str(data), **extra)
        _import(ctx["binary"], env, data)
        ctx["start_gateway"](name, env=env)
        ctx["wait_http"](f"http://{host}:{ports[name]}/healthz")
    rows = {}
    runs = {key: [] for key in ["8a"] + [s[0] for s in setups]}
    for rep in range(1, ctx["reps"] + 1):
        bearer = [{"Authorization": f"Bearer {ctx['admin_key']}", "Accept": "application/json"}] * count
        _run(host, ports["gw"], path, bearer[:200])
        runs["8a"].append(_run(host, ports["gw"], path, bearer))
        for key, _, name, _ in setups:
            signed = _signed_headers(f"http://{host}:{ports[name]}{path}", count + 200)
            _run(host, ports[name], path, signed[:200])
            runs[key].append(_run(host, ports[name], path, signed[200:]))
        log(f"   round {rep}: " + ", ".join(f"{k} p50 {r[-1]['p50']:.3f} ms" for k, r in runs.items()))
    for key, results in runs.items():
        rows[key] = sorted(results, key=lambda r: r["p50"])[len(results) // 2]
    titles = {"8a": "Admin product read, Bearer key, 1 connection (cache hit)"}
    titles.update({key: f"the same read, {title}, 1 connection" for key, title, _, _ in setups})
    lines = []
    for key, run in rows.items():
        lines.append(f"| {key} | {titles[key]} | {run['rps']:,.0f} | {run['p50']:.3f} | {run['p99']:.3f} |"
                     f"  |  | {'' if not run['non200'] else str(run['non200']) + ' non-200'} |  |")
    added = "; ".join(f"{key}: {rows[key]['p50'] - rows['8a']['p50']:+.3f} ms" for key, *_ in setups)
    lines.append(f"| 8d | **a signed call's added p50** over 8a |  | **{added}** |  |  |  |  |  |")
    return lines
