#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build the release preset, run the main job:
# the bundled CMU walk tracked by the simulated character while a 0.45 kg ball at 10 m/s hits
# its left forearm. Writes out/demo/walk_hit.bvh (the simulated clip), walk_hit.balls.json,
# walk_hit.html (the report; open it in a browser) and walk_hit.json (the same numbers).
# Then the same walk and hit with a free root (nothing holds the character up: it stands on
# its own feet), following the offsets a search kept in data/plans/ (docs/CONTROL.md section
# 11): out/demo/walk_hit_free.bvh, .balls.json, .html, .json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
mkdir -p out/demo
HIT=time=1.2,target=LeftElbow,speed=10,mass=0.45,radius=0.11
build/release/featherbone simulate data/131_01.bvh -o out/demo/walk_hit.bvh --hit "$HIT" \
    --report out/demo/walk_hit.html --report out/demo/walk_hit.json
echo
echo "The same walk and hit with a free root, following the search kept in" \
     "data/plans/131_01_forearm_free.json:"
exec build/release/featherbone simulate data/131_01.bvh -o out/demo/walk_hit_free.bvh \
    --hit "$HIT" --root free --sample-load data/plans/131_01_forearm_free.json \
    --report out/demo/walk_hit_free.html --report out/demo/walk_hit_free.json
