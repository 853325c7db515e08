#!/bin/sh
# Writes a seed corpus for spec-reader-fuzz into DIR (default corpus-spec): every preset and
# Hugging Face fixture, a run and a job file, and overrides, each behind the selector byte the
# fuzz target reads first (test/fuzz/spec-reader-fuzz.cc).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-corpus-spec}
mkdir -p "$out"
seed() { # selector name file-or-text
    { printf "\\$(printf '%03o' "$1")"; cat; } > "$out/$2"
}
for f in "$root"/data/presets/models/*.yaml; do
    n=$(basename "$f" .yaml)
    seed 0 "model-$n" < "$f"
    grep -v '^name:' "$f" | { echo "name: variant"; cat; } | seed 5 "model-base-$n"
done
for f in "$root"/data/presets/hardware/*.yaml; do
    n=$(basename "$f" .yaml)
    seed 1 "hw-$n" < "$f"
    printf 'name: variant\ngpu:\n  hbm_gib: 160\nnetwork:\n  dimensions:\n    - name: infiniband\n      oversubscription: 2\n' | seed 6 "hw-base-$n"
done
for f in "$root"/test/data/hf/*/config.json; do
    seed 4 "hf-$(basename "$(dirname "$f")")" < "$f"
done
printf 'mode: training\ndtype: bf16\nparallel: {tp: 8, pp: 8, dp: 16, cp: 1, ep: 1, sp: true, zero: 1, vpp: 2, rank_order: tp-cp-ep-dp-pp}\nrecompute: full\nmicro_batch: 1\nglobal_batch: 1536\nsequence: 2048\nattention: flash\ngrad_reduce: overlap\ntp_reduce: blocking\nbucket_mib: 25\n' | seed 2 run-training
printf 'mode: inference\nbatch: 64\nprompt: 2048\ngenerated: 128\ndecode_attention: per_head\nfirst_token: decode\n' | seed 2 run-inference
printf 'model: llama2-70b\nhardware: h100-sxm-80gb\nset: [gpu.hbm_gib=160, model.layers=40]\ngpus: 64\nbackend: flow\nrouting: ecmp\nmode: training\nparallel: {tp: 8, pp: 4, dp: 2}\nglobal_batch: 64\n' | seed 3 job
printf 'gpu.hbm_bandwidth_GBps=0.5x,gpu.hbm_gib=160,network.infiniband.oversubscription=2,network.dimensions[0].bandwidth_GBps=2x,model.layers=40,model.moe.top_k=1' | seed 7 overrides
echo "wrote $(ls "$out" | wc -l) seeds to $out"
