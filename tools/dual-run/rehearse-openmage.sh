#!/bin/bash
# The rehearsal: OpenMage (live) serving, a sandbox seeded from it as the candidate.
# The store of ../shared/openmage/ (its seeded OAuth consumer and admin token), read through a
# gateway that serves from it, with a sandbox seeded from it (`storegate sandbox --seed-from`) as
# the candidate. Signs Jane in with her password (a write: her store token is replaced), so run it
# holding `flock /tmp/openmage.lock` and reset the store after. Writes report.json in $OUT.
set -u
BIN=$(realpath "${STOREGATE_BIN:-target/debug/storegate}")
K=$(python3 -c "print('k'*32)"); S=$(python3 -c "print('s'*32)")
T=$(python3 -c "print('admintoken'.ljust(32,'a'))"); TS=$(python3 -c "print('adminsecret'.ljust(32,'a'))")
export STOREGATE_BACKEND=openmage STOREGATE_UPSTREAM_TOKEN=$T STOREGATE_UPSTREAM_TOKEN_SECRET=$TS \
  STOREGATE_UPSTREAM_CONSUMER_KEY=$K STOREGATE_UPSTREAM_CONSUMER_SECRET=$S STOREGATE_OPENMAGE_STORE_VIEWS=default=1,de=2
mkdir -p "${OUT:-/tmp/rehearsal}"; cd "${OUT:-/tmp/rehearsal}"
$BIN sandbox --listen 127.0.0.1:18181 --public-url http://127.0.0.1 --seed-from http://127.0.0.1 > sandbox.log 2>&1 &
echo $! > sandbox.pid
for i in $(seq 60); do grep -q "integration token" sandbox.log && break; sleep 1; done
CT=$(sed -n 's/.*integration token (generated for this run): //p' sandbox.log)
STOREGATE_UPSTREAM_URL=http://127.0.0.1 STOREGATE_ADMIN_KEY=rehearsal-admin-key STOREGATE_LISTEN=127.0.0.1:18080 \
STOREGATE_DATA_DIR=/tmp/rehearsal/data STOREGATE_TOKEN_SECRET=rehearsal-secret STOREGATE_ACCESS_LOG=off \
STOREGATE_SHADOW_BACKEND=magento2 STOREGATE_SHADOW_UPSTREAM_URL=http://127.0.0.1:18181 STOREGATE_SHADOW_UPSTREAM_TOKEN=$CT \
STOREGATE_SHADOW_SAMPLE=1 STOREGATE_SHADOW_RECHECK_SECS=2 STOREGATE_SHADOW_MIN_COMPARED=1 \
$BIN > gateway.log 2>&1 &
echo $! > gateway.pid
for i in $(seq 60); do curl -s -o /dev/null http://127.0.0.1:18080/healthz && break; sleep 1; done
G=http://127.0.0.1:18080/api/rest
A=(-H "Authorization: Bearer rehearsal-admin-key")
J=(-H "Accept: application/json")
CTOK=$(curl -s "${J[@]}" -H 'Content-Type: application/json' -d '{"username":"jane@example.com","password":"Password123"}' $G/auth/token | python3 -c "import sys,json; print(json.load(sys.stdin)['access_token'])")
C=(-H "Authorization: Bearer $CTOK")
for p in /products /products/1 /products/2 /products/3 /products/5 /products/1/images /products/category/2; do
  curl -s -o /dev/null "${J[@]}" $G$p; curl -s -o /dev/null "${J[@]}" "${A[@]}" $G$p; curl -s -o /dev/null "${J[@]}" "${C[@]}" $G$p
done
for p in /stockitems /stockitems/1 /stockitems/2 /customers /customers/1 /customers/2 /customers/1/addresses /customers/2/addresses /customers/addresses/1 /customers/addresses/3 /orders /orders/1 /orders/2; do
  curl -s -o /dev/null "${J[@]}" "${A[@]}" $G$p
done
for p in /customers/2 /customers/2/addresses /customers/addresses/3 /orders /orders/2; do
  curl -s -o /dev/null "${J[@]}" "${C[@]}" $G$p
done
sleep 8
curl -s "${J[@]}" "${A[@]}" $G/shadow/report > report.json
kill $(cat gateway.pid) $(cat sandbox.pid)
