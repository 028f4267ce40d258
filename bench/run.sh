#!/usr/bin/env bash
# storegate side by side with nginx, on loopback, in one run (issue 5).
#
# Installs nginx and wrk from Debian when missing, builds the release binary, then hands
# over to bench/bench.py, which starts the sandbox, the gateways and nginx (all on
# 127.0.0.1), drives them with wrk for bounded times, rows interleaved, prints one table and
# writes it to bench/RESULTS.md. Every process it starts is stopped by its PID at the end.
#
# Knobs (environment): BENCH_DURATION (s per load run, 10), BENCH_REPS (interleaved rounds,
# 3), BENCH_THREADS/BENCH_CONNECTIONS (wrk, 2/64), BENCH_LATENCY_MS (added to every sandbox
# answer, 0), BENCH_PRODUCTS (generated catalog, 100000), BENCH_CACHE_MAX_BYTES (cap of the
# memory row, 268435456), BENCH_BURST (cold concurrent requests, 1000),
# BENCH_SHARED_PRODUCTS (distinct products of the two-instance row, 200), BENCH_BEFORE (a
# second build whose rows 1j, 1x and 4a run next to this one's in every round), BENCH_PORT_BASE
# (18180), BENCH_SIGNED_REQUESTS (signed calls per round of row 8, 5000; row 8c needs
# mariadb-server), BENCH_ONLY (some sections only, no table: load, latency, burst, memory,
# shared, signed).
set -euo pipefail
cd "$(dirname "$0")/.."

need_install=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_install+=(nginx)
command -v wrk >/dev/null 2>&1 || need_install+=(wrk)
command -v python3 >/dev/null 2>&1 || need_install+=(python3)
command -v curl >/dev/null 2>&1 || need_install+=(curl)
command -v redis-server >/dev/null 2>&1 || need_install+=(redis-server)
if [ ${#need_install[@]} -gt 0 ]; then
    echo "== installing ${need_install[*]} from Debian"
    # Debian starts a freshly installed nginx on port 80 of every address; a policy-rc.d
    # that refuses keeps it from starting at all (our own nginx runs on loopback only).
    policy=/usr/sbin/policy-rc.d
    created_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' > "$policy"
        chmod +x "$policy"
        created_policy=1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_install[@]}" >/dev/null
    if [ "$created_policy" = 1 ]; then rm -f "$policy"; fi
fi
export PATH="$PATH:/usr/sbin"

echo "== building the release binary and the floor server (bench/floor.rs)"
cargo build --release --locked --bin storegate --example bench_floor

# 1,000 concurrent connections need more descriptors than the default 1,024.
ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true

exec python3 bench/bench.py "$@"
