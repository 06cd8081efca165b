#!/usr/bin/env bash
# Optional: builds every Lambda function into dist/<name>/bootstrap, to look
# at the binaries (sizes, symbols) without synthesizing. Nothing needs it:
# `cdk synth` and `cdk deploy` build each function themselves, with these
# same flags (infra/bundle.go; a test keeps the two in step), into the cloud
# assembly (cdk.out/asset.<hash>/bootstrap). dist/ is rebuilt from scratch and
# is not committed.
set -euo pipefail
case "${1:-}" in # -h: what this does (the comment above) and an example
  -h|-help|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; printf '\nExample:\n  %s\n' './scripts/build.sh && ls -l dist/*/bootstrap'; exit 0 ;;
esac
cd "$(dirname "$0")/.."

rm -rf dist
built=0
for main in functions/*/main.go; do
  [ -e "$main" ] || continue
  dir=$(dirname "$main")
  name=$(basename "$dir")
  mkdir -p "dist/$name"
  env GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -buildvcs=false '-ldflags=-s -w' \
    -o "dist/$name/bootstrap" "./$dir"
  printf '%-16s dist/%s/bootstrap (%s bytes)\n' "$name" "$name" "$(wc -c <"dist/$name/bootstrap" | tr -d ' ')"
  built=$((built + 1))
done
if [ "$built" -eq 0 ]; then
  echo "build.sh: no functions/*/main.go found" >&2
  exit 1
fi
