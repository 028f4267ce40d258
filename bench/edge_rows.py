"""The mobile edge's rows of bench/bench.py (issue 23): the floor, gzip hits, sizes saved.

- Row 0 (0j, 0x, 0g): the floor, `bench/floor.rs` (the `bench_floor` example): a bare hyper
  server answering the gateway's hit from memory, its body and its header fields
  (`hit_head`), one runtime per core as the gateway. Hits are measured against it: target
  at least 0.85x.
- Row 1g: gateway cache hits of a 20-product list (Guest, JSON) with `Accept-Encoding: gzip`:
  the gzip variant the gateway made when it filled the entry.
- Row 3g: nginx serving those same gzip bytes as a static file with `gzip_static on` (the
  tuned static server of row 3, location `/gz/`), to the same request.
- Sizes: the list's bytes in identity, gzip, br and zstd as the gateway sends them.

Ratios to the floor and to nginx are **paired**: each round runs a format's floor, gateway,
nginx proxy_cache and nginx static rows one after the other (bench.py's row order), and a
ratio is the median over rounds of that round's ratio. On this shared 2-core machine one row
moves by up to 25% between rounds (the floor's XML ran at 106,736 and 132,131 req/s in one
run), so the ratio of two medians taken a minute apart measured the machine's drift as much
as the servers; a round's pair meets the same moment. The median rounds' own figures stay in
the table, and every round is listed.

Two things about the order and the load (docs/decisions/measuring-the-edge.md):
- **Order.** Within a round a format's rows run one after another, and every other round in
  the reverse order (`in_round_order`). Some hand runs put the gateway at 0.80-0.84x the
  floor after it and 0.95-1.03x before it, others showed no such pattern; either way, a
  fixed order would hand any drift of that kind to the same side in every round, and
  alternating costs nothing.
- **Equal load** (`run_paced`). At saturation (wrk's 64 connections without a pause, with
  the servers and wrk on two cores) p99 is how long the scheduler leaves a runnable thread
  waiting: the floor, the least work a request can cost, has the worst p99 of all (7.9 ms
  in every round), and a server's p99 rises with its own req/s. So hits are run a second
  time with every connection pausing PACE_MS between an answer and its next request (wrk's
  `delay`): the same clients asking at about the same rate of every server, below any
  server's capacity, where p99 is the time a request costs and waits. Both p99s are
  reported; the equal-load one answers "p99 no worse than nginx".

Kept apart from bench.py (which is near its size limit); bench.py calls these.
"""

import statistics

import os
import urllib.request
from pathlib import Path

LIST_PATH = "/api/rest/products?limit=20"
CODINGS = ("gzip", "br", "zstd")
START, END = "<!-- edge -->", "<!-- /edge -->"


def target_dir(root):
    return Path(os.environ.get("CARGO_TARGET_DIR") or root / "target")


def floor_binary(root):
    return target_dir(root) / "release" / "examples" / "bench_floor"


def fetch(url, headers):
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        # The message itself, not a dict: its look-ups ignore case (the gateway's names are
        # lower case, nginx's capitalised).
        return response.status, response.headers, response.read()


def prepare(gw_base, www):
    """Reads the list through the gateway in every coding (twice: the second a hit), writes
    the gzip bytes for nginx's gzip_static and the floor, and returns the sizes."""
    sizes = {}
    bodies = {}
    for coding in ("identity",) + CODINGS:
        headers = {"Accept": "application/json", "Accept-Encoding": coding}
        for _ in range(2):
            status, response_headers, body = fetch(gw_base + LIST_PATH, headers)
        sent = response_headers.get("Content-Encoding", "identity")
        if status != 200 or sent != coding or response_headers.get("X-Cache") != "HIT":
            raise SystemExit(f"the gateway's {coding} list: status {status}, Content-Encoding {sent}, "
                             f"X-Cache {response_headers.get('X-Cache')}")
        sizes[coding] = len(body)
        bodies[coding] = body
    gz = www / "gz"
    gz.mkdir(exist_ok=True)
    (gz / "list.json").write_bytes(bodies["identity"])
    (gz / "list.json.gz").write_bytes(bodies["gzip"])
    os.chmod(gz, 0o755)
    for f in gz.iterdir():
        os.chmod(f, 0o644)
    return sizes


# Fields hyper writes itself (the floor's hyper too), or that belong to one connection.
OWN_FIELDS = {"content-length", "date", "connection", "transfer-encoding", "keep-alive"}


def hit_head(url, headers, path):
    """The header fields of the gateway's hit of `url`, one `name: value` line each in the
    order sent, written to `path` for the floor (bench/floor.rs) to send as they are."""
    for _ in range(2):
        status, response_headers, _ = fetch(url, headers)
    if status != 200 or response_headers.get("X-Cache") != "HIT":
        raise SystemExit(f"no gateway hit to copy the head of: {url} {status} {response_headers.get('X-Cache')}")
    lines = [f"{name.lower()}: {value}" for name, value in response_headers.items()
             if name.lower() not in OWN_FIELDS]
    path.write_text("\n".join(lines) + "\n")
    return path


def check_nginx_gzip(static_base, sizes):
    status, headers, body = fetch(static_base + "/gz/list.json", {"Accept-Encoding": "gzip"})
    if status != 200 or headers.get("Content-Encoding") != "gzip" or len(body) != sizes["gzip"]:
        raise SystemExit(f"nginx gzip_static does not serve the gateway's gzip bytes: {status}, "
                         f"{headers.get('Content-Encoding')}, {len(body)} bytes")


def size_lines(sizes):
    identity = sizes["identity"]
    lines = ["| coding | bytes | × identity | saved |", "|---|--:|--:|--:|"]
    for coding in ("identity",) + CODINGS:
        n = sizes[coding]
        lines.append(f"| {coding} | {n:,} | {n / identity:.3f} | {identity - n:,} B ({1 - n / identity:.0%}) |")
    return lines


PACE_MS = 1


def in_round_order(rows, rep):
    """The rows of round `rep`: each format's rows (keys `0j`, `1j`, ...: grouped by the
    second character) in the listed order in odd rounds, reversed in even ones."""
    groups = {}
    for row in rows:
        groups.setdefault(row[0][1], []).append(row)
    return [row for group in groups.values() for row in (group if rep % 2 else group[::-1])]


def run_paced(rows, reps, wrk, warmup, duration, out, fmt, log):
    """The floor, the gateway and nginx proxy_cache (rows 0-2, JSON and XML) at equal load:
    every connection pauses PACE_MS between an answer and its next request. Returns row key
    -> wrk runs, a round each."""
    script = out / "pace.lua"
    script.write_text(f"-- each connection waits {PACE_MS} ms between an answer and its next request\n"
                      f"function delay() return {PACE_MS} end\n")
    rows = [r for r in rows if r[0][0] in "012" and r[0][1] in "jx" and len(r[0]) == 2]
    results = {key: [] for key, *_ in rows}
    for rep in range(1, reps + 1):
        for key, title, url, headers, *_ in in_round_order(rows, rep):
            wrk(url, warmup, headers=headers, script=script)
            run = wrk(url, duration, headers=headers, script=script)
            results[key].append(run)
            log(f"   paced round {rep} {key} {title:<46} {run['rps']:>9,.0f} req/s  p50 {fmt(run['p50'])} ms  "
                f"p99 {fmt(run['p99'])} ms" + (f"  non-2xx {run['non2xx']}" if run["non2xx"] else ""))
    return results


def paired(results, a, b):
    """The median over rounds of row `a`'s req/s over row `b`'s in the same round."""
    ratios = [x["rps"] / y["rps"] for x, y in zip(results[a], results[b]) if y["rps"]]
    return statistics.median(ratios) if ratios else float("nan")


def median_p99(runs):
    return statistics.median(r["p99"] for r in runs)


def targets(med, results, paced, fmt):
    """The issue's targets: ratios paired by round (`results`: row key -> wrk runs); p99s at
    equal load (`paced`: the median over rounds of each row's p99) and, reported beside them,
    the median rounds' p99s at saturation (`med`)."""

    def ratio(a, b):
        return paired(results, a, b)

    def check(ok):
        return "met" if ok else "**missed**"

    out = []
    for f, name in (("j", "JSON"), ("x", "XML")):
        floor, proxy = ratio("1" + f, "0" + f), ratio("1" + f, "2" + f)
        p99, p99_nginx = median_p99(paced["1" + f]), median_p99(paced["2" + f])
        under = sum(a["p99"] <= b["p99"] for a, b in zip(paced["1" + f], paced["2" + f]))
        sat, sat_nginx = med["1" + f]["p99"], med["2" + f]["p99"]
        out.append(f"- {name} hits ≥ 0.85 × the floor: {floor:.2f}: {check(floor >= 0.85)}")
        out.append(f"- {name} hits ≥ 1.2 × nginx proxy_cache: {proxy:.2f}: {check(proxy >= 1.2)}")
        out.append(f"- {name} hits' p99 no worse than nginx proxy_cache's, at equal load: {fmt(p99)} vs "
                   f"{fmt(p99_nginx)} ms (no worse in {under} of {len(paced['1' + f])} rounds): "
                   + check(p99 <= p99_nginx)
                   + f"; at saturation (the scheduler's tail, module docs): {fmt(sat)} vs {fmt(sat_nginx)} ms")
    g_static, g_floor = ratio("1g", "3g"), ratio("1g", "0g")
    out.append(f"- gzip list hits against nginx gzip_static serving the same bytes: {g_static:.2f}×; "
               f"against the floor answering them: {g_floor:.2f}×")
    return out


def write_section(results_md, text):
    """Puts `text` between the edge markers of RESULTS.md, keeping everything else."""
    previous = results_md.read_text() if results_md.exists() else "# Benchmark results\n"
    section = f"{START}\n{text.rstrip()}\n{END}"
    if START in previous and END in previous:
        before, rest = previous.split(START, 1)
        _, after = rest.split(END, 1)
        results_md.write_text(before + section + after)
        return
    # After instructions.py's section: bench.py's full run keeps everything from that section
    # on when it rewrites the file, and instructions.py rewrites only between its markers.
    marker = "<!-- /instructions -->"
    if marker in previous:
        before, after = previous.split(marker, 1)
        results_md.write_text(before + marker + "\n\n" + section + "\n" + after)
    else:
        results_md.write_text(previous.rstrip("\n") + "\n\n" + section + "\n")


def paced_lines(rows, paced, fmt):
    lines = [f"| # | scenario, every connection pausing {PACE_MS} ms | req/s (median) | p50 ms (median) | "
             "p99 ms (median) | p99 every round |", "|---|---|--:|--:|--:|---|"]
    for key, title, *_ in rows:
        if key in paced:
            runs = paced[key]
            lines.append(f"| {key} | {title} | {statistics.median(r['rps'] for r in runs):,.0f} | "
                         f"{fmt(statistics.median(r['p50'] for r in runs))} | {fmt(median_p99(runs))} | "
                         + ", ".join(fmt(r["p99"]) for r in runs) + " |")
    return lines


def report(results_md, rows, results, paced, sizes, median_run, fmt, log, run_line):
    """The edge section from the load rounds: printed, and written into RESULTS.md."""
    med = {key: median_run(runs) for key, runs in results.items()}
    lines = ["| # | scenario | req/s (median round) | p50 ms | p99 ms | × floor (paired) | × nginx proxy_cache (paired) |",
             "|---|---|--:|--:|--:|--:|--:|"]
    for key, title, *_ in rows:
        if key[0] not in "0123" or key.endswith("<"):
            continue
        m = med[key]
        vs_floor = paired(results, key, "0" + key[1]) if key[0] != "0" else None
        vs_proxy = paired(results, key, "2" + key[1]) if key[0] == "1" and key[1] in "jx" else None
        lines.append(f"| {key} | {title} | {m['rps']:,.0f} | {fmt(m['p50'])} | {fmt(m['p99'])} | "
                     f"{fmt(vs_floor) if vs_floor else ''} | {fmt(vs_proxy) if vs_proxy else ''} |")
    rounds = ["| round | row | req/s | p50 ms | p99 ms | non-2xx |", "|--:|---|--:|--:|--:|--:|"]
    for key, runs in results.items():
        if key[0] in "0123" and not key.endswith("<"):
            for i, run in enumerate(runs, 1):
                rounds.append(f"| {i} | {key} | {run['rps']:,.0f} | {fmt(run['p50'])} | "
                              f"{fmt(run['p99'])} | {run['non2xx']} |")
    text = "\n\n".join([
        "## The mobile edge (issue 23): hits against the floor and nginx, gzip, sizes",
        run_line + "; the gateway with production defaults (access log on, written by its log "
        "thread to bench/out/gw.out). Written by bench/bench.py's load rows (`BENCH_ONLY=load` "
        "rewrites this section alone).",
        "\n".join(lines),
        "The × columns are the median over rounds of each round's ratio (module docs of "
        "bench/edge_rows.py); req/s, p50 and p99 are the median round's.",
        "\n".join(targets(med, results, paced, fmt)),
        f"Hits at equal load (module docs of bench/edge_rows.py): the same wrk, each connection "
        f"pausing {PACE_MS} ms between an answer and its next request; {len(next(iter(paced.values())))} "
        "rounds, each row's median:",
        "\n".join(paced_lines(rows, paced, fmt)),
        "Sizes of the 20-product list (Guest, JSON) as the gateway sends them:",
        "\n".join(size_lines(sizes)),
        "Every round:",
        "\n".join(rounds),
    ])
    log("")
    log(text)
    write_section(results_md, text)
