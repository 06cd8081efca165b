#!/usr/bin/env bash
# Synthesizes every stack (the three regional stacks and VoiceOps-global)
# with the real CDK CLI in one run, which builds every function (go build on
# this machine, infra/bundle.go), then checks the cloud assembly:
#   - cfn-lint on every template: any error or warning fails;
#   - every function's bootstrap (scripts/checkbundles): present, a static
#     linux/arm64 ELF, and at most 10 MiB. Sizes are printed.
#
# BUNDLE_SIZE_CHECK=fail (default) fails on an oversized bootstrap;
# BUNDLE_SIZE_CHECK=warn only reports it (a missing or foreign bootstrap
# still fails).
#
# Needs: Node with npx (downloads aws-cdk@2 on first use), Go, cfn-lint.
set -euo pipefail
case "${1:-}" in # -h: what this does (the comment above) and an example
  -h|-help|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; printf '\nExample:\n  %s\n' 'BUNDLE_SIZE_CHECK=warn ./scripts/synth-lint.sh'; exit 0 ;;
esac
cd "$(dirname "$0")/.."

size_check=${BUNDLE_SIZE_CHECK:-fail}
case "$size_check" in
  fail | warn) ;;
  *)
    echo "synth-lint.sh: BUNDLE_SIZE_CHECK=$size_check: want fail or warn" >&2
    exit 2
    ;;
esac

export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
export CDK_DISABLE_CLI_TELEMETRY=true
export AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1} # cfn-lint needs a region

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

start=$SECONDS
# --quiet: do not print the templates; the CLI still reports errors.
npx --yes aws-cdk@2 synth --no-notices --quiet -c region=all -o "$out"
echo "cdk synth: $((SECONDS - start)) s"

shopt -s nullglob
templates=("$out"/*.template.json)
if [ "${#templates[@]}" -eq 0 ]; then
  echo "synth-lint.sh: cdk synth produced no templates in $out" >&2
  exit 1
fi
for t in "${templates[@]}"; do
  echo "cfn-lint $(basename "$t")"
done
# cfn-lint exits non-zero on any error (2) or warning (4), and on
# informational findings (8) if a configuration turns them on: fail on all.
status=0
cfn-lint --format parseable -- "${templates[@]}" || status=$?
if [ "$status" -ne 0 ]; then
  echo "synth-lint.sh: cfn-lint found problems (exit $status)" >&2
  exit 1
fi
echo "cfn-lint: ${#templates[@]} templates, nothing reported"

echo "bundles (BUNDLE_SIZE_CHECK=$size_check):"
go run ./scripts/checkbundles -mode "$size_check" -max-mib 10 "$out"
echo "synth-lint.sh: ${#templates[@]} templates synthesized, cfn-lint clean, bundles checked"
