#!/usr/bin/env bash
# Quick start, command 2: install what is missing, then build and run every test suite twice:
# the release build (-O3, as shipped) and the asan build (AddressSanitizer + UBSan); then the
# memory check: the CLI's paths and the core suites under valgrind memcheck (scripts/memcheck.sh),
# for the uninitialised reads the sanitizers cannot see.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

# the library never prints to the terminal, exits or aborts: only tools/ and viewer/ talk to
# the user (writing a file the caller asked for is fine)
if grep -rnE '\b(printf|puts|putchar|exit|abort|perror)\s*\(|\b(stdout|stderr)\b' src/; then
  echo "test.sh: src/ must not print, exit or abort (see STYLE.md)" >&2
  exit 1
fi

# every file under src/ small enough to be read as one thing (issue 16: no .c file over 1,000
# lines; the solver and the reference each in rooms of their own)
if find src -name '*.c' -exec awk 'END { if (NR > 1000) print FILENAME ": " NR " lines" }' {} \; | grep .; then
  echo "test.sh: no .c file under src/ may pass 1,000 lines (split it by what it holds)" >&2
  exit 1
fi

# the library's elementary functions are its own (src/math/detmath.h): glibc picks its sin, cos,
# atan2, exp, log and the like by the processor, and they round otherwise on another, so a
# searched walk would hold on one processor and fall on the next (docs/SIMULATE.md)
LIBM='(^|[^A-Za-z0-9_.>])(a?sin|a?cos|tan|atan2?|exp|expm1|exp2|log|log1p|log2|log10|pow|hypot|sinh|cosh|tanh|cbrt)f?[[:space:]]*\('
if grep -rnE --include='*.[ch]' "$LIBM" src/ | grep -v '^src/math/detmath\.c:' |
  sed -E 's#/\*.*##' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*\*' | grep -E "$LIBM"; then
  echo "test.sh: src/ calls libm's elementary functions: use fb_sin, fb_cos, ... (src/math/detmath.h)" >&2
  exit 1
fi

for preset in release asan; do
  echo "== $preset =="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"
  ctest --preset "$preset" -j "$(nproc)"
done

echo "== memcheck =="
scripts/memcheck.sh build/release
