#!/usr/bin/env bash
# Builds as needed, then runs every test suite through CTest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RAPIDLLM_BUILD_DIR:-$root/build}"
"$root/utils/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
