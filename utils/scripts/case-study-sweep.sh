#!/usr/bin/env bash
# Case study 1 of doc/case-studies.md: every training layout of GPT-3 175B on 1,024 A100s
# (global batch 1536): tp 1-8, pp 1-32, micro-batch 1-4, interleaving 1-3, recomputation
# none/selective/full. Writes OUT/results.csv, OUT/sweep.json and OUT/sweep.png, and copies the
# figure to doc/figures/sweep-gpt3-175b-1024xa100.png.
#
#   utils/scripts/case-study-sweep.sh build/bin/rapid-llm out/case-study-1 [--workers=N]
#
# A rerun continues an interrupted sweep (--resume) and redraws the figure.
set -euo pipefail
cli=${1:?usage: case-study-sweep.sh RAPID_LLM OUT [sweep options]}
out=${2:?usage: case-study-sweep.sh RAPID_LLM OUT [sweep options]}
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)

# --resume draws the figure again from a finished folder without replaying anything.
"$cli" sweep --model=gpt3-175b --hardware=a100-sxm-80gb --gpus=1024 --gbs=1536 --seq=2048 \
    --tp=1,2,4,8 --pp=1,2,4,8,16,32 --mbs=1,2,3,4 --vpp=1,2,3 \
    --recompute=none,selective,full --resume --plot --top=10 --out="$out" "$@"
cp "$out/sweep.png" "$root/doc/figures/sweep-gpt3-175b-1024xa100.png"
python3 - "$out/results.csv" "$out/sweep.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
inputs = json.load(open(sys.argv[2]))
fit = [r for r in rows if r["fits"] == "yes"]
combos = 1
for k in ("tp", "pp", "mbs", "vpp", "recompute"):
    combos *= len(inputs[k])
print(f"{combos} combinations: {inputs['skipped']} ruled out by the model, batch or GPU count, "
      f"{len(rows)} layouts predicted, {len(rows) - len(fit)} of them "
      f"({100 * (len(rows) - len(fit)) / len(rows):.1f}%) pruned by memory, {len(fit)} fit")
PY
