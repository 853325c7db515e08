#!/usr/bin/env bash
# Runs a layout sweep as N shards in parallel on one machine (GNU parallel if installed, else
# xargs -P), then merges them: the same DIR/results.csv as the unsharded sweep, byte for byte.
#
#   utils/scripts/sweep-shards.sh RAPID_LLM N DIR [sweep options...]
#   e.g. utils/scripts/sweep-shards.sh build/bin/rapid-llm 4 out/gpt3 --model=gpt3-175b \
#            --gpus=1024 --gbs=1536 --tp=1,2,4,8 --workers=1
#
# Each shard writes DIR/shard-I (I = 1..N) and can be resumed (--resume is passed, so a rerun
# after an interruption continues each shard where it stopped); DIR/results.csv is the merge.
# On a Slurm cluster, see doc/case-studies.md for the job-array form of the same thing.
set -euo pipefail

if [ $# -lt 3 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
cli=$1
shards=$2
dir=$3
shift 3

mkdir -p "$dir"
if command -v parallel >/dev/null 2>&1; then
    # GNU parallel: one job per shard, {} is the shard number.
    parallel --will-cite --halt now,fail=1 -j "$shards" \
        "$cli" sweep "$@" --resume --shard={}/"$shards" --out="$dir"/shard-{} '>' /dev/null \
        ::: $(seq 1 "$shards")
else
    seq 1 "$shards" | xargs -P "$shards" -I{} \
        sh -c '"$0" sweep "$@" --resume --shard={}/'"$shards"' --out='"$dir"'/shard-{} >/dev/null' \
        "$cli" "$@"
fi
shard_dirs=()
for i in $(seq 1 "$shards"); do
    shard_dirs+=("$dir/shard-$i")
done
"$cli" merge "${shard_dirs[@]}" --out="$dir"
