#!/usr/bin/env bash
# Runs every test of the project: the check that no build artefact is
# tracked (scripts/check-artefacts.sh), vet, the Go tests with the race
# detector (the store contract suite and the SQS tests against a moto server
# that this script starts on a free port), every fuzz target for a bounded
# time (scripts/fuzz.sh, about 85 s), the CDK assertions, a synth of
# every stack with the real CDK CLI (which builds every function), cfn-lint
# on the templates and the check of the bundles (scripts/synth-lint.sh;
# BUNDLE_SIZE_CHECK=warn only reports oversized ones).
#
# Needs: Go, Python with moto_server and cfn-lint (preinstalled here; the
# script installs them with pip if missing), Node with npx.
set -euo pipefail
case "${1:-}" in # -h: what this does (the comment above) and an example
  -h|-help|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; printf '\nExample:\n  %s\n' './scripts/test.sh'; exit 0 ;;
esac
cd "$(dirname "$0")/.."
root=$(pwd)

export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1

step() { printf '\n== %s\n' "$*"; }

ensure_python_tool() { # command, pip package
  if ! command -v "$1" >/dev/null 2>&1; then
    step "installing $2"
    python3 -m pip install --quiet "$2"
  fi
}
step "no build artefacts tracked"
./scripts/check-artefacts.sh

ensure_python_tool moto_server 'moto[server]'
ensure_python_tool cfn-lint cfn-lint

# The console's browser test (scripts/dev, TestConsoleInTheBrowser) drives
# Debian's headless Chromium; it fails in CI without it. Installing it takes
# about a minute on a fresh machine (skipped when present); the test runs in
# about 7 s inside the go test step below.
# Debian packages the tests use: chromium (the console's browser test) and
# jq (apilint, clientcheck and the walkthroughs' commands).
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v jq >/dev/null 2>&1 || missing+=(jq)
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]} (apt-get)"
  if [ "$(id -u)" = 0 ]; then apt_get() { apt-get "$@"; }; else apt_get() { sudo apt-get "$@"; }; fi
  apt_get update -qq && DEBIAN_FRONTEND=noninteractive apt_get install -y -qq "${missing[@]}" >/dev/null
fi

step "go mod download"
go mod download

step "go vet"
go vet ./...

step "starting moto_server"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
moto_log=$(mktemp)
moto_server -H 127.0.0.1 -p "$port" >"$moto_log" 2>&1 &
moto_pid=$!
trap 'kill $moto_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/moto-api/" >/dev/null 2>&1; then break; fi
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/moto-api/" >/dev/null || { cat "$moto_log"; echo "moto_server did not start"; exit 1; }
export TEST_AWS_ENDPOINT="http://127.0.0.1:$port"
echo "moto_server on $TEST_AWS_ENDPOINT"

# Two chains run side by side (most steps wait on moto, npm, sleeps or
# jsii as much as on the CPU): the CDK chain (assertions, synth with the
# real CLI, the bundles, then the stack's scenarios under the Lambda RIE)
# in the background, its output printed when it ends; and the rest here.
infra_log=$(mktemp)
infra_chain() {
  set -e
  if [ -d infra ] && ls infra/*.go >/dev/null 2>&1; then
    step "go test ./infra (CDK assertions; no -race: jsii is slow under it)"
    go test -count=1 ./infra/...
    if [ -x scripts/synth-lint.sh ]; then
      step "cdk synth (real CDK CLI, building every function), cfn-lint and bundle checks"
      ./scripts/synth-lint.sh
    fi
  fi
  if [ -x scripts/stack-test.sh ]; then
    step "the deployed topology on this machine (scripts/stack-test.sh: scenarios on the synthesized stack under the Lambda RIE and moto)"
    ./scripts/stack-test.sh
  fi
}
( infra_chain ) >"$infra_log" 2>&1 &
infra_pid=$!
trap 'kill $moto_pid 2>/dev/null || true; kill $infra_pid 2>/dev/null || true' EXIT
echo "(the CDK chain runs in the background; its output follows at the end)"

step "go test -race (all packages but infra)"
go test -race -count=1 $(go list ./... | grep -v '/infra')

# The interleaved benchmarks behind scripts/bench check what they compare
# (the same bodies, every delivery arrived, the per-minute count never
# below the sweep): one round each, so they cannot rot unseen. No timing
# is asserted. About 5 s after their build.
step "scripts/bench's A/B benchmarks, one round each (no timing asserted)"
go test -count=1 -run '^$' -bench 'AB$' -benchtime 1x ./shared/conversations/conversationsapi ./shared/testsupport/apitest ./shared/alerts/delivery

step "OpenAPI lint (scripts/apilint: Redocly's recommended rules, 0 errors and 0 warnings; about 10 s)"
./scripts/apilint

step "generated clients (scripts/clientcheck/run: oapi-codegen Go client and openapi-typescript + openapi-fetch, compiled and run against a dev server; about 45 s)"
./scripts/clientcheck/run

step "walkthroughs of the README and docs/ (scripts/readme: every sh block in reading order, on the in-memory dev server and on moto; about 40 s plus the tools' first build)"
go run ./scripts/readme

step "fuzz targets, bounded (scripts/fuzz.sh: FUZZTIME=${FUZZTIME:-4s} each)"
./scripts/fuzz.sh

step "the CDK chain (run in the background since the start)"
infra_rc=0
wait "$infra_pid" || infra_rc=$?
cat "$infra_log"
if [ "$infra_rc" -ne 0 ]; then
  echo "the CDK chain failed (exit $infra_rc)"
  exit 1
fi

step "all tests passed"
