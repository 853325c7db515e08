#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Fluid against message granularity of one collective beside competing transfers on the flow
# network (`collective --beside`): 45 cases on 16 and 64 DGX A100 GPUs, hierarchical all-reduce
# (and an 8-piece ring reduce-scatter, an unpipelined 64-GPU ring) at 2, 8 and 64 MiB, with a
# transfer of the collective's size, a half, a quarter or an eighth on GPU 0's NVLink (0>1) or
# its InfiniBand rail (0>8). `ring` runs the preset with ring dimensions and the Simple-protocol
# step latencies (1.7 us NVLink, 4.735 us network), as the fluid test suite's ring cases do;
# `nccl` runs the preset as it is. Prints each case's two times and their difference, then the
# mean |difference| and the largest (doc/network-model.md, "Beside other traffic").
#
# usage: bench/fluid-competing-grid.sh [rapid-llm binary] [hardware preset YAML]
set -eu
BIN=${1:-build/bin/rapid-llm}
PRESET=${2:-data/presets/hardware/a100-sxm-80gb.yaml}
RING=$(mktemp --suffix=.yaml)
trap 'rm -f "$RING"' EXIT
sed -e 's/collective: nccl/collective: ring/' \
    -e 's/latency_ns: 300 /latency_ns: 1700 /' \
    -e 's/latency_ns: 1285 /latency_ns: 4735 /' "$PRESET" >"$RING"
if [ "$(grep -c 'collective: ring' "$RING")" -lt 2 ] || ! grep -q 'latency_ns: 4735 ' "$RING"; then
    echo "fluid-competing-grid: $PRESET no longer has the fields this script rewrites" >&2
    exit 1
fi
time_s() {
    # time_s is the third field from the end of the CSV row (the algorithm field may hold commas)
    "$BIN" collective --csv "$@" | awk -F, 'NR == 2 { print $(NF - 2) }'
}
# name, dimensions, GPUs, collective options, transfers (B: the collective's bytes)
cases() {
    cat <<'EOF'
H-nv-eq ring 64 --algorithm=hierarchical 0>1:B
H-nv-q ring 64 --algorithm=hierarchical 0>1:B/4
H-ib-eq ring 64 --algorithm=hierarchical 0>8:B
H-ib-q ring 64 --algorithm=hierarchical 0>8:B/4
Hn-nv-eq nccl 64 --algorithm=hierarchical 0>1:B
Hn-ib-eq nccl 64 --algorithm=hierarchical 0>8:B
R8-nv-eq ring 64 --op=reduce-scatter,--algorithm=ring,--chunks=8 0>1:B
H-ib-h ring 64 --algorithm=hierarchical 0>8:B/2
H-ib-8th ring 64 --algorithm=hierarchical 0>8:B/8
Hn-ib-q nccl 64 --algorithm=hierarchical 0>8:B/4
Hn-nv-q nccl 64 --algorithm=hierarchical 0>1:B/4
H-2comp ring 64 --algorithm=hierarchical 0>8:B/4,3>4:B
R64-ib-q ring 64 --algorithm=ring 0>8:B/4
Hn16-ib-q nccl 16 --algorithm=hierarchical 0>8:B/4
Hn16-nv-h nccl 16 --algorithm=hierarchical 2>3:B/2
EOF
}
for mib in 2 8 64; do
    bytes=$((mib * 1048576))
    cases | while read -r name dims gpus options transfers; do
        hw=$PRESET
        [ "$dims" = ring ] && hw=$RING
        beside=$(echo "$transfers" | sed -e "s|B/2|$((bytes / 2))|g" -e "s|B/4|$((bytes / 4))|g" \
            -e "s|B/8|$((bytes / 8))|g" -e "s|B|$bytes|g")
        # shellcheck disable=SC2086 # the options are words
        set -- $(echo "$options" | tr ',' ' ')
        fluid=$(time_s --hardware="$hw" --gpus="$gpus" --bytes="$bytes" "$@" \
            --beside="$beside" --granularity=fluid)
        message=$(time_s --hardware="$hw" --gpus="$gpus" --bytes="$bytes" "$@" \
            --beside="$beside" --granularity=message)
        echo "$name ${mib}MiB $fluid $message"
    done
done | awk '{
    d = 100 * ($3 / $4 - 1); a = d < 0 ? -d : d; sum += a; n++
    if (a <= 1) one++
    if (a <= 2) two++
    if (a > worst) { worst = a; signed = d }
    printf "%-10s %6s  fluid %10.3f us  message %10.3f us  %+6.2f%%\n", $1, $2, 1e6 * $3, 1e6 * $4, d
} END {
    printf "mean |fluid - message| %.2f%%, largest %+.2f%%, %d of %d within 1%%, %d within 2%%\n",
        sum / n, signed, one, n, two
}'
