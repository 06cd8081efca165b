#!/usr/bin/env bash
# Builds every Lambda function: each functions/<name>/ holding a main.go
# becomes dist/<name>/bootstrap, a linux/arm64 static binary for the
# provided.al2023 runtime. The CDK app (infra/) takes its code from dist/ and
# refuses to synthesize when a bundle is missing. dist/ is rebuilt from
# scratch and is not committed.
set -euo pipefail
cd "$(dirname "$0")/.."

rm -rf dist
built=0
for main in functions/*/main.go; do
  [ -e "$main" ] || continue
  dir=$(dirname "$main")
  name=$(basename "$dir")
  mkdir -p "dist/$name"
  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' \
    -o "dist/$name/bootstrap" "./$dir"
  printf '%-16s dist/%s/bootstrap (%s bytes)\n' "$name" "$name" "$(wc -c <"dist/$name/bootstrap" | tr -d ' ')"
  built=$((built + 1))
done
if [ "$built" -eq 0 ]; then
  echo "build.sh: no functions/*/main.go found" >&2
  exit 1
fi
