#!/usr/bin/env bash
# Quick start, command 2: install what is missing, then build and run every test suite twice:
# the release build (-O3, as shipped) and the asan build (AddressSanitizer + UBSan).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

# the library never prints, exits or aborts: only tools/ and viewer/ talk to the user
if grep -rnE '\b(printf|fprintf|puts|exit|abort)\s*\(' src/; then
  echo "test.sh: src/ must not print, exit or abort (see STYLE.md)" >&2
  exit 1
fi

for preset in release asan; do
  echo "== $preset =="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"
  ctest --preset "$preset" -j "$(nproc)"
done
