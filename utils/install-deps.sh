#!/usr/bin/env bash
# Installs the Debian 12 packages RAPID-LLM needs to build and test, and only those missing.
set -euo pipefail

packages=(
    cmake g++ make
    ns3 libns3-dev libgsl-dev libsqlite3-dev libxml2-dev # ns-3 3.37 and what its CMake package needs
    protobuf-compiler libprotobuf-dev                     # Chakra execution traces
    libyaml-cpp-dev                                       # specs and presets
    libboost-dev libboost-graph-dev                       # routing (Boost.Graph)
    zlib1g-dev                                            # gzip-compressed traces
    nlohmann-json3-dev                                    # JSON reports (every --json)
    libbenchmark-dev                                      # bench/
    pkg-config                                            # the out-of-tree test (rapid-llm.pc)
    gnuplot-nox                                           # PNG plots of studies, sweeps and run --out (ns-3 Gnuplot)
    libjemalloc-dev                                       # the programs' allocator (CMakeLists.txt)
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "rapid-llm: installing missing packages: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "rapid-llm: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
