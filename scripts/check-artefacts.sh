#!/usr/bin/env bash
# Fails when git tracks a build artefact: an executable binary (ELF, Mach-O,
# PE, by their magic bytes), a Lambda `bootstrap`, anything under dist/ or
# cdk.out/, or a compiled test binary (*.test). Build outputs belong in
# .gitignore, never in the repository. scripts/test.sh runs it first.
#
#   ./scripts/check-artefacts.sh    # from anywhere inside the repository
set -euo pipefail
case "${1:-}" in # -h: what this does (the comment above) and an example
  -h|-help|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; printf '\nExample:\n  %s\n' './scripts/check-artefacts.sh'; exit 0 ;;
esac
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"

# magic prints what kind of executable the file is, by its first bytes, or
# nothing.
magic() {
  local head
  head=$(LC_ALL=C od -An -tx1 -N4 -- "$1" 2>/dev/null | tr -d ' \n' || true)
  case "$head" in
    7f454c46) echo "an ELF executable" ;;
    feedface | feedfacf | cefaedfe | cffaedfe) echo "a Mach-O executable" ;;
    cafebabe | bebafeca) echo "a Mach-O universal binary" ;;
    4d5a*)
      # MZ: a PE executable has "PE\0\0" at the offset stored at 0x3c.
      local off
      off=$(LC_ALL=C od -An -tu4 -j60 -N4 -- "$1" 2>/dev/null | tr -d ' \n' || true)
      if [ -n "$off" ] && [ "$(LC_ALL=C od -An -tx1 -j"$off" -N4 -- "$1" 2>/dev/null | tr -d ' \n' || true)" = 50450000 ]; then
        echo "a PE (Windows) executable"
      fi
      ;;
  esac
}

found=0
report() { # path, why
  printf '  %s: %s\n' "$1" "$2" >&2
  found=$((found + 1))
}

while IFS= read -r -d '' path; do
  case "$path" in
    dist/* | */dist/*) report "$path" "under dist/ (Lambda bundles)" ; continue ;;
    cdk.out/* | */cdk.out/*) report "$path" "under cdk.out/ (the cloud assembly)" ; continue ;;
    *.test) report "$path" "a compiled Go test binary" ; continue ;;
  esac
  if [ "$(basename -- "$path")" = bootstrap ]; then
    report "$path" "a Lambda bootstrap"
    continue
  fi
  # Only regular files present in the work tree can be read.
  if [ -f "$path" ] && [ ! -L "$path" ]; then
    kind=$(magic "$path")
    if [ -n "$kind" ]; then
      report "$path" "$kind"
    fi
  fi
done < <(git ls-files -z)

if [ "$found" -gt 0 ]; then
  echo "check-artefacts.sh: $found tracked build artefact(s), listed above: remove them with 'git rm --cached <path>' and cover them in .gitignore" >&2
  exit 1
fi
echo "check-artefacts.sh: no build artefacts tracked"
