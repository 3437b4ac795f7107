#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build the release preset, run the main job:
# the bundled CMU walk tracked by the simulated character while a 0.45 kg ball at 10 m/s hits
# its left forearm. Writes out/demo/walk_hit.bvh (the simulated clip), walk_hit.balls.json,
# walk_hit.html (the report; open it in a browser) and walk_hit.json (the same numbers).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
mkdir -p out/demo
exec build/release/featherbone simulate data/131_01.bvh -o out/demo/walk_hit.bvh \
    --hit time=1.2,target=LeftElbow,speed=10,mass=0.45,radius=0.11 \
    --report out/demo/walk_hit.html --report out/demo/walk_hit.json
