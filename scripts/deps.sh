#!/usr/bin/env bash
# Installs the Debian packages featherbone needs to build and test, only those missing.
# Run as root (or with sudo available). Safe to run again: it does nothing when all are there.
set -euo pipefail

# build: compiler, cmake >= 3.25, pkg-config; clip import: Assimp (+ its command-line tool,
# used by the tests to open exported files); gains and rules: cJSON; tests: Check; the peers
# the tests cross-check against and the bench compares with: MuJoCo, Bullet and DART with its
# ODE collision detector (optional for building the library itself); the viewer: GLFW, OpenGL,
# libepoxy (GL loader), stb (PNG and HUD text), Dear ImGui (the gains panel: headers and
# libimgui.a with the GLFW and OpenGL 3 backends), and for headless screenshots and its test
# Xvfb, xauth and Mesa's llvmpipe; the tool's report pages: xmllint checks the SVG and HTML
# written, headless Chromium renders a page whose screenshot stb_image decodes; the test
# command's memory check: valgrind
PACKAGES=(gcc g++ make cmake pkg-config libassimp-dev assimp-utils libcjson-dev check
          libmujoco-dev libbullet-dev libdart-dev libdart-collision-ode-dev
          libglfw3-dev libgl-dev libepoxy-dev libstb-dev libimgui-dev xvfb xauth libgl1-mesa-dri
          libxml2-utils chromium valgrind)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "deps.sh: need root (or sudo) to install: ${missing[*]}" >&2
    exit 2
  fi
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
