#!/usr/bin/env python3
"""Instructions a request costs the gateway, counted by callgrind: a benchmark that a busy
machine does not disturb.

Wall-clock rows (bench/run.sh) need a quiet machine; the number of instructions the gateway
executes to answer a request does not depend on what else runs. This script starts, all on
127.0.0.1:

- one sandbox (`storegate sandbox --products N`, from the current binary, not measured), the
  upstream of every gateway below, so every binary gets the very same upstream answers;
- for each binary (the current one and, with `--baseline PATH`, a baseline) and each path,
  a gateway with one worker (`STOREGATE_WORKERS=1`) under
  `valgrind --tool=callgrind --instr-atstart=no`:
  - hit:  cache on (`STOREGATE_CACHE_TTL_SECS=600`), guest GET /api/rest/products/1 as JSON,
          repeated over keep-alive connections: every measured request is a cache hit;
  - miss: cache off (`STOREGATE_CACHE_TTL_SECS=0`), the same request: every one runs the
          whole miss path, upstream calls included.

For each gateway: instrumentation is switched on (`callgrind_control -i on`) once it is up,
a warm-up runs, then each round zeroes the counters (`-z`), sends N requests one after
another round-robin over the keep-alive connections, and dumps (`--dump`): the dump's total
divided by N is the round's instructions per request (everything the gateway process ran
meanwhile: the request itself, the runtime's polling, timers, any background task). Every
answer is checked (200, the same body every time, `X-Cache: HIT` on every hit and never on
a miss) and the sandbox's call count is reported per request, so that both binaries are
seen to do the same work.

Prints the median round per path and binary side by side with the ratio; with
`--write-results` also writes that table into bench/RESULTS.md (section "Instructions per
request (callgrind)", between markers that bench/bench.py keeps when it rewrites the file).
The dump files stay in bench/out/instructions/ for `callgrind_annotate`.

Every process started here is stopped by its PID; every wait is bounded, and the whole run
by --timeout.
"""

import argparse
import datetime
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import processes as processes_mod

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "instructions"
HOST = "127.0.0.1"
TOKEN = "bench-integration-token"
ADMIN_KEY = "bench-admin-key-0123456789"
PATH = "/api/rest/products/1"
ACCEPT = "application/json"
ACCEPT_SENT = ACCEPT  # --accept
START_MARK = "<!-- instructions -->"
END_MARK = "<!-- /instructions -->"

PROCS = processes_mod.Processes(OUT, ROOT, log_suffix=".log")
deadline = float("inf")


def log(text):
    print(text, flush=True)


def left(limit):
    """Seconds a wait may take: `limit`, or what is left of the whole run if less."""
    remaining = deadline - time.time()
    if remaining <= 0:
        raise TimeoutError("the run took longer than --timeout")
    return min(limit, remaining)


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_http(url, limit, process):
    processes_mod.wait_http(url, left(limit), process)


def sandbox_call(port, method, path):
    request = urllib.request.Request(f"http://{HOST}:{port}{path}", method=method)
    with urllib.request.urlopen(request, timeout=left(30)) as response:
        return response.read()


def sandbox_calls(port):
    """Calls the sandbox has served since its last reset, all endpoints together."""
    stats = json.loads(sandbox_call(port, "GET", "/__sandbox/stats"))
    return sum(v for v in stats.values() if isinstance(v, (int, float)))


def callgrind_control(*args):
    result = subprocess.run(
        ["callgrind_control", *args], capture_output=True, text=True, timeout=left(120)
    )
    if result.returncode != 0:
        raise RuntimeError(f"callgrind_control {' '.join(args)}: {result.stdout}{result.stderr}")
    return result.stdout


def dump_total(path):
    """Instructions (Ir) a callgrind dump file counts."""
    summary = None
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
        if line.startswith("summary:"):
            summary = int(line.split()[1])
    if summary is None:
        raise RuntimeError(f"{path}: no totals in the dump")
    return summary


class Client:
    """N keep-alive connections to one gateway, used in turn, each answer checked."""

    def __init__(self, port, connections):
        self.connections = [http.client.HTTPConnection(HOST, port, timeout=120) for _ in range(connections)]
        self.next = 0
        self.body = None

    def get(self, expect_hit):
        connection = self.connections[self.next % len(self.connections)]
        self.next += 1
        connection.request("GET", PATH, headers={"Accept": ACCEPT_SENT})
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"GET {PATH}: {response.status} {body[:200]!r}")
        if self.body is None:
            self.body = body
        elif body != self.body:
            raise RuntimeError(f"GET {PATH}: the body changed between requests")
        x_cache = response.getheader("X-Cache")
        if expect_hit is not None and (x_cache == "HIT") != expect_hit:
            raise RuntimeError(f"GET {PATH}: X-Cache {x_cache!r}, expected {'a hit' if expect_hit else 'no hit'}")
        if response.getheader("Connection", "").lower() == "close":
            raise RuntimeError("the gateway closed a keep-alive connection")

    def close(self):
        for connection in self.connections:
            connection.close()


def measure(label, binary, mode, args, sandbox_port, extra_env=None):
    """Median instructions per request of `binary` on `mode`'s path, and the rounds;
    `extra_env` (`--env`) is set for it besides the variables below."""
    name = f"{label}-{mode}"
    port = free_port()
    out_prefix = OUT / f"callgrind.{name}"
    for old in OUT.glob(f"callgrind.{name}*"):
        old.unlink()
    env = {
        "STOREGATE_LISTEN": f"{HOST}:{port}",
        "STOREGATE_UPSTREAM_URL": f"http://{HOST}:{sandbox_port}",
        "STOREGATE_UPSTREAM_TOKEN": TOKEN,
        "STOREGATE_ADMIN_KEY": ADMIN_KEY,
        "STOREGATE_TOKEN_SECRET": "bench-token-secret",
        "STOREGATE_WORKERS": "1",
        "STOREGATE_CACHE_TTL_SECS": "600" if mode == "hit" else "0",
        # The access line is on by default since issue 15, and measured so since issue 23
        # (`--access-log on`, the production default; its writer thread's instructions count
        # too, as everything the process runs does). `--access-log off` gives counts
        # comparable with the runs before; older binaries ignore the variable.
        "STOREGATE_ACCESS_LOG": args.access_log,
        **(extra_env or {}),
    }
    process = PROCS.start_gateway(
        name,
        binary,
        env,
        wrapper=["valgrind", "--tool=callgrind", "--instr-atstart=no",
                 f"--callgrind-out-file={out_prefix}.out"],
    )
    client = None
    try:
        wait_http(f"http://{HOST}:{port}/healthz", 300, process)
        callgrind_control("-i", "on", str(process.pid))
        client = Client(port, args.connections)
        expect_hit = None if mode == "hit" else False  # the first hit request fills the cache
        for i in range(args.warmup):
            client.get(expect_hit if i == 0 else (mode == "hit"))
        count = args.hits if mode == "hit" else args.misses
        rounds = []
        for r in range(1, args.rounds + 1):
            sandbox_call(sandbox_port, "POST", "/__sandbox/stats/reset")
            callgrind_control("-z", str(process.pid))
            for _ in range(count):
                if time.time() > deadline:
                    raise TimeoutError("the run took longer than --timeout")
                client.get(mode == "hit")
            before = set(OUT.glob(f"callgrind.{name}.out*"))
            callgrind_control(f"--dump=round-{r}", str(process.pid))
            dumps = sorted(set(OUT.glob(f"callgrind.{name}.out*")) - before, key=lambda p: p.stat().st_mtime)
            if not dumps:
                raise RuntimeError(f"{name}: callgrind wrote no dump for round {r}")
            calls = sandbox_calls(sandbox_port)
            rounds.append({"ir": dump_total(dumps[-1]) / count, "upstream": calls / count, "dump": dumps[-1]})
            log(f"   {name} round {r}: {rounds[-1]['ir']:,.0f} instructions/request, "
                f"{rounds[-1]['upstream']:.2f} upstream calls/request ({dumps[-1].name})")
        return statistics.median(r["ir"] for r in rounds), rounds, count
    finally:
        if client is not None:
            client.close()
        PROCS.stop(name, grace=30)


def label_of(binary, given):
    if given:
        return given
    if binary.resolve() == (ROOT / "target" / "release" / "storegate").resolve():
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=ROOT).stdout.strip() or "current"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, cwd=ROOT).stdout.strip()
        return commit + ("+changes" if dirty else "")
    return binary.name


def write_results(section):
    results_md = ROOT / "bench" / "RESULTS.md"
    text = results_md.read_text() if results_md.exists() else "# Benchmark results\n"
    block = f"{START_MARK}\n{section}{END_MARK}"
    if START_MARK in text and END_MARK in text:
        before, rest = text.split(START_MARK, 1)
        _, after = rest.split(END_MARK, 1)
        text = before + block + after
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    results_md.write_text(text)
    log(f"written to {results_md.relative_to(ROOT)}")


def main():
    global deadline, ACCEPT_SENT
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--access-log", choices=("on", "off"), default="on",
                        help="the gateway's access log (on: the production default)")
    parser.add_argument("--binary", type=Path,
                        default=Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release" / "storegate",
                        help="the binary to measure (default: target/release/storegate)")
    parser.add_argument("--baseline", type=Path, help="a baseline binary, measured the same way")
    parser.add_argument("--label", help="the binary's name in the table (default: git commit)")
    parser.add_argument("--baseline-label", help="the baseline's name (default: its file name)")
    parser.add_argument("--hits", type=int, default=5000, help="measured hits per round (5000)")
    parser.add_argument("--misses", type=int, default=1000, help="measured misses per round (1000)")
    parser.add_argument("--warmup", type=int, default=100, help="requests before measuring (100)")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds; the median is shown (3)")
    parser.add_argument("--connections", type=int, default=4, help="keep-alive connections (4)")
    parser.add_argument("--products", type=int, default=1000, help="the sandbox's generated catalog (1000)")
    parser.add_argument("--timeout", type=int, default=1800, help="bound on the whole run, s (1800)")
    parser.add_argument("--accept", default=ACCEPT,
                        help="the requests' Accept header (application/json; application/xml for XML hits)")
    parser.add_argument("--paths", default="hit,miss",
                        help="the paths to measure, of hit and miss (hit,miss); a quick look at one path")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="a variable for the measured binary only, not the baseline (repeatable): "
                             "the same build with a setting on against it off (--baseline the same path)")
    parser.add_argument("--write-results", action="store_true",
                        help="write the table into bench/RESULTS.md")
    args = parser.parse_args()
    extra_env = dict(item.split("=", 1) for item in args.env if "=" in item)
    if len(extra_env) != len(args.env):
        sys.exit("--env: KEY=VALUE")
    deadline = time.time() + args.timeout
    ACCEPT_SENT = args.accept
    modes = [m for m in ("hit", "miss") if m in args.paths.split(",")]
    if not modes:
        sys.exit("--paths: hit, miss or both")
    if min(args.hits, args.misses, args.rounds, args.connections) < 1 or args.warmup < 1:
        sys.exit("--hits, --misses, --rounds, --connections and --warmup must be at least 1")
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing: apt-get install -y valgrind")
    binaries = []
    if args.baseline:
        binaries.append((label_of(args.baseline, args.baseline_label), args.baseline, {}))
    binaries.append((label_of(args.binary, args.label), args.binary, extra_env))
    for _, binary, _ in binaries:
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary}: not an executable (build it: cargo build --release --bin storegate)")
    if len({label for label, _, _ in binaries}) != len(binaries):
        sys.exit("the two binaries have the same label: pass --label / --baseline-label")
    OUT.mkdir(parents=True, exist_ok=True)

    sandbox_port = free_port()
    log(f"== sandbox ({args.products} generated products) on {HOST}:{sandbox_port}, not measured")
    sandbox = PROCS.start("sandbox", [str(args.binary), "sandbox", "--listen", f"{HOST}:{sandbox_port}",
                                "--products", str(args.products)], {"STOREGATE_UPSTREAM_TOKEN": TOKEN})
    wait_http(f"http://{HOST}:{sandbox_port}/__sandbox/stats", 300, sandbox)

    results = {}
    for label, binary, env in binaries:
        for mode in modes:
            log(f"== {label}: {mode} path under callgrind ({binary})")
            results[(label, mode)] = measure(label, binary, mode, args, sandbox_port, env)
    PROCS.stop_all(grace=30)

    labels = [label for label, _, _ in binaries]
    header = "| path | " + " | ".join(f"`{label}` instructions/request" for label in labels)
    rule = "|---|" + "--:|" * len(labels)
    if len(labels) == 2:
        header += " | ratio | upstream calls/request |"
        rule += "--:|--:|"
    else:
        header += " | upstream calls/request |"
        rule += "--:|"
    lines = [header, rule]
    kind = "XML" if "xml" in args.accept else "JSON"
    for mode, what in (("hit", f"1 · cache hit, guest GET /api/rest/products/1 {kind}"),
                       ("miss", "4 · miss path (cache off), the same request")):
        if mode not in modes:
            continue
        medians = [results[(label, mode)][0] for label in labels]
        row = f"| {what} | " + " | ".join(f"{m:,.0f}" for m in medians)
        if len(labels) == 2:
            row += f" | {medians[1] / medians[0]:.3f}"
        upstream = " / ".join(f"{statistics.median(r['upstream'] for r in results[(label, mode)][1]):.2f}"
                              for label in labels)
        lines.append(row + f" | {upstream} |")
    spread = []
    for (label, mode), (median, rounds, count) in results.items():
        values = [r["ir"] for r in rounds]
        spread.append(f"`{label}` {mode}: {count} requests a round, rounds "
                      + ", ".join(f"{v:,.0f}" for v in values)
                      + f" (spread {(max(values) - min(values)) / median * 100:.2f}%)")
    table = "\n".join(lines)
    now = datetime.datetime.now(datetime.timezone.utc)
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    log("")
    log(table)
    log("")
    log("\n".join(f"- {s}" for s in spread))
    log(f"\ndumps for callgrind_annotate: {OUT.relative_to(ROOT)}/callgrind.<label>-<path>.out.*")

    if args.write_results:
        section = (
            "## Instructions per request (callgrind)\n\n"
            "Written by `bench/instructions.py --write-results`. These are **instruction counts** "
            "(callgrind's Ir: everything the gateway process executed while serving the measured "
            "requests, divided by their number), not wall-clock time: they do not depend on the "
            "machine's load, so they compare two builds on a busy machine, but they see neither "
            "cache misses nor waiting. The wall-clock rows above (1 and 4 in particular) must "
            "be re-run on a quiet machine to judge time.\n\n"
            f"- run at {now:%Y-%m-%d %H:%M} UTC, {valgrind}; one gateway worker "
            f"(`STOREGATE_WORKERS=1`), {args.connections} keep-alive connections used in turn, "
            f"{args.warmup} warm-up requests, {args.rounds} rounds, median round shown; "
            f"sandbox with {args.products} generated products, the same one for every gateway\n"
            + "".join(f"- {s}\n" for s in spread) + "\n"
            + table + "\n"
        )
        write_results(section)


if __name__ == "__main__":
    try:
        main()
    finally:
        PROCS.stop_all(grace=30)
