#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Fluid against message granularity of one collective over a grid of group sizes, operations
# and sizes on the flow network: prints each case's two times and their difference, then the
# mean |difference| and the largest (doc/network-model.md, "Where the forms still part").
#
# usage: bench/fluid-granularity-grid.sh [rapid-llm binary] [hardware preset or YAML]
set -eu
BIN=${1:-build/bin/rapid-llm}
HW=${2:-a100-sxm-80gb}
time_s() {
    # time_s is the third field from the end of the CSV row (the algorithm field may hold commas)
    "$BIN" collective --hardware="$HW" --csv "$@" | awk -F, 'NR == 2 { print $(NF - 2) }'
}
for gpus in 8 16 64 256; do
    for op in all-reduce all-gather reduce-scatter; do
        for bytes in 64K 512K 2MiB 8MiB 32MiB 256MiB; do
            fluid=$(time_s --gpus="$gpus" --op="$op" --bytes="$bytes" --granularity=fluid)
            message=$(time_s --gpus="$gpus" --op="$op" --bytes="$bytes" --granularity=message)
            echo "$gpus $op $bytes $fluid $message"
        done
    done
done | awk '{
    d = 100 * ($4 / $5 - 1); a = d < 0 ? -d : d; sum += a; n++
    if (a > worst) { worst = a; signed = d }
    printf "%4d GPUs %-15s %7s  fluid %10.1f us  message %10.1f us  %+6.1f%%\n", $1, $2, $3, 1e6 * $4, 1e6 * $5, d
} END { printf "mean |fluid - message| %.2f%%, largest %+.1f%% over %d cases\n", sum / n, signed, n }'
