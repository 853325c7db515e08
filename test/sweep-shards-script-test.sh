#!/usr/bin/env bash
# Tests utils/scripts/sweep-shards.sh as doc/case-studies.md uses it: a small sweep run as three
# shards in parallel and merged gives the unsharded results.csv and sweep.json, byte for byte.
#   test/sweep-shards-script-test.sh RAPID_LLM
set -euo pipefail
cli=${1:?usage: sweep-shards-script-test.sh RAPID_LLM}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sweep=(--model=gpt-1.7b --gpus=8 --gbs=128 --seq=2048 --tp=1,2 --pp=1,2 --mbs=2,16
       --recompute=none,full)
"$cli" sweep "${sweep[@]}" --workers=1 --out="$tmp/whole" >/dev/null
"$here/../utils/scripts/sweep-shards.sh" "$cli" 3 "$tmp/sharded" "${sweep[@]}" --workers=1
cmp "$tmp/whole/results.csv" "$tmp/sharded/results.csv"
cmp "$tmp/whole/sweep.json" "$tmp/sharded/sweep.json"
echo "sweep-shards.sh: 3 shards merged = the whole sweep"
