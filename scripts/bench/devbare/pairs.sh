#!/usr/bin/env bash
# Interleaved wrk pairs of the dev server against devbare (docs/performance.md,
# "Dev server throughput"): GET /v1/alert-rules, then chat respond over 256
# conversations, PAIRS pairs each (dev then bare, bare then dev, ...), each
# line the two rates and their ratio. Needs wrk, jq and curl.
#
#   go build -o bin/ ./scripts/dev ./scripts/bench/devbare
#   scripts/bench/devbare/pairs.sh bin/dev bin/devbare 5
set -euo pipefail
DEVBIN=$1 BAREBIN=$2 PAIRS=${3:-5}
DEVPORT=${DEVPORT:-18092} BAREPORT=${BAREPORT:-18093}
D=$(mktemp -d)
"$DEVBIN" -addr 127.0.0.1:$DEVPORT -demo-data -no-rate-limit -credentials "$D/creds.json" >/dev/null 2>/dev/null &
DEV=$!
trap 'kill $DEV ${BARE:-} 2>/dev/null || true; rm -rf "$D"' EXIT
until [ -s "$D/creds.json" ]; do sleep 0.2; done
"$BAREBIN" -dev http://127.0.0.1:$DEVPORT -credentials "$D/creds.json" -addr 127.0.0.1:$BAREPORT 2>/dev/null &
BARE=$!
until curl -s -o /dev/null http://127.0.0.1:$BAREPORT/; do sleep 0.2; done
ACCT=$(jq -r '.accounts[0].account_id' "$D/creds.json") KEY=$(jq -r '.accounts[0].api_key' "$D/creds.json")
PROJ=$(jq -r '.accounts[0].projects[0].project_id' "$D/creds.json") PKEY=$(jq -r '.accounts[0].projects[0].api_key' "$D/creds.json")
TOK=$(jq -r '.accounts[0].projects[0].agent_token' "$D/creds.json")
ids=""
for _ in $(seq 256); do
  id=$(curl -s -X POST -H "x-api-key: $PKEY" -H "x-token: $TOK" -H 'content-type: application/json' -d '{}' \
    http://127.0.0.1:$DEVPORT/v1/$ACCT/$PROJ/chat/create | jq -r .conversation_id)
  ids="$ids\"$id\","
done
cat > "$D/chat.lua" <<LUA
local ids = {${ids%,}}
local i = 0
wrk.method = "POST"
wrk.headers["x-api-key"] = "$PKEY"
wrk.headers["x-token"] = "$TOK"
wrk.headers["content-type"] = "application/json"
request = function()
  i = i + 1
  return wrk.format(nil, nil, nil, '{"conversation_id":"' .. ids[(i % #ids) + 1] .. '","message":"what is my balance"}')
end
LUA
rate() { wrk -t2 -c32 -d3s "$@" | awk '/Requests\/sec/ {print $2}'; }
for route in rules chat; do
  for p in $(seq "$PAIRS"); do
    if [ $route = rules ]; then
      dev=(-H "x-api-key: $KEY" http://127.0.0.1:$DEVPORT/v1/alert-rules)
      bare=(-H "x-api-key: $KEY" http://127.0.0.1:$BAREPORT/v1/alert-rules)
    else
      dev=(-s "$D/chat.lua" http://127.0.0.1:$DEVPORT/v1/$ACCT/$PROJ/chat/respond)
      bare=(-s "$D/chat.lua" http://127.0.0.1:$BAREPORT/v1/$ACCT/$PROJ/chat/respond)
    fi
    if [ $((p % 2)) = 1 ]; then d=$(rate "${dev[@]}"); b=$(rate "${bare[@]}"); else b=$(rate "${bare[@]}"); d=$(rate "${dev[@]}"); fi
    echo "$route pair $p: dev $d/s, bare $b/s, x bare $(awk "BEGIN {printf \"%.2f\", $d / $b}")"
  done
done
