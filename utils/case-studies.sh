#!/usr/bin/env bash
# Regenerates the case studies of doc/case-studies.md: runs them with the built tool, keeps
# their CSV/JSON/PNG in OUT (default build/case-studies) and copies the figures to
# doc/case-studies/. Usage: utils/case-studies.sh [OUT]   (RAPIDLLM=path/to/rapid-llm to pick
# another build). Each study prints its table; `--timing` adds wall and CPU seconds on stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RAPIDLLM:-$root/build/bin/rapid-llm}
out=${1:-$root/build/case-studies}
fig=$root/doc/case-studies
[ -x "$bin" ] || "$root/utils/build.sh"
mkdir -p "$out" "$fig"

# (2) Soft-fault sensitivity of a GPT-3 175B training step on a 2:1 fat tree (the A100 preset
# with one field changed through `base:`, examples/studies/a100-sxm-80gb-2to1.yaml): 1,024 GPUs
# (TP8 PP8 DP16, global batch 1536, the README's job), three link sets (gpu0's NIC link; a leaf's uplink to a spine;
# every InfiniBand link) at five factors under four routing policies, three rows checked on the
# packet backend.
"$bin" study faults --timing \
    --model=gpt3-175b --hardware="$root/examples/studies/a100-sxm-80gb-2to1.yaml" \
    --tp=8 --pp=8 --dp=16 --mbs=1 --gbs=1536 --recompute=full --dtype=fp16 \
    --links='gpu0-infiniband.leaf0.0;infiniband.leaf0.0-infiniband.spine0.0;tier:infiniband' \
    --factors=1,0.75,0.5,0.25,0 --routing=dimension-order,ecmp,shortest-path,fault-aware \
    --packet-check=3 --out="$out/faults" | tee "$out/faults.txt"
for k in 1 2 3; do cp "$out/faults/slowdown-$k.png" "$fig/faults-slowdown-$k.png"; done

# (3) An H100 with HBM at 50%, 75%, 100% and 2x its 80 GiB, for Llama-2-70B inference (TP4,
# prompt 2048, 256 generated tokens, batch 1 and 64) and training (64 GPUs, TP8 PP4 DP2 with
# sequence parallelism, selective recomputation, global batch 128 of 4096 tokens).
hbm=gpu.hbm_gib=0.5x,0.75x,1x,2x
for batch in 1 64; do
    "$bin" study hardware --timing --vary=$hbm \
        --model=llama2-70b --hardware=h100-sxm-80gb --mode=inference --tp=4 \
        --batch=$batch --prompt=2048 --gen=256 --dtype=fp16 \
        --out="$out/hbm-inference-b$batch" | tee "$out/hbm-inference-b$batch.txt"
    cp "$out/hbm-inference-b$batch/memory.png" "$fig/hbm-inference-b$batch-memory.png"
    cp "$out/hbm-inference-b$batch/step-time.png" "$fig/hbm-inference-b$batch-tpot.png"
done
"$bin" study hardware --timing --vary=$hbm \
    --model=llama2-70b --hardware=h100-sxm-80gb --tp=8 --pp=4 --dp=2 --sp \
    --mbs=1 --gbs=128 --seq=4096 --recompute=selective --dtype=bf16 \
    --out="$out/hbm-training" | tee "$out/hbm-training.txt"
cp "$out/hbm-training/memory.png" "$fig/hbm-training-memory.png"
cp "$out/hbm-training/step-time.png" "$fig/hbm-training-step.png"

# The same training job with every GPU power-capped (nvidia-smi -pl): step time against energy.
"$bin" study hardware --timing --vary=gpu.power.board_limit_w=700,600,500,400,300 \
    --model=llama2-70b --hardware=h100-sxm-80gb --tp=8 --pp=4 --dp=2 --sp \
    --mbs=1 --gbs=128 --seq=4096 --recompute=selective --dtype=bf16 \
    --out="$out/power-cap-training" | tee "$out/power-cap-training.txt"
cp "$out/power-cap-training/step-time.png" "$fig/power-cap-training-step.png"

# Decode on one GPU with its SM clock locked (nvidia-smi -lgc): energy per token against the
# time per token, two batch sizes on the H100 and batch 1 on the A100.
for batch in 1 64; do
    "$bin" study hardware --timing --vary=gpu.power.clock_lock_mhz=0,1700,1400,1100,800,500 \
        --model=llama3-8b --hardware=h100-sxm-80gb --mode=inference --tp=1 --batch=$batch \
        --prompt=512 --gen=256 --engine=vllm \
        --out="$out/clock-lock-h100-b$batch" | tee "$out/clock-lock-h100-b$batch.txt"
done
"$bin" study hardware --timing --vary=gpu.power.clock_lock_mhz=0,1260,1110,900,705,400 \
    --model=llama3-8b --hardware=a100-sxm-80gb --mode=inference --tp=1 --batch=1 \
    --prompt=512 --gen=256 --engine=vllm \
    --out="$out/clock-lock-a100-b1" | tee "$out/clock-lock-a100-b1.txt"

# The same H100 with its HBM bandwidth throttled or raised (capacity kept), batch 64: what
# capacity does not change, bandwidth does.
"$bin" study hardware --timing --vary=gpu.hbm_bandwidth_GBps=0.5x,0.75x,1x,2x \
    --model=llama2-70b --hardware=h100-sxm-80gb --mode=inference --tp=4 \
    --batch=64 --prompt=2048 --gen=256 --dtype=fp16 \
    --out="$out/hbm-bandwidth-inference-b64" | tee "$out/hbm-bandwidth-inference-b64.txt"
cp "$out/hbm-bandwidth-inference-b64/step-time.png" "$fig/hbm-bandwidth-inference-b64-tpot.png"

# Where capacity pays: every training layout of the same job (tp 2-8, pp 1-8, micro-batch 1-2,
# three recomputation modes) on the H100 and on the H200 (140.4 GiB at 4.8 TB/s), ranked together.
rm -rf "$out/hbm-sweep"
"$bin" sweep --timing --model=llama2-70b --hardware=h100-sxm-80gb,h200-sxm-141gb --gpus=64 \
    --gbs=128 --seq=4096 --dtype=bf16 --sp --tp=2,4,8 --pp=1,2,4,8 --mbs=1,2 \
    --recompute=none,selective,full --top=10 --out="$out/hbm-sweep" --plot \
    | tee "$out/hbm-sweep.txt"
cp "$out/hbm-sweep/sweep.png" "$fig/hbm-sweep.png"

# (4) Serving Llama-3 70B on one DGX H100 with vLLM: every replica layout (tp 1-8, pp 1-2) and
# batch size, prompt 1024, 256 generated tokens, TPOT target 30 ms, TTFT target 2 s.
"$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb --gpus=8 \
    --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 --engine=vllm \
    --tpot-slo=30 --ttft-slo=2000 --top=15 --out="$out/serving" | tee "$out/serving.txt"
cp "$out/serving/throughput-latency.png" "$fig/serving-llama3-70b-h100.png"
# The same job with chunked prefill, and with prefill and decode on separate instances.
"$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb --gpus=8 \
    --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 --engine=vllm \
    --tpot-slo=30 --ttft-slo=2000 --top=8 --batching=chunked \
    --out="$out/serving-chunked" | tee "$out/serving-chunked.txt"
"$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb --gpus=8 \
    --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 --engine=vllm \
    --tpot-slo=30 --ttft-slo=2000 --top=8 --batching=disaggregated \
    --out="$out/serving-disaggregated" | tee "$out/serving-disaggregated.txt"
# Under random arrivals: each plan's goodput (the highest Poisson rate at which 90% of the
# requests meet both targets), co-located, with chunked prefill, disaggregated and static.
for batching in continuous chunked disaggregated static; do
    "$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb --gpus=8 \
        --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 \
        --engine=vllm --tpot-slo=30 --ttft-slo=2000 --top=8 --goodput --batching=$batching \
        --out="$out/serving-goodput-$batching" | tee "$out/serving-goodput-$batching.txt"
done
# The co-located goodput with a cached prefix of 768 of the 1,024 prompt tokens.
"$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb --gpus=8 \
    --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 \
    --engine=vllm --tpot-slo=30 --ttft-slo=2000 --top=8 --goodput --cached-prefix=768 \
    --out="$out/serving-goodput-cached" | tee "$out/serving-goodput-cached.txt"
# The same with half the requests finding the prefix.
"$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb --gpus=8 \
    --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 \
    --engine=vllm --tpot-slo=30 --ttft-slo=2000 --top=8 --goodput --cached-prefix=768 \
    --prefix-hit=50 --out="$out/serving-goodput-half-cached" \
    | tee "$out/serving-goodput-half-cached.txt"

# The fewest GPUs (up to 32) for 20 requests/s within the targets, each request dealt to the
# instance with the fewest outstanding.
"$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb --gpus=32 \
    --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 \
    --engine=vllm --tpot-slo=30 --ttft-slo=2000 --top=8 --rate=20 --size \
    --router=least-outstanding --out="$out/serving-size" | tee "$out/serving-size.txt"
# The same with chunked prefill, and with prefill and decode on instances of their own.
for batching in chunked disaggregated; do
    "$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb --gpus=32 \
        --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 \
        --engine=vllm --tpot-slo=30 --ttft-slo=2000 --top=8 --rate=20 --size \
        --router=least-outstanding --batching=$batching --out="$out/serving-size-$batching" \
        | tee "$out/serving-size-$batching.txt"
done
# The serving study at six precisions together: bf16, fp8 weights and GEMMs, int4 weights
# (GPTQ/AWQ), each with its 16-bit KV cache and with an fp8 one.
"$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb --gpus=8 \
    --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 \
    --engine=vllm --tpot-slo=30 --ttft-slo=2000 --top=8 --dtype=bf16,fp8,int4 \
    --kv-cache-dtype=auto,fp8 --out="$out/serving-precisions" | tee "$out/serving-precisions.txt"

# The serving study on three machines together: H100, H200 and A100 nodes.
"$bin" study serving --timing --model=llama3-70b --hardware=h100-sxm-80gb,h200-sxm-141gb,a100-sxm-80gb \
    --gpus=8 --tp=1,2,4,8 --pp=1,2 --batch=1,4,16,32,64,128,256 --prompt=1024 --gen=256 \
    --engine=vllm --tpot-slo=30 --ttft-slo=2000 --top=8 --out="$out/serving-hardware" \
    | tee "$out/serving-hardware.txt"

# A step breakdown (run --out) of the healthy faults-study job.
"$bin" run --model=gpt3-175b --hardware="$root/examples/studies/a100-sxm-80gb-2to1.yaml" \
    --tp=8 --pp=8 --dp=16 --mbs=1 --gbs=1536 --recompute=full --dtype=fp16 \
    --out="$out/faults-healthy-run" > "$out/faults-healthy-run.txt"
rm -f "$out"/faults-healthy-run/trace.* # 1,024 traces of a few MB each: only the breakdown is kept
cp "$out/faults-healthy-run/breakdown.png" "$fig/faults-healthy-breakdown.png"
# The NIC link of the study degraded to 0.25 only from 12 s into the step (mid-step fault).
"$bin" run --model=gpt3-175b --hardware="$root/examples/studies/a100-sxm-80gb-2to1.yaml" \
    --tp=8 --pp=8 --dp=16 --mbs=1 --gbs=1536 --recompute=full --dtype=fp16 \
    --fault=gpu0-infiniband.leaf0.0:0.25@12s > "$out/faults-midstep-run.txt"
echo "case studies: outputs in $out, figures in $fig"
