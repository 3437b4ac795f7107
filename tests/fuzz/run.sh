#!/usr/bin/env bash
# Fuzzes the BVH import path with libFuzzer under AddressSanitizer + UBSan.
#   tests/fuzz/run.sh [SECONDS]     (default 600)
# Builds build/fuzz/fuzz_bvh with clang (installed with apt-get if missing), seeds the corpus
# with tests/data/*.bvh, runs for SECONDS on one core, and prints the run's statistics.
# Crashing inputs are saved as build/fuzz/crash-*; the corpus grows in build/fuzz/corpus.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN=${1:-600}
CLANG=$(command -v clang-14 || command -v clang || true)
if [ -z "$CLANG" ] || [ ! -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev >/dev/null
  CLANG=clang-14
fi
scripts/deps.sh
mkdir -p build/fuzz/corpus
"$CLANG" -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -ffp-contract=off -Iinclude -Isrc src/*/*.c tests/fuzz/fuzz_bvh.c \
  $(pkg-config --cflags --libs assimp libcjson) -lm -o build/fuzz/fuzz_bvh
cp tests/data/*.bvh build/fuzz/corpus/ 2>/dev/null || true
cd build/fuzz
./fuzz_bvh -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -print_final_stats=1 \
  -artifact_prefix=./ corpus 2>&1 | tail -n 30
