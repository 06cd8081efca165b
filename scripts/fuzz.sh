#!/usr/bin/env bash
# Runs every fuzz target of the project for a bounded time each: the
# decoders of outside input (JSON bodies of every route, query parsers, the
# external event ID extraction, webhook URLs and headers, keys and
# Idempotency-Keys, queue messages, sketches, agent configurations). Their
# seed corpora are in each package's testdata/fuzz/ (plain `go test` runs
# those as tests); a failure found here is saved there by go test.
#
# FUZZTIME (default 4s) is per target; with the targets below the total is
# about 85 s on 2 cores. -fuzzminimizetime is short: minimizing a new
# input would otherwise stall a bounded run for up to 60 s.
set -euo pipefail
case "${1:-}" in # -h: what this does (the comment above) and an example
  -h|-help|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; printf '\nExample:\n  %s\n' 'FUZZTIME=10s ./scripts/fuzz.sh'; exit 0 ;;
esac
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-4s}

targets=(
  "./shared/testsupport/apitest FuzzRoutes"
  "./shared/conversations/eventsapi FuzzPayloadEventID"
  "./shared/conversations/conversationsapi FuzzConvQuery"
  "./shared/alerts/studioapi FuzzSeriesQuery"
  "./shared/conversations/conversationsapi FuzzDecodeCursor"
  "./shared/platform/jsontext FuzzAppendJSONString"
  "./shared/platform/jsontext FuzzAppendFloat"
  "./shared/platform/httpapi FuzzParseObject"
  "./shared/platform/httpapi FuzzPlainString"
  "./shared/platform/httpapi FuzzCheckJSON"
  "./shared/voiceops FuzzCheckURL"
  "./shared/voiceops FuzzCheckHeaders"
  "./shared/voiceops FuzzShapes"
  "./shared/platform/keys FuzzParse"
  "./shared/platform/idempotency FuzzValidKey"
  "./shared/platform/idempotency FuzzFingerprint"
  "./shared/platform/ratelimit FuzzAdmit"
  "./shared/platform/queue FuzzDecode"
  "./shared/calls/phone FuzzClassifyAsLibphonenumber"
  "./shared/calls/twilioapi FuzzParseForm"
  "./shared/calls/twilioapi FuzzTurnNumber"
  "./shared/conversations/hooks FuzzParseAnswer"
  "./shared/conversations/agent FuzzParseConfig"
  "./shared/conversations/agent FuzzDecodeReply"
  "./shared/conversations/agent FuzzShapes"
  "./shared/metrics/buckets FuzzSketchRoundTrip"
  "./shared/platform/tracing FuzzParseHeader"
  "./scripts/stack/awsproxy FuzzRequests"
  "./scripts/stack/apigw FuzzMatch"
)

# run_target fuzzes one target; it fails on a crasher (go test saves it
# under testdata/fuzz/NAME). Go's fuzzing engine sometimes ends a bounded run
# with a bare "context deadline exceeded" when -fuzztime runs out while a
# worker is busy, having found nothing (no input saved): such a run is tried
# once more; a real finding fails every run, from the saved input on.
run_target() { # pkg name log
  local corpus="$1/testdata/fuzz/$2"
  local before after
  before=$(ls "$corpus" 2>/dev/null | wc -l)
  if go test -run '^$' -fuzz "^${2}\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s "$1" >"$3" 2>&1; then
    return 0
  fi
  after=$(ls "$corpus" 2>/dev/null | wc -l)
  if [ "$after" = "$before" ] && grep -q 'context deadline exceeded' "$3"; then
    echo "  (the engine stopped at its deadline having found nothing: once more)"
    go test -run '^$' -fuzz "^${2}\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s "$1" >"$3" 2>&1
    return
  fi
  return 1
}

for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  printf 'fuzz %s %s (%s)\n' "$pkg" "$name" "$fuzztime"
  run_target "$pkg" "$name" /tmp/fuzz.$$.log || {
    cat /tmp/fuzz.$$.log
    rm -f /tmp/fuzz.$$.log
    echo "fuzz: $pkg $name failed (the input is saved under $pkg/testdata/fuzz/$name)"
    exit 1
  }
done
rm -f /tmp/fuzz.$$.log
echo "fuzz: ${#targets[@]} targets passed"
