#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build the release preset, run the main job.
# For now the main job is the dynamics self-check on the bundled models; it becomes the
# ball-hit simulation of the bundled clip when that lands.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
exec build/release/featherbone selfcheck
