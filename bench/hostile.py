#!/usr/bin/env python3
"""Hostile clients against a running storegate, on loopback, bounded in time (issue 12).

Runs one attack after another and prints what held: the gateway's resident memory and open
descriptors (read from /proc/PID), how many hot products are still served from the cache,
and /healthz latency measured while each attack runs.

Attacks: slowloris (heads that never end), silent and idle keep-alive connections, a
cache-buster flood (?_=N on hot products), parallel large image uploads, header abuse
(duplicate Authorization, too many or too large headers, a long URI, garbage, a stalled
body), and connections past the cap of a gateway started with a low descriptor limit.

Standard library only. Usually started by bench/hostile.sh, which builds the release binary
and starts the sandbox and the gateways; see --help for running it against your own.
"""

import argparse
import asyncio
import base64
import os
import re
import struct
import sys
import time
import zlib

LOOPBACK = ("127.0.0.1", "::1", "localhost")


# --------------------------------------------------------------------------------------
# Measuring the gateway
# --------------------------------------------------------------------------------------


class Process:
    def __init__(self, pid):
        self.pid = pid

    def rss_mb(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def fds(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))


class Watch:
    """Samples RSS, descriptors and /healthz latency while an attack runs."""

    def __init__(self, proc, host, port):
        self.proc, self.host, self.port = proc, host, port
        self.rss, self.fds, self.health, self.health_failures = [], [], [], 0
        self._stop = asyncio.Event()

    async def _sample(self):
        while not self._stop.is_set():
            self.rss.append(self.proc.rss_mb())
            self.fds.append(self.proc.fds())
            await asyncio.sleep(0.05)

    async def _healthz(self):
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                status, _, _ = await asyncio.wait_for(
                    request(self.host, self.port, "GET", "/healthz"), 5
                )
                if status == 200:
                    self.health.append((time.monotonic() - started) * 1000)
                else:
                    self.health_failures += 1
            except Exception:
                self.health_failures += 1
            await asyncio.sleep(0.2)

    async def __aenter__(self):
        self.before = (self.proc.rss_mb(), self.proc.fds())
        self._tasks = [asyncio.create_task(self._sample()), asyncio.create_task(self._healthz())]
        return self

    async def __aexit__(self, *exc):
        self._stop.set()
        await asyncio.gather(*self._tasks)
        self.after = (self.proc.rss_mb(), self.proc.fds())

    def row(self, name, result):
        h = sorted(self.health) or [float("nan")]
        p50 = h[len(h) // 2]
        return (
            f"| {name} | {self.before[0]:.0f} / {max(self.rss or [0]):.0f} / {self.after[0]:.0f} "
            f"| {self.before[1]} / {max(self.fds or [0])} / {self.after[1]} "
            f"| {p50:.1f} / {h[-1]:.1f} ({len(self.health)} ok, {self.health_failures} failed) "
            f"| {result} |"
        )


# --------------------------------------------------------------------------------------
# A minimal HTTP/1.1 client (keep-alive, exact bytes on the wire)
# --------------------------------------------------------------------------------------


async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return status, headers, body


async def request(host, port, method, path, headers=None, body=b"", timeout=30):
    """One request on its own connection."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(raw_request(method, path, headers, body, close=True))
        await writer.drain()
        return await asyncio.wait_for(read_response(reader), timeout)
    finally:
        writer.close()


def raw_request(method, path, headers=None, body=b"", close=False):
    lines = [f"{method} {path} HTTP/1.1", "Host: gateway"]
    for k, v in (headers or []):
        lines.append(f"{k}: {v}")
    if body or method in ("POST", "PUT"):
        lines.append(f"Content-Length: {len(body)}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def closed_within(reader, limit):
    """Seconds until the peer closes (or None if still open after `limit`)."""
    started = time.monotonic()
    try:
        while True:
            chunk = await asyncio.wait_for(reader.read(4096), limit - (time.monotonic() - started))
            if not chunk:
                return time.monotonic() - started
    except (asyncio.TimeoutError, ValueError):
        return None
    except ConnectionError:
        return time.monotonic() - started


# --------------------------------------------------------------------------------------
# Attacks
# --------------------------------------------------------------------------------------


async def slowloris(args, host, port):
    """Heads that never end: a header line every 2 s."""
    conns = []
    for _ in range(args.connections):
        try:
            conns.append(await asyncio.open_connection(host, port))
        except OSError:
            break
    for _, w in conns:
        w.write(b"GET /api/rest/products/1 HTTP/1.1\r\nHost: gateway\r\n")

    async def trickle(reader, writer):
        started = time.monotonic()
        # A little past the attack's time, so closes at the header timeout are seen.
        while time.monotonic() - started < args.duration + 3:
            try:
                writer.write(b"X-Slow: 1\r\n")
                await writer.drain()
            except ConnectionError:
                return time.monotonic() - started
            t = await closed_within(reader, 2.0)
            if t is not None:
                return time.monotonic() - started
        writer.close()
        return None

    closed = await asyncio.gather(*(trickle(r, w) for r, w in conns))
    done = sorted(t for t in closed if t is not None)
    return (
        f"{len(conns)} opened, {len(done)} closed by the gateway"
        + (f" after {done[0]:.1f}-{done[-1]:.1f} s" if done else "")
    )


async def silent_and_idle(args, host, port):
    """Connections that send nothing, and keep-alive ones idle after one answer."""
    silent, idle = [], []
    for i in range(args.connections):
        try:
            r, w = await asyncio.open_connection(host, port)
        except OSError:
            break
        if i % 2:
            w.write(raw_request("GET", "/healthz"))
            await w.drain()
            await read_response(r)
            idle.append((r, w, time.monotonic()))
        else:
            silent.append((r, w, time.monotonic()))
    limit = args.duration + 3

    async def closed_after(reader, since):
        t = await closed_within(reader, limit)
        return None if t is None else time.monotonic() - since

    s, i = await asyncio.gather(
        asyncio.gather(*(closed_after(r, t) for r, _, t in silent)),
        asyncio.gather(*(closed_after(r, t) for r, _, t in idle)),
    )
    for _, w, _ in silent + idle:
        w.close()

    def say(label, times, n):
        done = sorted(t for t in times if t is not None)
        span = f" after {done[0]:.1f}-{done[-1]:.1f} s" if done else ""
        return f"{label}: {len(done)}/{n} closed{span}"

    return say("silent", s, len(silent)) + "; " + say("idle after an answer", i, len(idle))


async def hot_products(host, port, ids):
    """How many of `ids` are served as cache hits."""
    hits = 0
    for pid in ids:
        status, headers, _ = await request(
            host, port, "GET", f"/api/rest/products/{pid}", [("Accept", "application/json")]
        )
        hits += status == 200 and headers.get("x-cache") == "HIT"
    return hits


async def metric(host, port, name):
    _, _, body = await request(host, port, "GET", "/metrics")
    total = 0.0
    for line in body.decode().splitlines():
        if line.startswith(name):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def cache_buster_flood(args, host, port):
    # The hot products: the first ones a shopper can see.
    ids = []
    for pid in range(1, 30):
        status, _, _ = await request(host, port, "GET", f"/api/rest/products/{pid}", [("Accept", "application/json")])
        if status == 200:
            ids.append(pid)
        if len(ids) == 5:
            break
    await hot_products(host, port, ids)
    entries_before = await metric(host, port, "storegate_cache_entries")
    sent = 0

    async def worker(n):
        nonlocal sent
        reader, writer = await asyncio.open_connection(host, port)
        started, i = time.monotonic(), 0
        while time.monotonic() - started < args.duration:
            pid = ids[i % len(ids)]
            writer.write(
                raw_request("GET", f"/api/rest/products/{pid}?_={n}-{i}", [("Accept", "application/json")])
            )
            await writer.drain()
            await read_response(reader)
            i += 1
        sent += i
        writer.close()

    await asyncio.gather(*(worker(n) for n in range(args.flood_workers)))
    calls_before = await metric(host, port, "storegate_upstream_call_duration_seconds_count")
    kept = await hot_products(host, port, ids)
    calls_after = await metric(host, port, "storegate_upstream_call_duration_seconds_count")
    entries_after = await metric(host, port, "storegate_cache_entries")
    return (
        f"{sent} busted reads; hot products kept {kept}/{len(ids)}, "
        f"{calls_after - calls_before:.0f} upstream calls to read them; "
        f"cache entries {entries_before:.0f} -> {entries_after:.0f}"
    )


def png(size_bytes):
    """A valid PNG (a 1000 x 1000 grey image whose IDAT is padded with an ancillary chunk)."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    width = height = 1000
    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    body = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
    body += chunk(b"IDAT", zlib.compress(raw, 9))
    filler = size_bytes - len(body) - 24
    if filler > 0:
        body += chunk(b"zzZz", os.urandom(filler))
    return body + chunk(b"IEND", b"")


async def parallel_uploads(args, host, port, admin_key):
    image = base64.b64encode(png(args.upload_mb * 1024 * 1024 * 3 // 4)).decode()
    body = ('{"file_mime_type":"image/png","file_content":"' + image + '"}').encode()
    del image
    headers = [
        ("Authorization", f"Bearer {admin_key}"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
    ]

    async def upload():
        try:
            status, _, _ = await request(host, port, "POST", "/api/rest/products/1/images", headers, body, 120)
            return status
        except Exception as e:  # noqa: BLE001 - reported, not raised
            return type(e).__name__

    statuses = await asyncio.gather(*(upload() for _ in range(args.uploads)))
    counts = {}
    for s in statuses:
        counts[s] = counts.get(s, 0) + 1
    return f"{args.uploads} x {len(body) / 1e6:.1f} MB bodies at once: statuses {counts}"


async def header_abuse(args, host, port, admin_key):
    results = []

    async def probe(label, payload, timeout=15):
        reader, writer = await asyncio.open_connection(host, port)
        started = time.monotonic()
        try:
            writer.write(payload)
            await writer.drain()
            status, headers, body = await asyncio.wait_for(read_response(reader), timeout)
            api = b'"messages"' in body or b"<messages>" in body
            rid = "x-request-id" in headers
            results.append(
                f"{label}: {status}{' API body' if api else ' bare'}{' +id' if rid else ''}"
                f" ({time.monotonic() - started:.1f} s)"
            )
        except Exception as e:  # noqa: BLE001
            results.append(f"{label}: closed ({type(e).__name__})")
        finally:
            writer.close()

    json_accept = [("Accept", "application/json")]
    await probe(
        "two Authorization",
        raw_request(
            "GET", "/api/rest/products/1",
            json_accept + [("Authorization", f"Bearer {admin_key}"), ("Authorization", "Bearer x")],
            close=True,
        ),
    )
    await probe(
        "120 headers",
        raw_request("GET", "/api/rest/products", json_accept + [(f"X-H{i}", "1") for i in range(120)], close=True),
    )
    await probe("9 KB URI", raw_request("GET", "/api/rest/products?q=" + "a" * 9000, json_accept, close=True))
    await probe("40 KB header", raw_request("GET", "/api/rest/products", json_accept + [("X-Big", "a" * 40000)], close=True))
    await probe("100 KB header", raw_request("GET", "/api/rest/products", json_accept + [("X-Big", "a" * 100000)], close=True))
    await probe("garbage request line", b"\x16\x03\x01 not http\r\n\r\n")
    stalled = raw_request(
        "POST", "/api/rest/products",
        json_accept + [("Authorization", f"Bearer {admin_key}"), ("Content-Type", "application/json")],
    ).replace(b"Content-Length: 0", b"Content-Length: 1000") + b'{"sku":'
    await probe("stalled body", stalled, timeout=args.duration + 20)
    return "; ".join(results)


async def past_the_cap(args, host, port):
    """Against a gateway started with a low descriptor limit."""
    conns, refused = [], 0
    started = time.monotonic()
    for _ in range(args.cap_connections):
        try:
            conns.append(await asyncio.open_connection(host, port))
        except OSError:
            refused += 1
    closed = await asyncio.gather(*(closed_within(r, 0.5) for r, _ in conns))
    at_once = sum(1 for t in closed if t is not None)
    took = time.monotonic() - started
    t0 = time.monotonic()
    try:
        status, _, _ = await request(host, port, "GET", "/healthz", timeout=5)
        health = f"/healthz {status} in {(time.monotonic() - t0) * 1000:.0f} ms"
    except Exception as e:  # noqa: BLE001
        health = f"/healthz refused at once ({type(e).__name__}, {(time.monotonic() - t0) * 1000:.0f} ms)"
    for _, w in conns:
        w.close()
    await asyncio.sleep(0.5)
    refused_metric = await metric(host, port, "storegate_connections_refused_total")
    return (
        f"{len(conns)} opened in {took:.1f} s, {at_once} closed at once by the gateway "
        f"(connections_refused_total {refused_metric:.0f}); while full: {health}"
    )


# --------------------------------------------------------------------------------------


async def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="gateway base, e.g. http://127.0.0.1:18280")
    p.add_argument("--pid", type=int, required=True, help="the gateway's process id (for RSS and fds)")
    p.add_argument("--admin-key", required=True)
    p.add_argument("--capped-url", help="a second gateway started with a low descriptor limit")
    p.add_argument("--duration", type=float, default=10, help="seconds per attack")
    p.add_argument("--connections", type=int, default=1000)
    p.add_argument("--flood-workers", type=int, default=32)
    p.add_argument("--uploads", type=int, default=10)
    p.add_argument("--upload-mb", type=int, default=15, help="size of each upload body")
    p.add_argument("--cap-connections", type=int, default=400)
    p.add_argument("--only", help="comma-separated attack names")
    args = p.parse_args()

    m = re.match(r"http://([^/:]+|\[[^\]]+\]):(\d+)", args.url)
    host, port = m.group(1).strip("[]"), int(m.group(2))
    if host not in LOOPBACK:
        sys.exit("loopback only: refusing to attack " + host)
    proc = Process(args.pid)

    attacks = [
        ("slowloris", lambda: slowloris(args, host, port)),
        ("silent + idle", lambda: silent_and_idle(args, host, port)),
        ("cache-buster flood", lambda: cache_buster_flood(args, host, port)),
        ("parallel uploads", lambda: parallel_uploads(args, host, port, args.admin_key)),
        ("header abuse", lambda: header_abuse(args, host, port, args.admin_key)),
    ]
    if args.capped_url:
        cm = re.match(r"http://([^/:]+):(\d+)", args.capped_url)
        chost, cport = cm.group(1), int(cm.group(2))
        if chost not in LOOPBACK:
            sys.exit("loopback only")
        attacks.append(("past the cap", lambda: past_the_cap(args, chost, cport)))
    only = set(args.only.split(",")) if args.only else None

    print(f"storegate hostile clients: {args.url}, pid {args.pid}, {args.duration:.0f} s per attack, "
          f"{os.cpu_count()} cores")
    print()
    print("| attack | RSS MB before / peak / after | fds before / peak / after | /healthz ms p50 / max during | what held |")
    print("|---|--:|--:|--:|---|")
    for name, run in attacks:
        if only and name not in only:
            continue
        async with Watch(proc, host, port) as watch:
            result = await run()
        print(watch.row(name, result), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
