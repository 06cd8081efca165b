#!/usr/bin/env bash
# Interleaved wrk runs of the dev server against its two baselines
# (docs/performance.md, "Dev server throughput"):
#   api   the same binary with -api-only: the same API handler and memory
#         stores straight on net/http, without the dev server's own layers
#         (Host check, /metrics, operator endpoint, index, OpenAPI). The
#         ratio dev/api is what the dev server itself costs a load test.
#   bare  devbare: a net/http mux writing the bodies the dev server gave.
#         The ratio dev/bare is what the whole request path costs over
#         writing a canned body (the code that runs deployed included).
# Routes: GET /v1/alert-rules, then chat respond over 256 conversations
# per server; ROUNDS rounds each, the order of the three servers rotating
# from round to round. Needs wrk, jq and curl.
#
#   go build -o bin/ ./scripts/dev ./scripts/bench/devbare
#   scripts/bench/devbare/pairs.sh bin/dev bin/devbare 5
set -euo pipefail
DEVBIN=$1 BAREBIN=$2 ROUNDS=${3:-5}
DEVPORT=${DEVPORT:-18092} APIPORT=${APIPORT:-18094} BAREPORT=${BAREPORT:-18093}
D=$(mktemp -d)
"$DEVBIN" -addr 127.0.0.1:$DEVPORT -demo-data -no-rate-limit -credentials "$D/$DEVPORT.json" >/dev/null 2>&1 &
DEV=$!
"$DEVBIN" -addr 127.0.0.1:$APIPORT -api-only -demo-data -no-rate-limit -credentials "$D/$APIPORT.json" >/dev/null 2>&1 &
API=$!
trap 'kill $DEV $API ${BARE:-} 2>/dev/null || true; rm -rf "$D"' EXIT

# setup PORT: waits for the server's credentials, makes 256 conversations
# and writes PORT.lua (chat respond over them) and PORT.env (the rest).
setup() {
  local port=$1 c=$D/$1.json ids=""
  until [ -s "$c" ]; do sleep 0.2; done
  local acct proj pkey tok
  acct=$(jq -r '.accounts[0].account_id' "$c") proj=$(jq -r '.accounts[0].projects[0].project_id' "$c")
  pkey=$(jq -r '.accounts[0].projects[0].api_key' "$c") tok=$(jq -r '.accounts[0].projects[0].agent_token' "$c")
  until curl -s -o /dev/null "http://127.0.0.1:$port/v1/alert-rules"; do sleep 0.2; done
  for _ in $(seq 256); do
    ids="$ids\"$(curl -s -X POST -H "x-api-key: $pkey" -H "x-token: $tok" -H 'content-type: application/json' -d '{}' \
      "http://127.0.0.1:$port/v1/$acct/$proj/chat/create" | jq -r .conversation_id)\","
  done
  cat > "$D/$port.lua" <<LUA
local ids = {${ids%,}}
local i = 0
wrk.method = "POST"
wrk.headers["x-api-key"] = "$pkey"
wrk.headers["x-token"] = "$tok"
wrk.headers["content-type"] = "application/json"
request = function()
  i = i + 1
  return wrk.format(nil, nil, nil, '{"conversation_id":"' .. ids[(i % #ids) + 1] .. '","message":"what is my balance"}')
end
LUA
  printf 'KEY=%s\nCHAT=/v1/%s/%s/chat/respond\n' "$(jq -r '.accounts[0].api_key' "$c")" "$acct" "$proj" > "$D/$port.env"
}
setup $DEVPORT
setup $APIPORT
# devbare serves what the dev server answered, with the dev server's key.
"$BAREBIN" -dev http://127.0.0.1:$DEVPORT -credentials "$D/$DEVPORT.json" -addr 127.0.0.1:$BAREPORT 2>/dev/null &
BARE=$!
until curl -s -o /dev/null http://127.0.0.1:$BAREPORT/; do sleep 0.2; done
cp "$D/$DEVPORT.lua" "$D/$BAREPORT.lua"
cp "$D/$DEVPORT.env" "$D/$BAREPORT.env"

# rate ROUTE PORT: requests per second over 3 s, 2 threads, 32 connections.
rate() {
  local KEY CHAT
  . "$D/$2.env"
  if [ "$1" = rules ]; then
    wrk -t2 -c32 -d3s -H "x-api-key: $KEY" "http://127.0.0.1:$2/v1/alert-rules"
  else
    wrk -t2 -c32 -d3s -s "$D/$2.lua" "http://127.0.0.1:$2$CHAT"
  fi | awk '/Requests\/sec/ {print $2}'
}
ratio() { awk "BEGIN {printf \"%.2f\", $1 / $2}"; }
for route in rules chat; do
  for r in $(seq "$ROUNDS"); do
    declare -A got=()
    case $((r % 3)) in
      1) order="$DEVPORT $APIPORT $BAREPORT" ;;
      2) order="$APIPORT $BAREPORT $DEVPORT" ;;
      0) order="$BAREPORT $DEVPORT $APIPORT" ;;
    esac
    for port in $order; do got[$port]=$(rate $route "$port"); done
    d=${got[$DEVPORT]} a=${got[$APIPORT]} b=${got[$BAREPORT]}
    echo "$route round $r: dev $d/s, api-only $a/s, bare $b/s; dev x api-only $(ratio "$d" "$a"), dev x bare $(ratio "$d" "$b")"
  done
done
