#!/usr/bin/env bash
# Runs the scenarios on the synthesized stack (scripts/stack: the template's
# resources on a moto_server it starts, every function built for this
# machine and run under the Lambda RIE, the HTTP APIs, event source
# mappings, schedules and IAM checks): an alert through the metrics stream,
# a chat ended by the sweeper, project functions on a loopback receiver
# run by the events function and the sweeper, an outbound call through
# the dialer and a Twilio stand-in, a Bedrock agent's chat and call against the Bedrock
# stand-in (the stack synthesized with one model in bedrockModels; another
# model refused), a failing receiver spending its retry schedule, a
# silence holding back an alert and its DELETE delivering it once, Slack
# and PagerDuty endpoints receiving valid payloads at loopback stand-ins, the
# API Gateway edge cases (deadline, JSON 404/405, Idempotency-Key with a comma),
# the console calling the base host across origins (CSP, CORS; in headless
# chromium when installed),
# the template's alarms evaluated on the metrics the runner collects (every
# alarm's metric produced; a dead letter, DynamoDB and Lambda throttling, a
# function killed in the middle of an invocation, SendMessage denied to the
# evaluator, the dispatcher killed in the middle of a batch and a poison
# stream record each paging through the template's alarm topic and
# clearing, nothing acknowledged lost), the docs' alert and outbound
# walkthroughs with the stack's credentials file,
# no AccessDenied; the time to notify and each function's cold start are
# printed (figures only). STACK_ASSEMBLY=DIR reuses a cloud assembly
# instead of synthesizing; STACK_CACHE=DIR holds the RIE (each run builds the functions into a temporary directory of its own).
# A failed run ends with its slowest finished tests and what failed, or
# what was running when the 20-minute timeout struck (the suite takes
# 4 to 6 minutes; the margin is for a slow machine, and a stuck call
# fails its own test within two minutes).
#
# Needs: Go, moto_server.
set -euo pipefail
cd "$(dirname "$0")/.."

export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
# The runner starts its own moto_server: an inherited endpoint would mix
# this run's resources with another's.
unset AWS_ENDPOINT_URL

# A test binary that dies at its -timeout runs no cleanup: the Lambda
# emulators and functions it started would outlive it, and so would its
# moto_server and the directory it built the functions in (120 MB). The
# runner's processes are the only ones started from its cache
# (aws-lambda-rie) or its functions' directory; its moto_server is then an
# orphan (parent 1) started during this run; the directories this run
# created are those not there before.
tmp=${TMPDIR:-/tmp}
tmp=${tmp%/}
dirs_before=$(ls -d "$tmp"/voiceops-stack-functions-* 2>/dev/null || true)
leftovers() {
  pkill -KILL -f 'voiceops-stack/aws-lambda-rie|voiceops-stack-functions-' 2>/dev/null || true
  ps -eo pid=,ppid=,etimes=,args= | awk -v age="$SECONDS" '$2 == 1 && $3 <= age && /moto_server/ {print $1}' | xargs -r kill 2>/dev/null || true
  local d
  for d in "$tmp"/voiceops-stack-functions-*; do
    if [ -d "$d" ] && ! grep -qxF "$d" <<<"$dirs_before"; then rm -rf "$d"; fi
  done
}
trap leftovers EXIT

start=$SECONDS
out=$(mktemp)
rc=0
go test -tags stack -count=1 -v -timeout 20m ./scripts/stack/ 2>&1 | tee "$out" || rc=$?
echo "stack-test.sh: $((SECONDS - start)) s"
if [ "$rc" -ne 0 ]; then
  # A log is often read from its end: what failed, or what was running
  # when the suite's timeout struck, and how long each finished test took.
  echo "== stack-test.sh failed (exit $rc); the slowest finished tests, then what failed:"
  grep -E '^\s*--- (PASS|FAIL)' "$out" | sed -E 's/.*--- (PASS|FAIL): ([^ ]+) \(([0-9.]+)s\)/\3 \1 \2/' | sort -rn | head -8 || true
  grep -E '^\s*--- FAIL|^panic: |httptest.Server blocked in Close|^\s+Test[A-Za-z0-9_/]+ \([0-9hms.]+\)$|^(ok|FAIL)\s' "$out" | head -30 || true
fi
rm -f "$out"
exit "$rc"
