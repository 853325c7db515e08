/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The bad-input matrix over the real command line: every case runs the built rapid-llm tool and
// must exit with status 2 and one line "rapid-llm <command>: error: ..." that names the option
// (or the file and field) and, where the value was a number, the value and the allowed range.
// Nothing in the table may crash, hang, print help instead, or run.

#include "cli-process.h"
#include "ns3/chakra-trace-writer.h"
#include "ns3/execution-trace.h"
#include "ns3/preset-registry.h"
#include "ns3/test.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace ns3;
using namespace ns3::rapidllm;

#ifdef RAPIDLLM_CLI

namespace {

/** One bad command line and what its error must name. */
struct BadInput
{
    std::vector<std::string> args;    //!< the command and its options
    std::vector<std::string> needles; //!< what the message must contain
};

/** \return \p text with the first \p from replaced by \p to */
std::string
With(std::string text, const std::string& from, const std::string& to)
{
    const std::size_t at = text.find(from);
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

/** \return the path of a file holding \p text */
std::string
WriteFile(const std::string& dir, const std::string& name, const std::string& text)
{
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
}

} // namespace

/**
 * \brief Every class of bad command-line input (issue 14 and the option contract of issue 10):
 * missing, non-numeric, negative, wrapping and out-of-range values, options of the other mode,
 * unknown or repeated options, bad choices, directories and damaged YAML given as inputs.
 */
class CliBadInputTestCase : public TestCase
{
  public:
    CliBadInputTestCase()
        : TestCase("every bad command line exits 2 with one line naming the option")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("bad-input");
        const std::string dir = scratch.Path();
        std::string model;
        std::string hw;
        PresetRegistry::Find("models", "gpt-1.7b", model);
        PresetRegistry::Find("hardware", "a100-sxm-80gb", hw);
        const std::string wrapLayers =
            WriteFile(dir, "layers.yaml", With(model, "layers: 24", "layers: 4294967320"));
        const std::string wrapHeads =
            WriteFile(dir, "heads.yaml", With(model, "heads: 24", "heads: 4294967296"));
        const std::string wrapKvHeads = WriteFile(
            dir, "kv.yaml", With(model, "heads: 24\n", "heads: 24\nkv_heads: 4294967296\n"));
        const std::string wrapHidden =
            WriteFile(dir, "hidden.yaml", With(model, "hidden: 2304", "hidden: 4294969600"));
        const std::string wrapFfn =
            WriteFile(dir, "ffn.yaml", With(model, "ffn: 9216", "ffn: 4294976512"));
        const std::string wrapVocab =
            WriteFile(dir, "vocab.yaml", With(model, "vocab: 51200", "vocab: 4295018496"));
        const std::string noLayers =
            WriteFile(dir, "nolayers.yaml", With(model, "layers: 24", "layers:"));
        const std::string textLayers =
            WriteFile(dir, "textlayers.yaml", With(model, "layers: 24", "layers: abc"));
        const std::string duplicate = WriteFile(dir, "dup.yaml", model + "layers: 12\n");
        // Soft faults too small to finish (they once made a replay spin for ever).
        const std::string tinyFault =
            WriteFile(dir,
                      "fault.yaml",
                      With(hw,
                           "  routing: dimension-order\n",
                           "  routing: dimension-order\n"
                           "  faults: [{link: gpu0-gpu1, bandwidth_factor: 1e-300}]\n"));
        const std::string tinyFault12 =
            WriteFile(dir,
                      "fault12.yaml",
                      With(hw,
                           "  routing: dimension-order\n",
                           "  routing: dimension-order\n"
                           "  faults: [{link: gpu0-gpu1, bandwidth_factor: 1e-12}]\n"));
        const std::string hugeHbm =
            WriteFile(dir, "hbm.yaml", With(hw, "hbm_gib: 80", "hbm_gib: 1e308"));
        const std::string quoted =
            WriteFile(dir, "quoted.yaml", With(hw, "hbm_gib: 80", "hbm_gib: \"80\""));
        const std::string noSuchNode =
            WriteFile(dir,
                      "node.yaml",
                      With(hw,
                           "  routing: dimension-order\n",
                           "  routing: dimension-order\n"
                           "  faults: [{link: gpu99-nvlink.sw0, bandwidth_factor: 0.5}]\n"));
        const std::string hwFlag = "--hardware=a100-sxm-80gb";
        const std::string notFolder = WriteFile(dir, "afile", "a file\n");
        const std::string fullyConnected =
            WriteFile(dir,
                      "fc.yaml",
                      "base: a100-sxm-80gb\nname: fc\nnetwork:\n  dimensions:\n    - name: nvlink\n"
                      "      topology: fully_connected\n      size: 4096\n");
        const std::string misspeltJob =
            WriteFile(dir, "job.yaml", "model: gpt-1.7b\nhardware: a100\n");
        const std::string badTables = dir + "/tables";
        std::filesystem::create_directories(badTables);
        WriteFile(badTables,
                  "flash-attention-h100.csv",
                  "# a published row, its sequence made negative\n"
                  "source,pass,causal,head_dim,seq_len,batch,heads,kernel,tflops\n"
                  "fa3-paper,forward,no,64,-512,32,32,flash2,282\n");
        // A row whose layout the run's own checks refuse: 500 is not a multiple of 16 x 32.
        WriteFile(badTables,
                  "megatron-sc21-table1.csv",
                  "model,tp,pp,gpus,global_batch,micro_batch,layers_per_virtual_stage,"
                  "grad_reduce,tp_reduce,tflops_per_gpu,iteration_s\n"
                  "gpt-1.7b,1,1,32,500,16,0,overlap,blocking,137,3.53\n");
        // A virtual-stage size the layers per stage do not divide (it was rounded down).
        const std::string badVirtual = dir + "/tables-vpp";
        std::filesystem::create_directories(badVirtual);
        WriteFile(badVirtual,
                  "megatron-sc21-table1.csv",
                  "model,tp,pp,gpus,global_batch,micro_batch,layers_per_virtual_stage,"
                  "grad_reduce,tp_reduce,tflops_per_gpu,iteration_s\n"
                  "gpt-145.6b,8,8,1536,1536,1,4,after_backward,blocking,148,24.82\n");
        const std::string u32 = "from 1 to 4294967295";
        const std::string gpus = "from 1 to 16777216";

        // Files that are not regular files, a trace padded with zeros, a job file of one mode
        // giving the other's keys.
        const std::string fifo = dir + "/fifo.yaml";
        NS_TEST_ASSERT_MSG_EQ(::mkfifo(fifo.c_str(), 0600), 0, "a FIFO");
        const std::string traces = dir + "/traces";
        NS_TEST_ASSERT_MSG_EQ(RunCli({"trace",
                                      "--model=gpt-1.7b",
                                      "--layers=2",
                                      "--tp=2",
                                      "--gbs=1",
                                      "--seq=256",
                                      "--out=" + traces},
                                     dir)
                                  .status,
                              0,
                              "a trace set");
        const std::string padded = dir + "/padded";
        std::filesystem::copy(traces, padded);
        std::filesystem::resize_file(padded + "/trace.0.et",
                                     std::filesystem::file_size(padded + "/trace.0.et") + 4096);
        const std::string otherMode =
            WriteFile(dir, "infer.yaml", "mode: inference\nmodel: gpt-1.7b\nglobal_batch: 4\n");
        const std::string badOrder =
            WriteFile(dir, "order.yaml", "model: gpt-1.7b\nparallel:\n  rank_order: tp-pp\n");
        const std::string badSchedule =
            WriteFile(dir, "schedule.yaml", "model: gpt-1.7b\nparallel:\n  pp_schedule: zb\n");
        const std::string jobRouting =
            WriteFile(dir, "job-routing.yaml", "model: gpt-1.7b\nrouting: bogus\n");
        const std::string jobBackend =
            WriteFile(dir, "job-backend.yaml", "model: gpt-1.7b\nbackend: bogus\n");
        const std::string jobFault =
            WriteFile(dir,
                      "job-fault.yaml",
                      "model: gpt-1.7b\ngpus: 2\nparallel: {tp: 2}\nfault: gpu0-gpu9\n");
        const std::string jobSlow =
            WriteFile(dir,
                      "job-slow.yaml",
                      "model: gpt-1.7b\ngpus: 2\nparallel: {tp: 2}\nslow_gpus: [gpu1:0]\n");
        const std::string jobSlowMap =
            WriteFile(dir, "job-slow-map.yaml", "model: gpt-1.7b\nslow_gpus: {gpu1: 0.5}\n");
        const std::string jobSlowNested = WriteFile(
            dir, "job-slow-nested.yaml", "model: gpt-1.7b\nslow_gpus: [gpu1:0.5, [gpu2:0.5]]\n");
        const std::string badRouting = WriteFile(
            dir, "routing.yaml", "base: a100-sxm-80gb\nname: r\nnetwork:\n  routing: bogus\n");
        const std::string badAlgorithm =
            WriteFile(dir,
                      "algorithm.yaml",
                      "base: a100-sxm-80gb\nname: a\nnetwork:\n  dimensions:\n"
                      "    - name: nvlink\n      collective: rign\n");
        const std::string inheritsAlgorithm =
            WriteFile(dir, "inherits.yaml", "base: algorithm.yaml\nname: b\n");
        const std::vector<std::string> faults = {"study",
                                                 "faults",
                                                 "--model=gpt-1.7b",
                                                 "--gpus=2",
                                                 "--tp=2",
                                                 "--gbs=1",
                                                 "--links=tier:nvlink",
                                                 "--out=" + dir + "/f"};
        // Two ranks that each receive before they send: a deadlock, not a slow replay (the
        // progress display's timer kept the simulator going until the watchdog's time limit,
        // which then blamed a rate far too low).
        {
            TraceSet deadlock;
            for (uint32_t r = 0; r < 2; ++r)
            {
                ExecutionTrace t(r);
                const uint32_t recv = t.AddRecv("r", 1 - r, 1, 1024);
                t.AddSend("s", 1 - r, 1, 1024, {recv});
                deadlock.ranks.push_back(t);
            }
            std::filesystem::create_directories(dir + "/deadlock");
            ChakraTraceWriter::WriteTraceSet(dir + "/deadlock/trace", deadlock);
        }
        const std::vector<BadInput> cases = {
            {{"replay", "--trace=" + dir + "/deadlock/trace", "--hardware=a100-sxm-80gb"},
             {"the trace cannot finish", "rank 0 node 0 'r'", "no matching send"}},
            // Found by fuzzing: a job file's routing or backend named neither file nor option.
            {{"run", "--run=" + jobRouting}, {"job-routing.yaml", "field 'routing'", "bogus"}},
            {{"run", "--run=" + jobBackend}, {"job-backend.yaml", "field 'backend'", "bogus"}},
            // A job file's faults and slow GPUs are its own errors, not the options'.
            {{"run", "--run=" + jobFault}, {"job-fault.yaml", "field 'fault'", "gpu9"}},
            {{"run", "--run=" + jobSlow}, {"job-slow.yaml", "field 'slow_gpus'", "1e-6 to 1"}},
            {{"run", "--run=" + jobSlowMap},
             {"job-slow-map.yaml:2", "field 'slow_gpus'", "a list of texts", "gpu3:0.9"}},
            {{"run", "--run=" + jobSlowNested},
             {"job-slow-nested.yaml:2", "field 'slow_gpus'", "a list of texts"}},
            {{"run", "--hardware=" + badRouting},
             {"routing.yaml:4", "field 'network.routing'", "'bogus'", "dimension-order"}},
            // An algorithm's name was checked only when collectives were planned: no file line.
            {{"run", "--hardware=" + badAlgorithm},
             {"algorithm.yaml:6",
              "network.dimensions[0].collective",
              "unknown collective algorithm 'rign'",
              "ring"}},
            {{"run", "--hardware=" + inheritsAlgorithm},
             {"algorithm.yaml:6", "unknown collective algorithm 'rign'"}},
            {{"run", "--run=" + badOrder}, {"order.yaml", "field 'parallel.rank_order'", "tp-pp"}},
            {{"run", "--run=" + badSchedule},
             {"schedule.yaml", "field 'parallel.pp_schedule'", "'zb'", "1f1b, zb-h1, zb-v"}},
            {{"run", "--fault=gpu0-nvlink.sw0:0x1"}, {"option --fault", "0x1", "FACTOR"}},
            {{"study", "hardware", "--out=" + dir + "/v", "--vary=gpu.hbm_gib=nanx"},
             {"option --vary", "not a finite number"}},
            // A list's index written as a field said the list "holds a value".
            {{"study",
              "hardware",
              "--out=" + dir + "/v",
              "--vary=network.dimensions.0.bandwidth_GBps=100,200"},
             {"'network.dimensions' is a list",
              "dimensions[0]",
              "network.nvlink, network.infiniband"}},
            {{"run", "--model=" + fifo}, {"option --model", "fifo.yaml", "not a regular file"}},
            {{"replay", "--trace=" + padded}, {"trace.0.et", "is empty", "padded with zeros"}},
            {{"replay", "--trace=" + traces, "--comm-groups=/dev/zero"},
             {"/dev/zero", "not a regular file"}},
            // Found by fuzzing: an MLP narrower than the group ("every dimension must be at
            // least 1" from the compute model, naming neither file nor field).
            {{"run", "--model=llama3-8b", "--tp=8", "--set=model.ffn=100"},
             {"option --tp", "ffn (100) must be divisible by tp (8)"}},
            {{"run", "--model=deepseek-v2-lite", "--tp=8", "--set=model.moe.expert_ffn=12"},
             {"option --tp", "expert_ffn (12) must be divisible by the expert tensor degree (8)"}},
            // Found by fuzzing: a list where a flag goes was shown as "got '?'".
            {{"run", "--set=network.nvlink.nccl.nvls=[]"},
             {"nccl.nvls", "expected true or false, got a list"}},
            // A one-GPU collective printed 0 us and 0 GB/s.
            {{"collective", hwFlag, "--gpus=1"}, {"option --gpus", "2 or more GPUs"}},
            // A number written with its unit, and a missing acceptance, said what was wrong.
            {{"study", "serving", "--model=gpt-1.7b", "--gpus=1", "--tpot-slo=30ms"},
             {"option --tpot-slo", "'30ms'", "the number alone, in ms"}},
            {{"run",
              "--model=gpt-1.7b",
              "--mode=inference",
              "--batch=1",
              "--prompt=16",
              "--gen=4",
              "--spec-tokens=3"},
             {"option --spec-acceptance", "spec_tokens 3", "needs the probability"}},
            {{"run", "--model=gpt-1.7b", "--gpus=2", "--gbs=2", "--gpu-set=gpu0:gpu.sm_count"},
             {"option --gpu-set", "gpu0", "not PATH=VALUE", "gpu.power.board_limit_w=400"}},
            {Cat(faults, {"--factors=1.5"}), {"option --factors", "'1.5'", "GPU set's"}},
            // Found by fuzzing: a root for an all-reduce was accepted, and changed nothing.
            {{"collective", hwFlag, "--op=all-reduce", "--root=3"},
             {"option --root", "broadcast and reduce only", "all-reduce"}},
            // Found by fuzzing: a double rounded 2^60 + 1 bytes down to the largest allowed.
            {{"collective", hwFlag, "--bytes=1152921504606846977"},
             {"option --bytes", "1152921504606846977 bytes) is too large"}},
            // Found by fuzzing: accepted, and changed nothing (the trace fixes the model).
            {{"replay", "--trace=" + traces, "--set=model.layers=2"},
             {"option --set", "model.layers=2", "gpu. and network. paths only"}},
            {{"collective", hwFlag, "--set=model.layers=2"},
             {"option --set", "model.layers=2", "a collective runs no model"}},
            {{"gemm", "--m=1", "--n=1", "--k=1", "--set=network.nvlink.bandwidth_GBps=0"},
             {"bandwidth_GBps", "set by override"}},
            // Found by a user: accepted, and changed nothing (the trace fixes the kernel times).
            {{"replay", "--trace=" + traces, "--set=gpu.hbm_bandwidth_GBps=0.5x"},
             {"option --set", "gpu.hbm_bandwidth_GBps=0.5x", "gpu.sm_count only"}},
            {{"run", "--set=gpu.sm_count=5,gpu.sm_count=6"},
             {"option --set", "'gpu.sm_count' is given twice"}},
            {{"run", "--run=" + otherMode},
             {"infer.yaml", "global_batch", "does not apply to mode inference"}},
            {{"run", "--set=gpu.clock_mhz=1"}, {"gpu.clock_mhz", "between 10"}},
            {{"run", "--set=gpu.clock_mhz=700"}, {"gpu.power.boost_clock_mhz", "twice"}},
            {{"run", "--set=gpu.hbm_bandwidth_GBps=1e-20"},
             {"gpu.hbm_bandwidth_GBps", "between 1"}},
            {{"collective", "--hardware=a100-sxm-80gb", "--reduce-GBps=1e-100"},
             {"option --reduce-GBps", "1 to 1e9"}},
            {{"run", "--PrintAttributes=ns3::rapidllm::NoSuchClass"},
             {"option --PrintAttributes", "NoSuchClass", "--PrintTypeIds"}},
            {{"run", "--PrintGroup"}, {"option --PrintGroup", "needs a name"}},
            // A missing or non-numeric value: our message and exit 2, not ns-3's help and 1.
            {{"run", "--tp"}, {"option --tp", "needs a value", gpus}},
            {{"run", "--tp="}, {"option --tp", "needs a value", gpus}},
            {{"run", "--gpus=abc"}, {"option --gpus", "'abc'", gpus}},
            {{"run", "--json=maybe"}, {"option --json", "'maybe'", "true or false"}},
            {{"run", "--mode"}, {"option --mode", "needs a value", "training, inference"}},
            // Negative and wrapping numbers.
            {{"run", "--gpus=-4"}, {"option --gpus", "'-4'", gpus}},
            {{"run", "--mbs=2147483648", "--dp=2"}, {"option --mbs", "4294967296", "--gbs"}},
            {{"run", "--mbs=65536", "--dp=65536"}, {"option --mbs", "4294967296"}},
            {{"run", "--mbs=99999999999999999999999"}, {"option --mbs", u32}},
            {{"run", "--layers=4294967296"}, {"option --layers", "'4294967296'", u32}},
            {{"run", "--gpus=8", "--slow-gpus=gpu8:0.5"}, {"option --slow-gpus", "gpu0 to gpu7"}},
            {{"run", "--gpus=8", "--slow-gpus=gpu2:0"}, {"option --slow-gpus", "1e-6 to 1"}},
            // GPUs of their own spec: a GPU the job has, gpu. fields, no capacity of its own;
            // run's.
            {{"run", "--gpus=8", "--gpu-set=gpu8:gpu.hbm_bandwidth_GBps=0.5x"},
             {"option --gpu-set", "gpu0 to gpu7"}},
            {{"run", "--gpus=8", "--gpu-set=gpu2:model.layers=2"},
             {"option --gpu-set", "gpu2", "gpu.*"}},
            {{"run", "--gpus=8", "--set=network.nvlink.nccl.ring_channels=1000"},
             {"ring_channels", "allowed: 1 to 64", "set by override"}},
            {{"run", "--gpus=8", "--gpu-set=gpu2:gpu.hbm_gib=40"},
             {"option --gpu-set", "gpu.hbm_gib is not one GPU's own"}},
            {{"run", "--gpus=8", "--gpu-set=gpu2:gpu.host.launch_us=9"},
             {"option --gpu-set", "gpu.host is not one GPU's own", "the host's launches"}},
            {{"run", "--gpus=8", "--gpu-set=gpu2:gpu.bogus=1"},
             {"option --gpu-set", "gpu2: 'gpu.bogus': unknown field"}},
            {{"run", "--gpus=8", "--gpu-set=gpu2"}, {"option --gpu-set", "gpu<i>:PATH=VALUE"}},
            {{"replay", "--trace=t", "--gpu-set=gpu0:gpu.clock_mhz=1x"},
             {"unknown option --gpu-set for rapid-llm replay"}},
            // A speed so small that the step outran the watchdog.
            {{"run", "--gpus=8", "--slow-gpus=gpu2:1e-300"}, {"option --slow-gpus", "1e-6 to 1"}},
            {{"run", "--gpus=8", "--slow-gpus=2:0.5"}, {"option --slow-gpus", "gpu<i>:SPEED"}},
            {{"run", "--gpus=8", "--slow-gpus=gpu2:0.5,gpu2:0.9"},
             {"option --slow-gpus", "given twice"}},
            {{"memory", "--slow-gpus=gpu2:0.5"}, {"unknown option --slow-gpus"}},
            // A model field the reshaping options broke, which no option names.
            {{"run", "--model=deepseek-v2-lite", "--layers=1"},
             {"deepseek-v2-lite",
              "'moe.first_dense_layers'",
              "0 to",
              "(after overrides --layers=1)"}},
            {{"run", "--seq=4294967295"}, {"option --seq", "4294967295", "max_sequence 2048"}},
            {{"run", "--seq=4096"}, {"option --seq", "4096", "1 to 2048"}},
            {{"run", "--gbs=4294967295"}, {"option --gbs", "2^60"}},
            {{"run", "--mode=inference", "--gen=4294967295"},
             {"option --gen", "4294967295", "max_sequence 2048"}},
            {{"run", "--zero=4"}, {"option --zero", "'4'", "from 0 to 3"}},
            {{"run", "--gpus=16777217"}, {"option --gpus", gpus}},
            // Options of the other mode.
            {{"run", "--mode=inference", "--gbs=8"}, {"option --gbs", "--mode=inference"}},
            {{"run", "--mode=inference", "--mbs=2"}, {"option --mbs", "--mode=inference"}},
            {{"run", "--mode=inference", "--recompute=full"},
             {"option --recompute", "--mode=inference"}},
            {{"run", "--mode=inference", "--zero=1"}, {"option --zero", "--mode=inference"}},
            {{"run", "--mode=inference", "--grad-reduce=after_backward"},
             {"option --grad-reduce", "--mode=inference"}},
            {{"run", "--mode=inference", "--vpp=2"}, {"option --vpp", "--mode=inference"}},
            {{"run", "--mode=inference", "--pp-schedule=zb-h1"},
             {"option --pp-schedule", "--mode=inference"}},
            {{"run", "--pp-schedule=zb"}, {"option --pp-schedule", "'zb'", "1f1b, zb-h1, zb-v"}},
            {{"run", "--pp-schedule=zb-h1"},
             {"option --pp-schedule", "zb-h1", "pp >= 2", "or use 1f1b"}},
            {{"run", "--pp-schedule=zb-h1", "--pp=2", "--vpp=2", "--gbs=4"},
             {"option --pp-schedule", "zb-h1", "vpp 1"}},
            {{"run", "--pp-schedule=zb-v", "--pp=2", "--gbs=4"},
             {"option --pp-schedule", "zb-v", "two model chunks", "vpp 2", "or use 1f1b"}},
            {{"run",
              "--pp-schedule=zb-v",
              "--pp=4",
              "--vpp=2",
              "--gbs=4",
              "--first-stage-layers=4",
              "--last-stage-layers=4"},
             {"option --pp-schedule", "zb-v", "first_stage_layers and last_stage_layers 0"}},
            {{"run", "--pp-schedule=zb-v", "--pp=5", "--vpp=2", "--gbs=5", "--model=gpt-1.7b"},
             {"option --pp", "divisible by pp x vpp (5 x 2)"}},
            {{"run", "--batch=4"}, {"option --batch", "--mode=training"}},
            {{"run", "--gen=4"}, {"option --gen", "--mode=training"}},
            {{"memory", "--first-token=decode"}, {"option --first-token", "--mode=training"}},
            // Unknown, repeated and stray arguments; bad choices.
            {{"run", "--bogus=1"}, {"unknown option --bogus", "--tp"}},
            {{"run", "--jsno"}, {"unknown option --jsno", "(did you mean --json?)"}},
            // A network too small names its sizes and how to hold more.
            {{"collective",
              "--hardware=a100-sxm-80gb",
              "--gpus=32",
              "--set=network.infiniband.size=2"},
             {"field 'network.dimensions.infiniband.size'",
              "(nvlink 8 x infiniband 2)",
              "size: auto"}},
            {{"presets", "--json"}, {"unknown option --json", "--load"}},
            {{"run", "--tp=2", "--tp=4"}, {"option --tp", "given twice"}},
            {{"run", "stray"}, {"unexpected argument 'stray'"}},
            {{"run", "--recompute=most"},
             {"option --recompute", "'most'", "none, selective, full"}},
            {{"run", "--dtype=fp64"}, {"option --dtype", "'fp64'", "bf16"}},
            // The workload's own check of the run settings names the option given.
            {{"run", "--gbs=100000000"}, {"option --gbs: the job's graphs would hold"}},
            {{"run", "--model=llama3-8b", "--pp=5", "--gbs=10"},
             {"option --pp", "--first-stage-layers and --last-stage-layers"}},
            // memory gave a verdict for a type the GPU has no rate for (run refused it).
            {{"memory",
              "--model=llama2-7b",
              "--hardware=a100-sxm-80gb",
              "--mode=inference",
              "--dtype=fp8"},
             {"option --dtype: fp8: the NVIDIA A100-SXM4-80GB (a100-sxm-80gb) lists no rate",
              "allowed on it: fp32, tf32, fp16, bf16, int8, int4"}},
            // Training is offered the training types only (int8 would be refused next).
            {{"memory", "--model=llama2-7b", "--hardware=a100-sxm-80gb", "--dtype=fp8"},
             {"allowed on it for training: fp32, tf32, fp16, bf16"}},
            {{"run", "--dtype=fp8", "--fp8-scaling=block"},
             {"option --fp8-scaling", "'block'", "delayed, current"}},
            {{"run", "--mode=inference", "--fp8-scaling=current"},
             {"option --fp8-scaling", "--mode=inference"}},
            {{"run", "--tp=2", "--tp-comm-overlap=userbuffers"},
             {"option --tp-comm-overlap", "(parallel.sp, --sp; off)", "none"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--tp-comm-overlap=userbuffers"},
             {"option --tp-comm-overlap", "give --sp"}},
            {{"run", "--zero=1", "--param-gather=early"},
             {"option --param-gather", "'early'", "auto, overlap, after_step"}},
            {{"run", "--param-gather=overlap"},
             {"option --param-gather", "--zero=1 or 2 (zero is 0)", "auto"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--etp=2", "--sp"},
             {"option --etp", "not allowed in a sweep", "give 1"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--etp=1"}, {"option --etp", "give --sp"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--param-gather=after_step"},
             {"option --param-gather", "--zero=1 or 2 (zero is 0)"}},
            {{"run", "--mode=inference", "--param-gather=overlap"},
             {"option --param-gather", "--mode=inference"}},
            {{"run", "--attention=flash4"},
             {"option --attention", "'flash4'", "flash, flash3, triton2022, standard"}},
            // Hopper's attention kernels on a GPU without warpgroup MMAs (the A100 default).
            {{"run", "--attention=flash3"},
             {"gpu.warp_specialized", "--attention=flash3", "--attention=flash"}},
            {{"memory", "--main-grads=fp16"},
             {"option --main-grads", "fp16 gradients with bf16 weights", "auto, fp32, bf16"}},
            // Values the model rejects, reported as the option that set them.
            {{"run", "--model=gpt-4"}, {"option --model", "'gpt-4'", "gpt3-175b"}},
            {{"run", "--model=" + dir}, {"option --model", "directory"}},
            {{"run", "--hardware=" + dir}, {"option --hardware", "directory"}},
            {{"run", "--hardware=" + dir + "/none.yaml"}, {"option --hardware", "cannot open"}},
            {{"run", "--backend=warp"}, {"option --backend", "'warp'", "flow"}},
            {{"run", "--routing=valiant"}, {"option --routing", "'valiant'", "dimension-order"}},
            {{"run", "--tp=7"}, {"option --tp", "heads (96)", "tp (7)"}},
            {{"run", "--gpus=12", "--tp=8"}, {"option --gpus", "12", "tp x pp x cp (8)"}},
            {{"run", "--gbs=3", "--dp=2"}, {"option --gbs", "global batch (3)"}},
            {{"run", "--hidden=100", "--heads=3"}, {"option --heads", "hidden (100)"}},
            // Damaged YAML: the file, the line, the field, the value and the range.
            {{"run", "--model=" + wrapLayers}, {"layers.yaml:", "layers", "4294967320", u32}},
            {{"run", "--model=" + wrapHeads}, {"heads.yaml:", "heads", "4294967296", u32}},
            {{"run", "--model=" + wrapKvHeads}, {"kv.yaml:", "kv_heads", "4294967296", u32}},
            {{"run", "--model=" + wrapHidden}, {"hidden.yaml:", "hidden", "4294969600", u32}},
            {{"run", "--model=" + wrapFfn}, {"ffn.yaml:", "ffn", "4294976512", u32}},
            {{"run", "--model=" + wrapVocab}, {"vocab.yaml:", "vocab", "4295018496", u32}},
            {{"run", "--model=" + noLayers}, {"nolayers.yaml:", "layers", "missing"}},
            {{"run", "--model=" + textLayers}, {"textlayers.yaml:", "layers", "'abc'"}},
            {{"run", "--model=" + duplicate}, {"dup.yaml:", "layers", "duplicate key"}},
            {{"run", "--hardware=" + tinyFault},
             {"fault.yaml:", "faults[0].bandwidth_factor", "got 1e-300", "1e-06 to 1"}},
            {{"collective", "--hardware=" + tinyFault12, "--gpus=2"},
             {"fault12.yaml:", "faults[0].bandwidth_factor", "got 1e-12", "1e-06 to 1"}},
            {{"run", "--hardware=" + hugeHbm}, {"hbm.yaml:", "gpu.hbm_gib", "1e308", "1048576"}},
            // collective: sizes, counts, lists.
            {{"collective"}, {"option --hardware", "required"}},
            {{"collective", hwFlag, "--bytes=99999999999999999999999"},
             {"option --bytes", "too large"}},
            {{"collective", hwFlag, "--bytes=12XB"}, {"option --bytes", "unknown unit"}},
            {{"collective", hwFlag, "--bytes=-5"}, {"option --bytes", "not a size"}},
            {{"collective", hwFlag, "--chunks=-1"}, {"option --chunks", "'-1'", "from 0 to 65536"}},
            {{"collective", hwFlag, "--gpus=0"}, {"option --gpus", "'0'", gpus}},
            {{"collective", hwFlag, "--op=broadcast", "--root=8"}, {"option --root", "0 to 7"}},
            {{"collective", hwFlag, "--op=allreduce"}, {"option --op", "all-reduce"}},
            {{"collective", hwFlag, "--fault=,,"}, {"option --fault", "empty item"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--fault=gpu0-gpu1:0.5@1ms"},
             {"option --fault", "drop @TIME"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--set=gpu.no_such_field=2"},
             {"gpu.no_such_field", "unknown field"}},
            // Found by a user: only the first list value's reason was named.
            {{"sweep", "--gpus=8", "--gbs=8", "--tp=3,5", "--pp=1"},
             {"option --gpus", "tp 3 x pp 1 x cp 1 does not divide", "tp 5 x pp 1 x cp 1"}},
            {{"collective", hwFlag, "--fault=gpu0-gpu1:2"},
             {"option --fault", "or a number from 1e-06 to 1"}},
            {{"collective", hwFlag, "--fault=gpu0-gpu1:1e-12"},
             {"option --fault", "1e-12", "1e-06 to 1"}},
            {{"collective", hwFlag, "--fault=gpu0-gpu1:1e-300"},
             {"option --fault", "1e-300", "1e-06 to 1"}},
            {{"collective", hwFlag, "--fault=gpu0-gpu1:abc"},
             {"option --fault", "or a number from 1e-06 to 1"}},
            {{"collective", hwFlag, "--fault=,"}, {"option --fault", "empty item"}},
            // Resource guards: refused up front with the estimate, not std::bad_alloc later.
            {{"run", "--gpus=16777216", "--tp=8"},
             {"16777216 GPUs", "GB of host memory", "4194304"}},
            {{"collective", hwFlag, "--gpus=16777216"},
             {"16777216 GPUs", "GB of host memory", "4194304"}},
            {{"collective", hwFlag, "--gpus=8192"},
             {"8192 ranks", "33554432", "--granularity=fluid"}},
            {{"collective", hwFlag, "--reduce-GBps=-1"}, {"option --reduce-GBps", "'-1'"}},
            {{"collective", hwFlag, "--fault=gpu1,gpu0-nvlink.sw0:0.5@1ms"},
             {"option --fault", "'gpu0-nvlink.sw0:0.5@1ms'", "drop @TIME"}},
            {{"collective", hwFlag, "--beside=0>8:1MiB"},
             {"option --beside", "'0>8:1MiB'", "0 to 7", "SRC>DST:BYTES"}},
            {{"collective", hwFlag, "--beside=0>0:1MiB"}, {"option --beside", "two different"}},
            {{"collective", hwFlag, "--beside=0-1:1MiB"}, {"option --beside", "not a transfer"}},
            {{"collective", hwFlag, "--beside=x>1:1MiB"}, {"option --beside", "whole number"}},
            {{"collective", hwFlag, "--beside=0>1:12XB"}, {"option --beside", "unknown unit"}},
            {{"collective", hwFlag, "--beside=0>1:0"}, {"option --beside", "sends nothing"}},
            {{"collective", hwFlag, "--beside=0>1:1K,"}, {"option --beside", "empty item"}},
            // gemm, sweep, xval and the trace commands.
            {{"gemm", "--m=18446744073709551615", "--n=1", "--k=1"}, {"option --m", u32}},
            {{"gemm", "--m=4", "--n=4"}, {"option --k", "required"}},
            // Named --batch only where one matrix alone fits (--batch was blamed for a size
            // that no batch could make fit).
            {{"gemm", "--m=4294967295", "--n=4294967295", "--k=4294967295", "--batch=4294967295"},
             {"option --m", "2^60"}},
            {{"gemm", "--m=300000000", "--n=300000000", "--k=1", "--batch=100000"},
             {"option --batch", "2^60"}},
            // Without --batch, the dimension that made it so (it named --batch, not given).
            {{"gemm", "--m=536870912", "--n=536870912", "--k=1"}, {"option --m", "2^60"}},
            {{"attention", "--heads=32", "--kv-heads=5"}, {"option --kv-heads", "does not divide"}},
            {{"attention", "--seq=100", "--kv-seq=50"}, {"option --kv-seq", "shorter than --seq"}},
            {{"attention", "--attention=flash3"}, {"gpu.warp_specialized", "--attention=flash"}},
            {{"attention", "--head-dim=4096"}, {"option --head-dim", "1024"}},
            {{"attention", "--dtype=int4"}, {"option --dtype", "weight-only"}},
            {{"run", "--dtype=int4"}, {"option --dtype", "int4 is an inference type"}},
            {{"run", "--kv-cache-dtype=fp8"}, {"option --kv-cache-dtype", "--mode=inference"}},
            {{"run", "--mode=inference", "--engine=vllm", "--kv-cache-dtype=int8"},
             {"option --kv-cache-dtype", "engine vllm", "auto, fp8"}},
            {{"run", "--mode=inference", "--engine=lmdeploy", "--kv-cache-dtype=fp8"},
             {"option --kv-cache-dtype", "engine lmdeploy", "auto, int8, int4"}},
            {{"run", "--mode=inference", "--gpu-memory-utilization=1.5"},
             {"option --gpu-memory-utilization", "0 to 1"}},
            {{"attention", "--batch=4294967295", "--heads=4294967295", "--seq=4294967295"},
             {"option --seq", "2^53"}},
            {{"sweep", "--gpus=8"}, {"option --gbs", "required"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--tp=1,,2"}, {"option --tp", "'1,,2'"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--recompute=none,most"},
             {"option --recompute", "'most'"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--seq=4096"}, {"option --seq", "max_sequence"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--shard=3/2"}, {"option --shard", "'3/2'", "I/N"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--shard=1"}, {"option --shard", "I/N"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--resume"}, {"option --resume", "--out"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--workers=-1"}, {"option --workers", "'-1'"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--cp=1,3"},
             {"option --cp", "3 does not divide the sequence (2048 tokens)"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--seq=2046", "--cp=1,2"},
             {"option --cp", "2 does not divide the sequence (2046 tokens) into 2 x cp"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--ep=1,2"},
             {"option --ep", "mixture-of-experts", "allowed: 1"}},
            {{"sweep", "--model=mixtral-8x7b", "--gpus=8", "--gbs=8", "--ep=3"},
             {"option --ep", "3 does not divide the experts (8)"}},
            // A data type the GPU has no rate for names the ones it has.
            {{"run", "--model=llama2-7b", "--hardware=a100-sxm-80gb", "--dtype=fp8"},
             {"option --dtype: fp8", "lists no rate for fp8", "allowed on it", "bf16"}},
            // A trace prefix with a directory wrote outside --out (../x) or failed as an
            // output error (exit 5); a fractional byte count was rounded (1.5 ran 2 bytes).
            {{"trace", "--layers=2", "--gbs=1", "--out=pfx", "--prefix=../esc"},
             {"option --prefix", "'../esc' is not a file name", "without '/'"}},
            {{"trace", "--layers=2", "--gbs=1", "--out=pfx", "--prefix=."},
             {"option --prefix", "not start with '.'"}},
            {{"collective", "--hardware=a100-sxm-80gb", "--bytes=1.5"},
             {"option --bytes", "'1.5' is 1.5 bytes, not a whole number of bytes"}},
            // gemm and attention blamed the hardware file (attention after a note on fp8
            // kernels).
            {{"gemm", "--m=64", "--n=64", "--k=64", "--hardware=a100-sxm-80gb", "--dtype=fp8"},
             {"option --dtype: fp8", "lists no rate for fp8", "allowed on it", "bf16"}},
            {{"attention", "--hardware=a100-sxm-80gb", "--dtype=fp8"},
             {"option --dtype: fp8", "lists no rate for fp8", "allowed on it", "bf16"}},
            // Expert parallelism splits dp only: an expert group over context-parallel ranks
            // was once let through and divided by zero in the layout.
            {{"run", "--model=mixtral-8x7b", "--gpus=8", "--cp=2", "--ep=8", "--seq=4096"},
             {"option --ep", "dp (4) must be divisible by ep (8)", "etp 1"}},
            // Folded expert groups (--etp=1): whole tensor- and context-parallel groups in each
            // expert group, sequence parallelism, a mixture-of-experts model, training.
            {{"run", "--model=mixtral-8x7b", "--tp=4", "--etp=2", "--gpus=4"},
             {"option --etp", "2 is not allowed", "tp (4", "or 1"}},
            // etp's own values before the experts' width (14336 is not a multiple of 3): the
            // error named --tp.
            {{"run", "--model=mixtral-8x7b", "--tp=2", "--etp=3", "--gpus=8", "--layers=2"},
             {"option --etp", "3 is not allowed", "tp (2"}},
            // A layer step leaving no expert layer after the dense ones: the steps that leave one.
            {{"memory",
              "--model=mixtral-8x7b",
              "--layers=8",
              "--set=model.moe.first_dense_layers=6,model.moe.layer_step=3"},
             {"moe.layer_step", "after the 6 dense ones", "allowed: 1, 2, 4, 7, 8"}},
            // Any etp on a dense model, tp's too.
            {{"run", "--model=llama3-8b", "--tp=2", "--etp=2", "--gpus=8", "--layers=2"},
             {"option --etp", "needs a mixture-of-experts model"}},
            {{"run",
              "--model=mixtral-8x7b",
              "--tp=4",
              "--ep=2",
              "--etp=1",
              "--sp=true",
              "--gpus=8"},
             {"option --ep", "ep (2) must be a multiple of tp x cp (4)"}},
            {{"run",
              "--model=mixtral-8x7b",
              "--tp=2",
              "--ep=8",
              "--etp=1",
              "--sp=true",
              "--gpus=4"},
             {"option --ep", "dp (2) must be divisible by ep / (tp x cp) (4)"}},
            {{"run", "--model=mixtral-8x7b", "--tp=2", "--ep=4", "--etp=1", "--gpus=8"},
             {"option --sp", "sequence parallelism"}},
            {{"run",
              "--model=mixtral-8x7b",
              "--mode=inference",
              "--tp=4",
              "--ep=2",
              "--etp=1",
              "--gpus=8"},
             {"option --ep", "in inference", "must equal tp (4)"}},
            {{"run", "--model=gpt-1.7b", "--tp=2", "--etp=1", "--gpus=2"},
             {"option --etp", "mixture-of-experts"}},
            {{"merge", "--out=" + dir + "/merged"}, {"option --dirs", "required"}},
            {{"merge", dir + "/none", "--out=" + dir + "/merged"}, {dir + "/none/sweep.json"}},
            {{"run", "--timeline=" + dir + "/none/t.json"}, {"option --timeline", "cannot write"}},
            {{"xval", "--bar=-1"}, {"option --bar", "'-1'", "from 0 to 1"}},
            {{"run", "--engine=vllm"}, {"option --engine", "'vllm'", "applies to inference"}},
            {{"run",
              "--model=llama3-8b",
              "--seq=4096",
              "--layers=1",
              "--cp=2",
              "--attention=standard"},
             {"option --attention", "ring attention on fused kernels"}},
            {{"memory", "--hardware=" + quoted},
             {quoted, "gpu.hbm_gib", "quoted text '80'", "drop the quotes"}},
            // A hardware file's fault on a node the job's network lacks: the file and entry.
            {{"run", "--hardware=" + noSuchNode},
             {noSuchNode, "network.faults[0].link", "unknown node 'gpu99'"}},
            {{"collective", "--hardware=" + noSuchNode},
             {noSuchNode, "network.faults[0].link", "gpu0..gpu7"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--moe-imbalance=2"},
             {"option --moe-imbalance", "no experts"}},
            {{"xval", "--resolution=fs"}, {"option --resolution", "ps, ns"}},
            {{"xval", "--only=no-such-workload"}, {"option --only", "no-such-workload"}},
            // --packet values are checked before ns-3 parses (and aborts on) them.
            {{"xval", "--quick", "--packet=Mtu=abc"}, {"option --packet", "'abc'", "576:65000"}},
            {{"xval", "--quick", "--packet=Mtu=0"},
             {"option --packet", "out of range", "576:65000"}},
            {{"xval", "--quick", "--packet=MinRto=abc"},
             {"option --packet", "'abc'", "MinRto", "a time: a number and a unit", "200ms"}},
            {{"xval", "--quick", "--packet=NoSuch=1"}, {"option --packet", "no attribute"}},
            {{"xval", "--quick", "--packet=SendBuffer=100"},
             {"option --packet", "SendBuffer", "100 bytes", "at least 65536"}},
            {{"xval", "--quick", "--packet=SegmentSize=1"},
             {"option --packet", "SegmentSize", "1 bytes", "536 to 4056"}},
            {{"xval", "--quick", "--packet=Pcap=" + dir + "/cap"},
             {"option --packet", "Pcap=", "10 workloads", "--only=WORKLOAD"}},
            {{"sweep",
              "--model=gpt-1.7b",
              "--gpus=2",
              "--gbs=2",
              "--backend=packet",
              "--packet=Pcap=x"},
             {"option --packet", "a network per layout"}},
            // A capture's links name their own field, not a fault's.
            {{"collective",
              "--hardware=a100-sxm-80gb",
              "--gpus=16",
              "--bytes=64KiB",
              "--backend=packet",
              "--packet=Pcap=" + dir + "/pc,PcapLinks=gpu99"},
             {"PcapLinks", "unknown node 'gpu99'"}},
            {{"xval", "--quick", "--packet=Pcap=" + dir + "/none/cap"},
             {"option --packet", "PacketNetwork::Pcap", dir + "/none", "does not exist"}},
            {{"xval", "--quick", "--packet=DelAckCount=2,DelAckTimeout=200ms"},
             {"option --packet", "DelAckTimeout", "200000 us", "below MinRto (10000 us)"}},
            {{"xval", "--quick", "--packet=WindowBdps=0.5"},
             {"option --packet", "'0.5'", "out of range", "WindowBdps"}},
            {{"run", "--model=gpt-1.7b", "--gpus=2", "--tp=2", "--gbs=1", "--packet=WindowBdps=2"},
             {"option --packet", "'flow'", "--backend=packet"}},
            {{"run",
              "--model=gpt-1.7b",
              "--gpus=2",
              "--tp=2",
              "--gbs=1",
              "--backend=packet",
              "--packet=Mtu=0"},
             {"option --packet", "out of range", "576:65000"}},
            {{"replay", "--trace=" + dir + "/none", "--packet=MinRto=1ms"},
             {"option --packet", "'flow'", "--backend=packet"}},
            {{"collective",
              "--hardware=a100-sxm-80gb",
              "--op=all-reduce",
              "--bytes=1MiB",
              "--gpus=2",
              "--packet=Mtu=9000"},
             {"option --packet", "'flow'", "--backend=packet"}},
            {{"sweep", "--model=gpt-1.7b", "--gpus=2", "--gbs=2", "--packet=Mtu=0"},
             {"option --packet", "'flow'", "--backend=packet"}},
            {Cat(faults, {"--packet=WindowBdps=2"}), {"option --packet", "--packet-check=N"}},
            {Cat(faults, {"--packet-check=1", "--packet=Mtu=0"}),
             {"option --packet", "out of range", "576:65000"}},
            {{"--PrintAttributes=ns3::Bogus"}, {"'ns3::Bogus' is not known"}},
            {{"run", "--fp8-params=false"}, {"option --fp8-params", "--dtype=fp8 only"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--fp8-params=false"},
             {"option --fp8-params", "--dtype=fp8 only"}},
            {{"collective", "--hardware=a100-sxm-80gb", "--gpus=8", "--fault=gpu99"},
             {"option --fault", "unknown node 'gpu99'"}},
            {{"run", "--model=gpt-1.7b", "--gpus=16777216", "--tp=8"},
             {"option --gpus", "at most 4194304"}},
            {{"--PrintTypeIds", "--gpus=8"}, {"'--gpus=8' beside ns-3's --Print"}},
            {{"xval", "--quick", "--packet=CongestionControl=ns3::Nope"},
             {"option --packet", "CongestionControl", "ns3::TcpNewReno"}},
            {{"validate", "--only=no-such-table"},
             {"option --only", "no-such-table", "nemo-h100-training.csv"}},
            {{"replay"}, {"option --trace", "required"}},
            {{"trace"}, {"option --out", "required"}},
            {{"trace-info", "--trace=" + dir + "/none"}, {dir}},
            {{"validate", "--data=" + dir}, {dir, "cannot open"}},
            // Job options of the studies issue: faults, overrides, job files, layout settings.
            {{"run", "--fault=gpu0-gpu1:1e-9"}, {"option --fault", "1e-09", "1e-06"}},
            {{"run", "--fault=gpu0-gpu1:0.5@soon"}, {"option --fault", "start time"}},
            {{"run", "--fault=gpu0-gpu1:2"}, {"option --fault", "or a number from 1e-06 to 1"}},
            {{"run", "--fault=tier:ethernet:0.5"},
             {"option --fault", "tier:ethernet", "nvlink, infiniband"}},
            {{"run", "--fault=gpu0-gpu99:0.5"}, {"option --fault", "gpu99", "gpu0..gpu7"}},
            // A fault that cuts a layout's pair, met in a sweep's worker: the input's error.
            {{"sweep",
              "--model=gpt-1.7b",
              "--gpus=8",
              "--gbs=16",
              "--tp=8",
              "--mbs=1",
              "--fault=gpu5"},
             {"layout tp 8 pp 1", "no path", "gpu5"}},
            // The serving study's inputs.
            {{"study", "serving", "--model=llama2-7b", "--gpus=4", "--tp=3"},
             {"option --gpus", "no layout"}},
            {{"study", "serving", "--model=llama2-7b", "--gpus=4", "--tpot-slo=-1"},
             {"option --tpot-slo"}},
            {{"study", "serving", "--model=llama2-7b", "--gpus=4", "--fault=gpu0"},
             {"unknown option --fault"}},
            {{"run", "--mode=inference", "--inflight-batches=2"},
             {"option --inflight-batches", "pp is 1"}},
            {{"run", "--set=gpu.hbm_gib"}, {"option --set", "gpu.hbm_gib"}},
            {{"run", "--set=gpu.no_such_field=1"}, {"no_such_field"}},
            {{"run", "--run=" + dir + "/none.yaml"}, {"none.yaml"}},
            {{"run", "--rank-order=tp-pp"}, {"option --rank-order", "tp-pp"}},
            {{"run", "--memory-layout=zero"}, {"option --memory-layout", "megatron"}},
            {{"run", "--moe-imbalance=0.5"}, {"option --moe-imbalance", "'0.5'"}},
            {{"run", "--mode=inference", "--memory-layout=megatron"},
             {"option --memory-layout", "does not apply"}},
            {{"run", "--fp8-scaling=current"},
             {"option --fp8-scaling", "--dtype=fp8 only", "dtype is bf16"}},
            {{"run", "--seq=2050", "--cp=2"}, {"option --seq", "(2050)", "2 x cp (4)"}},
            {{"run", "--dtype=int8"}, {"option --dtype", "int8 is an inference type", "bf16"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--dtype=bf16,int8"},
             {"option --dtype", "int8 is an inference type"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--dtype=bf16,fp16", "--fp8-scaling=current"},
             {"option --fp8-scaling", "dtype is bf16,fp16"}},
            {{"run", "--fsdp=true", "--zero=1", "--dp=2"}, {"option --fsdp", "ZeRO-3", "--zero=1"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--pipeline-split=odd"},
             {"option --pipeline-split", "'odd'", "even, first-last, embedding-loss"}},
            {{"run", "--loss-in-pipeline-split=true"},
             {"option --loss-in-pipeline-split", "needs pp >= 2"}},
            {{"run", "--model=llama2-7b", "--pp=2", "--first-stage-layers=40"},
             {"option --first-stage-layers",
              "= 40 leave none of the model's 32 layers",
              "the other 1 stage:"}},
            {{"run",
              "--model=llama2-7b",
              "--pp=3",
              "--first-stage-layers=20",
              "--last-stage-layers=20"},
             {"fewer than 32"}},
            {{"run", "--pp=2", "--embedding-in-pipeline-split=true", "--first-stage-layers=1"},
             {"option --embedding-in-pipeline-split", "not both"}},
            {{"study"}, {"faults, hardware"}},
            {{"study", "faults", "--out=" + dir + "/s"}, {"option --links", "required"}},
            {{"study", "faults", "--out=" + dir + "/s", "--links=gpu0-gpu1:0.5"},
             {"option --links", "without a factor"}},
            {{"study", "faults", "--out=" + dir + "/s", "--links=gpu0-gpu1", "--factors=1,2"},
             {"option --factors", "'2'", "1e-06 to 1"}},
            {{"study", "faults", "--out=" + dir + "/s", "--links=random:0:1"},
             {"option --links", "random:K:SEED"}},
            {{"study", "hardware", "--out=" + dir + "/s"}, {"option --vary", "required"}},
            {{"study", "hardware", "--out=" + dir + "/s", "--vary=gpu.hbm_gib"},
             {"option --vary", "FIELD=V1,V2"}},
            // A list item given twice (it would run, and report, the same thing twice).
            {{"sweep", "--gpus=8", "--gbs=8", "--tp=2,2"}, {"option --tp", "'2'", "given twice"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--tp=2,02"}, {"option --tp", "'02'", "'2,02'"}},
            {{"sweep", "--gpus=8", "--gbs=8", "--recompute=full,full"},
             {"option --recompute", "'full'", "given twice"}},
            {{"study", "serving", "--model=llama2-7b", "--gpus=4", "--tp=2,2"},
             {"option --tp", "'2'", "given twice"}},
            {{"study", "serving", "--model=llama2-7b", "--gpus=4", "--batch=2,2"},
             {"option --batch", "'2'", "given twice"}},
            // Context parallelism is modelled in training only; a serving study's --etp is 1 or
            // unset (its layouts' tp vary).
            {{"run", "--mode=inference", "--model=llama2-7b", "--gpus=2", "--cp=2"},
             {"option --cp", "training only", "allowed in inference: 1"}},
            {{"study", "serving", "--model=llama2-7b", "--gpus=4", "--cp=2"},
             {"option --cp", "training only"}},
            {{"study", "serving", "--model=mixtral-8x7b", "--gpus=8", "--tp=2", "--etp=2"},
             {"option --etp", "a serving study takes 1"}},
            // One replica stands for all: a GPU of its own would slow every replica.
            {{"study",
              "serving",
              "--model=llama2-7b",
              "--gpus=4",
              "--gpu-set=gpu0:gpu.hbm_bandwidth_GBps=0.25x"},
             {"option --gpu-set", "one replica for all"}},
            {{"study", "faults", "--out=" + dir + "/s", "--links=gpu0-gpu1", "--factors=0.5,0.50"},
             {"option --factors", "'0.50'", "given twice"}},
            {{"study", "faults", "--out=" + dir + "/s", "--links=gpu0-gpu1", "--routing=ecmp,ecmp"},
             {"option --routing", "'ecmp'", "given twice"}},
            {{"study", "faults", "--out=" + dir + "/s", "--links=gpu0-gpu1;gpu0-gpu1"},
             {"option --links", "'gpu0-gpu1'", "given twice"}},
            {{"study", "hardware", "--out=" + dir + "/s", "--vary=gpu.hbm_gib=80,80"},
             {"option --vary", "'80'", "given twice"}},
            // The same value spelt twice: the same job twice.
            {{"study",
              "hardware",
              "--out=" + dir + "/s",
              "--hardware=a100-sxm-80gb",
              "--vary=gpu.hbm_gib=80,1x"},
             {"option --vary", "'80' and '1x'", "the same value"}},
            // No layout left: an error naming the first reason, as study serving's.
            {{"sweep", "--model=gpt-1.7b", "--gpus=4", "--gbs=8", "--tp=3"},
             {"option --gpus", "no layout", "tp 3 x pp 1 x cp 1 does not divide the 4 GPUs"}},
            {{"sweep", "--model=gpt-1.7b", "--gpus=4", "--gbs=8", "--pp=64"},
             {"option --gpus", "no layout", "pp 64"}},
            // Every layout the model refuses on one field the user gave: that option, and each
            // reason once with the layouts it ruled out.
            {{"sweep", "--model=gpt-1.7b", "--gpus=32", "--gbs=64", "--tp=16"},
             {"option --tp",
              "mbs 1: tp: heads (24) must be divisible by tp (16) (and 5 more layouts)"}},
            // No time per output token with one generated token: no target to meet.
            {{"study", "serving", "--model=llama2-7b", "--gpus=4", "--gen=1", "--tpot-slo=0.001"},
             {"option --tpot-slo", "--gen of 2 or more"}},
            {{"study", "serving", "--model=llama2-7b", "--gpus=4", "--gen=1"},
             {"option --gen", "--gen of 2 or more", "frontier"}},
            // A varied field a command-line option also sets would keep the option's value.
            {{"study",
              "hardware",
              "--out=" + dir + "/s",
              "--model=llama2-7b",
              "--gpus=2",
              "--tp=2",
              "--gbs=2",
              "--seq=256",
              "--layers=4",
              "--vary=model.layers=2,8"},
             {"option --vary", "'model.layers'", "--layers=4"}},
            // Every row of a fault study failed: the first row's error, and no files.
            {{"study",
              "faults",
              "--out=" + dir + "/all-failed",
              "--model=gpt-1.7b",
              "--gpus=8",
              "--tp=2",
              "--pp=2",
              "--gbs=8",
              "--seq=1024",
              "--links=tier:nvlink",
              "--factors=0",
              "--routing=fault-aware"},
             {"every row failed", "fault-aware", "no path"}},
            // An option where it has no effect is not listed, and so unknown.
            {{"memory", "--granularity=fluid"}, {"unknown option --granularity"}},
            // ns-3 attributes of the packet network: given twice, out of range, a file as a folder.
            {{"collective",
              hwFlag,
              "--gpus=16",
              "--backend=packet",
              "--packet=WindowBdps=2,WindowBdps=3"},
             {"option --packet", "WindowBdps is given twice"}},
            {{"collective", hwFlag, "--gpus=16", "--backend=packet", "--packet=MinRto=-1ms"},
             {"option --packet", "MinRto", "must be above 0"}},
            {{"collective",
              hwFlag,
              "--gpus=2",
              "--backend=packet",
              "--packet=ClockGranularity=-1us"},
             {"option --packet", "ClockGranularity", "must be above 0"}},
            {{"collective", hwFlag, "--gpus=2", "--backend=packet", "--packet=PcapLinks=gpu0"},
             {"option --packet", "PcapLinks", "give Pcap=PREFIX too"}},
            // A classful queue disc: ns-3 aborted on its missing MaxSize.
            {{"collective",
              hwFlag,
              "--gpus=2",
              "--backend=packet",
              "--packet=QueueDisc=ns3::PrioQueueDisc"},
             {"option --packet", "ns3::PrioQueueDisc", "classful queue disc"}},
            {{"collective",
              hwFlag,
              "--gpus=2",
              "--backend=packet",
              "--packet=QueueDisc=ns3::PieQueueDisc"},
             {"option --packet", "ns3::PieQueueDisc", "stalls the packet network"}},
            {{"collective",
              hwFlag,
              "--gpus=16",
              "--backend=packet",
              "--packet=Pcap=" + notFolder + "/x"},
             {"option --packet", "is not a folder"}},
            // A job file's misspelt preset is the job file's error, told as a misspelt preset.
            {{"memory", "--run=" + misspeltJob},
             {"job.yaml", "field 'hardware'", "'a100' is neither a preset"}},
            // A collective's pieces of less than a byte; send-recv's algorithm, which is none.
            {{"collective", hwFlag, "--gpus=4", "--bytes=1K", "--chunks=65536"},
             {"option --chunks", "at most one piece a byte"}},
            {{"collective", hwFlag, "--gpus=2", "--op=send-recv", "--algorithm=ring"},
             {"option --algorithm", "send-recv is one message"}},
            {{"collective", hwFlag, "--gpus=2", "--op=send-recv", "--chunks=4"},
             {"option --chunks", "not pipelined"}},
            // The packet network refuses a topology it cannot build (24 GB for 16.7 M links).
            {{"collective", "--hardware=" + fullyConnected, "--gpus=8", "--backend=packet"},
             {"16781312 links, above its limit"}},
            // The planner's refusals name the options that asked.
            {{"collective",
              hwFlag,
              "--gpus=8",
              "--op=all-gather",
              "--algorithm=double-binary-tree"},
             {"option --algorithm", "all-reduce only"}},
            {{"collective", hwFlag, "--gpus=100000"},
             {"option --gpus", "a collective over 100000"}},
            // A run that fails leaves no output folder behind (checked below).
            {{"run",
              "--model=gpt-1.7b",
              "--tp=2",
              "--pp=2",
              "--dp=4",
              "--gbs=8",
              "--out=" + dir + "/failed/run",
              "--fault=tier:infiniband"},
             {"no path", "unreachable"}},
            // memory builds a training job's graphs too: its limit is raised as run's.
            {{"memory", "--model=gpt-1.7b", "--gbs=10000000", "--host-memory=0.5"},
             {"above the limit", "(0.5 GiB of host memory"}},
            // A packet run whose frames alone pass the watchdog's MaxEvents (it ran on for
            // minutes at 2.5 GB without finishing an operator).
            {{"run",
              "--model=gpt3-175b",
              "--hardware=h100-sxm-80gb",
              "--tp=8",
              "--pp=8",
              "--dp=64",
              "--gbs=1024",
              "--zero=1",
              "--sp",
              "--backend=packet"},
             {"option --backend", "415 TB", "MaxEvents", "use the flow backend"}},
            // The shared expert splits over tp as the dense MLP (it was rounded down).
            {{"memory",
              "--model=deepseek-v2-lite",
              "--set=model.moe.shared_expert_ffn=2817",
              "--tp=2",
              "--gpus=2"},
             {"option --tp", "shared_expert_ffn (2817) must be divisible by tp (2)"}},
            // A kernel that cannot take the head dimension: the option that chose it.
            {{"attention", "--attention=triton2022", "--head-dim=256"},
             {"option --attention", "up to 128, not 256"}},
            // A published table given with --data is checked as any input.
            {{"validate", "--only=flash-attention", "--data=" + badTables},
             {"flash-attention-h100.csv:3", "field 'seq_len'", "whole number from 1", "'-512'"}},
            {{"validate", "--only=megatron", "--data=" + badTables},
             {"megatron-sc21-table1.csv:2", "run settings", "field 'global_batch'", "(500)"}},
            {{"validate", "--only=megatron", "--data=" + badVirtual},
             {"megatron-sc21-table1.csv:2", "layers_per_virtual_stage", "4 does not divide"}},
            // Extensions.
            {{"run", "--load"}, {"option --load", "needs a value"}},
            {{"run", "--load=" + dir + "/none.so"}, {"option --load", "none.so", "cannot"}},
        };
        for (const auto& c : cases)
        {
            const std::string line = Joined(c.args);
            CliResult r = RunCli(c.args, dir);
            NS_TEST_EXPECT_MSG_EQ(r.status, 2, line + ": " + r.err);
            NS_TEST_EXPECT_MSG_EQ(r.out, "", line + ": nothing on stdout");
            // A command of two words ("study faults") names both.
            const bool twoWords =
                c.args[0] == "study" && c.args.size() > 1 && c.args[1].rfind("--", 0) != 0;
            // ns-3's --Print listings, given without a command, name none.
            const std::string prefix =
                c.args[0].rfind("--", 0) == 0
                    ? std::string("rapid-llm: error: ")
                    : "rapid-llm " + c.args[0] + (twoWords ? " " + c.args[1] : "") + ": error: ";
            NS_TEST_EXPECT_MSG_EQ(r.err.rfind(prefix, 0), 0, line + ": " + r.err);
            NS_TEST_EXPECT_MSG_EQ(static_cast<int>(std::count(r.err.begin(), r.err.end(), '\n')),
                                  1,
                                  line + ": one line: " + r.err);
            for (const auto& n : c.needles)
            {
                NS_TEST_EXPECT_MSG_NE(
                    r.err.find(n), std::string::npos, line + ": '" + n + "' in: " + r.err);
            }
        }
        // zb-v splits its chunks evenly: no suggestion of first and last stage layers.
        const CliResult uneven = RunCli(
            {"run", "--pp-schedule=zb-v", "--pp=5", "--vpp=2", "--gbs=5", "--model=gpt-1.7b"}, dir);
        NS_TEST_EXPECT_MSG_EQ(uneven.err.find("first_stage_layers"), std::string::npos, uneven.err);
        // ns-3's NS_ATTRIBUTE_DEFAULT: a value ns-3 would abort on, a name it would ignore.
        for (const auto& [entry, needle] : std::vector<std::pair<std::string, std::string>>{
                 {"ns3::rapidllm::TraceReplayer::MaxSimulatedTime=bogus", "'bogus' is not a value"},
                 {"ns3::rapidllm::TraceReplayer::MaxEvent=1", "has no attribute MaxEvent"}})
        {
            ::setenv("NS_ATTRIBUTE_DEFAULT", entry.c_str(), 1);
            CliResult r = RunCli({"run", "--layers=2", "--gbs=1", "--seq=256"}, dir);
            ::unsetenv("NS_ATTRIBUTE_DEFAULT");
            NS_TEST_EXPECT_MSG_EQ(r.status, 2, entry + ": " + r.err);
            NS_TEST_EXPECT_MSG_NE(r.err.find("NS_ATTRIBUTE_DEFAULT"), std::string::npos, r.err);
            NS_TEST_EXPECT_MSG_NE(r.err.find(needle), std::string::npos, r.err);
        }
        // NS_GLOBAL_VALUE: a name ns-3 would ignore, a real-time simulator (which paced the
        // replay in wall-clock time: no output after a minute for a 52 ms step).
        for (const auto& [entry, needle] : std::vector<std::pair<std::string, std::string>>{
                 {"Bogus=1", "global value's name (SimulatorImplementationType"},
                 {"SimulatorImplementationType=ns3::RealtimeSimulatorImpl",
                  "ns3::DefaultSimulatorImpl"}})
        {
            CliResult r = RunCli({"run", "--layers=2", "--gbs=1", "--seq=256"},
                                 dir,
                                 "env NS_GLOBAL_VALUE='" + entry + "'");
            NS_TEST_EXPECT_MSG_EQ(r.status, 2, entry + ": " + r.err);
            NS_TEST_EXPECT_MSG_NE(
                r.err.find("NS_GLOBAL_VALUE: '" + entry + "'"), std::string::npos, r.err);
            NS_TEST_EXPECT_MSG_NE(r.err.find(needle), std::string::npos, r.err);
        }
        // NS_LOG: a name no log component has (ns-3 aborted with its component list on stdout).
        {
            CliResult r = RunCli({"run", "--layers=2", "--gbs=1", "--seq=256", "--json"},
                                 dir,
                                 "env NS_LOG='garbage'");
            NS_TEST_EXPECT_MSG_EQ(r.status, 2, r.err);
            NS_TEST_EXPECT_MSG_EQ(r.out, "", "nothing on stdout");
            NS_TEST_EXPECT_MSG_NE(r.err.find("NS_LOG: 'garbage'"), std::string::npos, r.err);
        }
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/failed"),
                              false,
                              "a run that failed removes the folders its --out created");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/all-failed"),
                              false,
                              "a fault study whose rows all failed writes nothing");
        // An unknown command is exit 2 with the list of commands.
        CliResult r = RunCli({"frobnicate"}, dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 2, r.err);
        NS_TEST_EXPECT_MSG_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos, r.err);
    }
};

/**
 * \brief A link selector that names no link of the job's network is an error of the option it
 * was given in: `study faults --links` (not an option "--faults.link" that no command has) and
 * `sweep --fault` (checked before any layout runs, not reported against the hardware file in
 * the first layout).
 */
class CliFaultSelectorOptionTestCase : public TestCase
{
  public:
    CliFaultSelectorOptionTestCase()
        : TestCase("a bad link selector names --links or --fault, the option it came in")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("fault-selector");
        const std::string dir = scratch.Path();
        const std::vector<std::string> job = {
            "--model=gpt-1.7b", "--gpus=8", "--tp=2", "--pp=2", "--gbs=8", "--seq=1024"};
        const std::vector<std::string> sweep = {"sweep",
                                                "--model=gpt-1.7b",
                                                "--gpus=8",
                                                "--gbs=8",
                                                "--seq=1024",
                                                "--tp=2",
                                                "--pp=2",
                                                "--mbs=1",
                                                "--workers=1"};
        const std::vector<BadInput> cases = {
            // On 8 GPUs of one NVSwitch node no link joins two GPUs.
            {Cat({"study", "faults", "--out=" + dir + "/s", "--links=gpu0-gpu1"}, job),
             {"option --links: ", "no link joins gpu0 and gpu1"}},
            {Cat({"study",
                  "faults",
                  "--out=" + dir + "/s",
                  "--links=gpu0-nvlink.sw0;gpu99-nvlink.sw0"},
                 job),
             {"option --links: ", "unknown node 'gpu99'"}},
            {Cat(sweep, {"--fault=gpu0-gpu1"}),
             {"option --fault: ", "no link joins gpu0 and gpu1"}},
            {Cat(sweep, {"--fault=gpu99-nvlink.sw0:0.5"}), {"option --fault: ", "unknown node"}},
            // A node alone, beyond the job's GPUs: named as an unknown node, with the nodes'.
            {Cat(sweep, {"--fault=gpu99"}),
             {"option --fault: ", "unknown node 'gpu99'", "gpu0..gpu7"}},
        };
        for (const auto& c : cases)
        {
            const std::string line = Joined(c.args);
            CliResult r = RunCli(c.args, dir);
            NS_TEST_EXPECT_MSG_EQ(r.status, 2, line + ": " + r.err);
            NS_TEST_EXPECT_MSG_EQ(r.out, "", line + ": nothing on stdout");
            NS_TEST_EXPECT_MSG_EQ(
                r.err.find("faults.link"), std::string::npos, line + ": " + r.err);
            NS_TEST_EXPECT_MSG_EQ(r.err.find("layout tp"), std::string::npos, line + ": " + r.err);
            for (const auto& n : c.needles)
            {
                NS_TEST_EXPECT_MSG_NE(
                    r.err.find(n), std::string::npos, line + ": '" + n + "' in: " + r.err);
            }
        }
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/s"), false, "no study written");
    }
};

/**
 * \brief The software settings `sweep` shares with `run` are refused where they change nothing,
 * as run refuses them, naming the same option: a sweep must not run a whole space of layouts
 * with a setting silently dropped (--fp8-scaling without fp8 was), nor rule out layouts one by
 * one for a setting the model cannot have (--etp on a dense model was).
 */
class CliSweepSettingsAsRunTestCase : public TestCase
{
  public:
    CliSweepSettingsAsRunTestCase()
        : TestCase("sweep refuses the settings run refuses, naming the same option")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-settings");
        const std::string dir = scratch.Path();
        const std::vector<std::string> run = {
            "run", "--model=gpt-1.7b", "--gpus=8", "--tp=2", "--gbs=8", "--seq=1024"};
        const std::vector<std::string> sweep = {"sweep",
                                                "--model=gpt-1.7b",
                                                "--gpus=8",
                                                "--tp=2",
                                                "--pp=1",
                                                "--mbs=1",
                                                "--gbs=8",
                                                "--seq=1024",
                                                "--workers=1"};
        const std::vector<std::pair<std::vector<std::string>, std::string>> settings = {
            {{"--fp8-scaling=current"}, "option --fp8-scaling: applies to --dtype=fp8 only"},
            {{"--fp8-scaling=delayed"}, "option --fp8-scaling: applies to --dtype=fp8 only"},
            {{"--param-gather=overlap"}, "option --param-gather: overlap applies to --zero=1 or 2"},
            // A dense model has no experts to keep whole: not a rule that drops the tp > 1
            // layouts of a sweep one by one.
            {{"--etp=1", "--sp"},
             "option --etp: expert tensor parallelism needs a mixture-of-experts model"},
        };
        for (const auto& [setting, needle] : settings)
        {
            for (const auto& command : {run, sweep})
            {
                const std::vector<std::string> args = Cat(command, setting);
                CliResult r = RunCli(args, dir);
                NS_TEST_EXPECT_MSG_EQ(r.status, 2, Joined(args) + ": " + r.err);
                NS_TEST_EXPECT_MSG_NE(r.err.find(needle),
                                      std::string::npos,
                                      Joined(args) + ": '" + needle + "' in: " + r.err);
            }
        }
        // The serving study takes --etp too: on a dense model it is refused as well, not a rule
        // that drops its tp > 1 layouts.
        CliResult serving = RunCli({"study",
                                    "serving",
                                    "--model=llama2-7b",
                                    "--gpus=4",
                                    "--tp=1,2",
                                    "--batch=1",
                                    "--workers=1",
                                    "--etp=1"},
                                   dir);
        NS_TEST_EXPECT_MSG_EQ(serving.status, 2, serving.err);
        NS_TEST_EXPECT_MSG_NE(
            serving.err.find("option --etp: expert tensor parallelism needs a mixture-of-experts"),
            std::string::npos,
            serving.err);
        // With fp8 both take it.
        CliResult fp8 = RunCli(
            Cat(sweep, {"--fp8-scaling=current", "--dtype=fp8", "--hardware=h100-sxm-80gb"}), dir);
        NS_TEST_EXPECT_MSG_EQ(fp8.status, 0, fp8.err);
    }
};

/** \brief The bad-input matrix of the command line. */
class CliBadInputTestSuite : public TestSuite
{
  public:
    CliBadInputTestSuite()
        : TestSuite("rapid-llm-cli-bad-input", UNIT)
    {
        AddTestCase(new CliBadInputTestCase, TestCase::QUICK);
        AddTestCase(new CliFaultSelectorOptionTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepSettingsAsRunTestCase, TestCase::QUICK);
    }
};

static CliBadInputTestSuite g_cliBadInputTestSuite; //!< registers the suite

#endif // RAPIDLLM_CLI
