#!/usr/bin/env bash
# Hostile clients against the release gateway, on loopback, bounded in time (issue 12).
#
# Builds the release binary, starts the sandbox alone (so its memory is not the gateway's),
# a gateway in front of it, and a second gateway with a low descriptor limit (256) for the
# "past the cap" attack, then runs bench/hostile.py, which prints one table. Every process
# started here is stopped by its PID at the end.
#
# The gateways run with the default limits except the idle timeout, 5 s instead of 75 s so
# that the idle attack fits in a short run. Knobs: HOSTILE_DURATION (s per attack, 10),
# HOSTILE_PORT_BASE (18280); other arguments go to hostile.py (--help).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== building the release binary" >&2
cargo build --release --locked --bin storegate >&2
bin="${CARGO_TARGET_DIR:-target}/release/storegate"

# 1,000 attacking connections need more descriptors than the default 1,024.
ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true

base="${HOSTILE_PORT_BASE:-18280}"
token="hostile-token-$RANDOM$RANDOM"
admin="hostile-admin-$RANDOM$RANDOM"
logs="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

STOREGATE_UPSTREAM_TOKEN="$token" "$bin" sandbox --listen "127.0.0.1:$((base + 1))" \
    >"$logs/sandbox.log" 2>&1 &
pids+=($!)
gateway() {
    exec env STOREGATE_LISTEN="127.0.0.1:$1" \
        STOREGATE_UPSTREAM_URL="http://127.0.0.1:$((base + 1))" \
        STOREGATE_UPSTREAM_TOKEN="$token" STOREGATE_ADMIN_KEY="$admin" \
        STOREGATE_IDLE_TIMEOUT_SECS=5 RUST_LOG=warn "$bin"
}
gateway "$base" >"$logs/gateway.log" 2>&1 &
gateway_pid=$!
pids+=("$gateway_pid")
(ulimit -n 256 && gateway "$((base + 2))") >"$logs/capped.log" 2>&1 &
pids+=($!)

for port in "$((base + 1))" "$base" "$((base + 2))"; do
    for _ in $(seq 100); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2)" \
            2>/dev/null && break
        sleep 0.1
    done
done

python3 bench/hostile.py --url "http://127.0.0.1:$base" --pid "$gateway_pid" \
    --admin-key "$admin" --capped-url "http://127.0.0.1:$((base + 2))" \
    --duration "${HOSTILE_DURATION:-10}" "$@"
echo "(logs: $logs)" >&2
