#!/usr/bin/env bash
# The memory check of the README's test command (scripts/test.sh runs it after the release and
# asan trees): valgrind memcheck on the release build, for what AddressSanitizer cannot see
# (reads of uninitialised memory: frame 0 of the reports' torques was uninitialised heap until
# issue 15). Every run fails on any memcheck error (--error-exitcode), with the origin of an
# uninitialised value (--track-origins=yes), and definite leaks count as errors.
#   the CLI: info, convert, simulate (hits, random hits, both reports, glTF; an assisted root;
#     a free root's balance planner and its fall under a heavy ball, with both reports; the
#     sampling search on two threads), torques,
#     gains init, a batch of two jobs, and a malformed clip refused (exit 2), on short frame ranges;
#   the core suites: math, model, dynamics, constraint, collision, world, and the fit, gains
#     and hits cases of control and sim (their whole-clip tracking cases take minutes under
#     valgrind; the CLI's simulate covers the step loop on a short excerpt). math without its
#     elementary case (a million calls of arithmetic on locals against libm: a minute under
#     valgrind, and the CLI's runs call the same functions).
# Runs $(nproc) at once; prints each failure's valgrind log. Usage: scripts/memcheck.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(cd "${1:-build/release}" && pwd)
CLI="$BUILD/featherbone"
TESTS="$BUILD/tests"
CLIP="$PWD/data/131_01.bvh"
if ! command -v valgrind >/dev/null; then
  echo "memcheck.sh: valgrind not found (scripts/deps.sh installs it)" >&2
  exit 1
fi
# valgrind 3.19 does not decode every AVX2 instruction gcc emits for the AVX2 copy of the
# dynamics kernels (src/math/isa.h): run the portable copy, which gives the same bits
export FB_ISA=x86-64
VG=(valgrind -q --error-exitcode=99 --track-origins=yes --leak-check=full
    --errors-for-leak-kinds=definite --show-leak-kinds=definite --num-callers=30)
T=$(mktemp -d /tmp/fb_memcheck_XXXXXX)
trap '[ -n "${FB_MEMCHECK_KEEP:-}" ] || rm -rf "$T"' EXIT

# the batch's manifest: two short jobs, one with a report
cat >"$T/m.jsonl" <<EOF
{"clip": "$CLIP", "out": "j1.bvh", "frames": "0:96", "hits": ["time=0.5,target=LeftElbow"]}
{"clip": "$CLIP", "out": "j2.bvh", "frames": "100:196", "random_hits": 1, "seed": 2, "report": "j2.json"}
EOF

# name, expected exit code, command (run in $T, under valgrind). Runs that read another's output
# come after it in the same line, joined with &&.
JOBS=(
  "info|0|$CLI info $CLIP"
  "convert+torques+gains|0|$CLI convert $CLIP -o c.bvh --frames 0:120 && ${VG[*]} $CLI torques c.bvh -o t.csv && ${VG[*]} $CLI gains init c.bvh -o g.json"
  "simulate|0|$CLI simulate $CLIP --frames 0:120 --hit time=0.5,target=LeftElbow --random-hits 2 --seed 3 -o s.bvh --report s.html --report s.json --format gltf --quiet"
  "simulate-assisted-pd|0|$CLI simulate $CLIP --frames 200:296 --hit time=0.4,target=Head,mass=2 --root assisted --controller pd --keep-placement -o p.bvh --report p.json --quiet"
  "simulate-free-fall|0|$CLI simulate $CLIP --frames 0:120 --root free --hit time=0.5,target=Head,mass=5,speed=15 -o f.bvh --report f.json --report f.html --quiet"
  "simulate-sample+load|0|$CLI simulate $CLIP --frames 0:36 --root free --sample 2 --threads 2 --sample-save q.plan.json -o q.bvh --report q.json --quiet && ${VG[*]} $CLI simulate $CLIP --frames 0:36 --root free --sample-load q.plan.json -o r.bvh --quiet && cmp q.bvh r.bvh"
  "batch|0|$CLI batch m.jsonl --jobs 2"
  "bad-input|2|$CLI convert $PWD/tests/data/bad_value_count.bvh -o bad.bvh"
  "test_math|0|env CK_FORK=no CK_RUN_CASE=spatial $TESTS/test_math"
  "test_model|0|env CK_FORK=no $TESTS/test_model"
  "test_dynamics|0|env CK_FORK=no $TESTS/test_dynamics"
  "test_constraint|0|env CK_FORK=no $TESTS/test_constraint"
  "test_collision|0|env CK_FORK=no $TESTS/test_collision"
  "test_world|0|env CK_FORK=no $TESTS/test_world"
  "test_control:fit|0|env CK_FORK=no CK_RUN_CASE=fit $TESTS/test_control"
  "test_control:gains|0|env CK_FORK=no CK_RUN_CASE=gains $TESTS/test_control"
  "test_sim:hits|0|env CK_FORK=no CK_RUN_CASE=hits $TESTS/test_sim"
)

# One job: its own directory, valgrind in front of the first command, its log kept.
run_job() {
  local name=$1 want=$2 cmd=$3 dir="$T/${1//[:+]/_}"
  mkdir -p "$dir"
  cp "$T/m.jsonl" "$dir/"
  local rc=0
  (cd "$dir" && eval "${VG[*]} $cmd") >"$dir.log" 2>&1 || rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "memcheck: $name: exit $rc, expected $want" >"$dir.fail"
  fi
}

start=$SECONDS
running=0
for job in "${JOBS[@]}"; do
  IFS='|' read -r name want cmd <<<"$job"
  run_job "$name" "$want" "$cmd" &
  running=$((running + 1))
  if [ "$running" -ge "$(nproc)" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

failed=0
for f in "$T"/*.fail; do
  [ -e "$f" ] || continue
  failed=$((failed + 1))
  cat "$f" >&2
  sed 's/^/    /' "${f%.fail}.log" | tail -n 60 >&2
done
if [ "$failed" -gt 0 ]; then
  echo "memcheck: $failed of ${#JOBS[@]} runs failed ($((SECONDS - start)) s)" >&2
  exit 1
fi
echo "memcheck: ${#JOBS[@]} runs clean under valgrind ($((SECONDS - start)) s)"
