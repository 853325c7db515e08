#!/usr/bin/env bash
# Installs missing packages, then configures and builds RAPID-LLM in ./build (programs in build/bin/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RAPIDLLM_BUILD_DIR:-$root/build}"
"$root/utils/install-deps.sh"
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >&2
fi
cmake --build "$build" -j "$(nproc)" >&2
