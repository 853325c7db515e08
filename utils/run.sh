#!/usr/bin/env bash
# Builds as needed, then runs the rapid-llm command with the given arguments.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/utils/build.sh"
exec "${RAPIDLLM_BUILD_DIR:-$root/build}/bin/rapid-llm" "$@"
