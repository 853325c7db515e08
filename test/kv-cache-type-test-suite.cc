/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A quantized KV cache (vLLM's --kv-cache-dtype fp8, lmdeploy's int8 and int4 quant_policy): one
// byte a cached element (half a byte for int4), so the cache holds twice (four times) the tokens
// of a 16-bit one and the decode attention reads half (a quarter of) the bytes, dequantizing what
// it loads in registers.

#include "job-fixtures.h"
#include "ns3/compute-coster.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/job-options.h"
#include "ns3/kv-handover.h"
#include "ns3/layer-shapes.h"
#include "ns3/memory-model.h"
#include "ns3/run-spec.h"
#include "ns3/test.h"
#include "ns3/workload.h"
#include "spec-error-check.h"
#include "test-require.h"

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/**
 * \brief The decode kernels over a one-byte cache: each cached element is read as one byte
 * (the HBM traffic falls by exactly the cache's elements) and costs two vector operations to
 * dequantize (a conversion and a scaling); a cache in the compute type costs what it did.
 */
class KvCacheKernelTestCase : public TestCase
{
  public:
    KvCacheKernelTestCase()
        : TestCase("KV cache type: decode kernels read one byte an element and dequantize it")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<GpuComputeModel> h100 =
            CreateObject<GpuComputeModel>(fixture::RatedGpu("h100-sxm-80gb"));
        const GpuSpec& g = h100->GetGpu();
        // Llama-3 8B on one GPU: 64 sequences of 4,096 tokens, 32 query heads over 8 KV heads.
        const uint64_t batch = 64;
        const uint64_t kvLen = 4096;
        const double elements = double(batch) * 8 * kvLen * (128 + 128);
        const OperatorCost bf16 = h100->DecodeAttention(batch, 32, 8, kvLen, 128, DataType::BF16);
        const OperatorCost fp8 =
            h100->DecodeAttention(batch, 32, 8, kvLen, 128, DataType::BF16, 0, false, 8);
        const OperatorCost same =
            h100->DecodeAttention(batch, 32, 8, kvLen, 128, DataType::BF16, 0, false, 16);
        NS_TEST_EXPECT_MSG_EQ(same.timeS, bf16.timeS, "a 16-bit cache is the default");
        NS_TEST_EXPECT_MSG_EQ(same.hbmBytes, bf16.hbmBytes, "a 16-bit cache is the default");
        RAPIDLLM_REQUIRE_EQ(fp8.tiling.splitK, bf16.tiling.splitK, "the same split");
        NS_TEST_EXPECT_MSG_EQ_TOL(bf16.hbmBytes - fp8.hbmBytes, elements, 1.0, "a byte each");
        NS_TEST_EXPECT_MSG_EQ(fp8.flops, bf16.flops, "the model's FLOPs are the attention's");
        const double vector =
            g.VectorFlops(DataType::FP32) * g.efficiency.vector * fp8.smUtilization;
        NS_TEST_EXPECT_MSG_EQ_TOL(fp8.computeTimeS - bf16.computeTimeS,
                                  2.0 * elements / vector,
                                  1e-12,
                                  "a conversion and a scaling per element");
        NS_TEST_EXPECT_MSG_EQ(fp8.bound, BoundLevel::HBM, "still memory bound");
        NS_TEST_EXPECT_MSG_LT(fp8.timeS, 0.6 * bf16.timeS, "about half the reads");
        NS_TEST_EXPECT_MSG_GT(fp8.timeS, 0.45 * bf16.timeS, "about half the reads");
        // A half-byte cache (lmdeploy's int4): half the one-byte cache's reads, the same
        // dequantization per element.
        const OperatorCost int4 =
            h100->DecodeAttention(batch, 32, 8, kvLen, 128, DataType::BF16, 0, false, 4);
        NS_TEST_EXPECT_MSG_EQ_TOL(fp8.hbmBytes - int4.hbmBytes, elements / 2, 1.0, "half a byte");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            int4.computeTimeS, fp8.computeTimeS, 1e-12, "the same conversions");
        NS_TEST_EXPECT_MSG_LT(int4.timeS, fp8.timeS, "fewer reads");

        // The per-head kernel: every block dequantizes the group's cache it walks.
        const OperatorCost headBf16 =
            h100->DecodeAttentionPerHead(batch, 32, 8, kvLen, 128, DataType::BF16);
        const OperatorCost headInt8 =
            h100->DecodeAttentionPerHead(batch, 32, 8, kvLen, 128, DataType::BF16, 0, false, 8);
        NS_TEST_EXPECT_MSG_EQ_TOL(headBf16.hbmBytes - headInt8.hbmBytes, elements, 1.0, "HBM");
        NS_TEST_EXPECT_MSG_EQ_TOL(headBf16.l2Bytes - headInt8.l2Bytes, 4 * elements, 1.0, "L2");
        const double headVector =
            g.VectorFlops(DataType::FP32) * g.efficiency.vector * headInt8.smUtilization;
        NS_TEST_EXPECT_MSG_EQ_TOL(headInt8.computeTimeS - headBf16.computeTimeS,
                                  2.0 * 4 * elements / headVector,
                                  1e-12,
                                  "four query heads' blocks each dequantize their group's cache");
    }
};

/**
 * \brief A job's quantized cache: the decode attention's operators carry its byte; the memory
 * verdict holds half the 16-bit cache's bytes and names its type; the KV bytes a token adds
 * (which the serving study's token capacity counts) halve, and so does the handover.
 */
class KvCacheJobTestCase : public TestCase
{
  public:
    KvCacheJobTestCase()
        : TestCase("KV cache type: the job's operators, memory verdict and bytes per token")
    {}

  private:
    void
    DoRun() override
    {
        const ModelSpec model = fixture::SmallModel("llama3-8b", 4);
        RunSpec run = fixture::InferenceJob(1, 1, 8, 1024, 16);
        const GpuSpec gpu = HardwareSpec::Load("h100-sxm-80gb").gpu;
        const MemoryReport bf16 = AnalyzeMemory(Workload::Build(model, run), gpu);
        NS_TEST_EXPECT_MSG_NE(bf16.assumption.find("bf16 KV cache"), std::string::npos, "bf16");
        const uint64_t perToken16 = LayerShapes(model, run).KvCacheBytesPerToken();
        NS_TEST_EXPECT_MSG_EQ(perToken16, uint64_t(8 * 256 * 2), "8 KV heads x (K + V) x 2 B");

        for (const char* type : {"fp8", "int8"})
        {
            run.kvCacheDtype = type;
            NS_TEST_EXPECT_MSG_EQ(
                LayerShapes(model, run).KvCacheBytesPerToken(), perToken16 / 2, type);
            const Workload w = Workload::Build(model, run);
            const MemoryReport m = AnalyzeMemory(w, gpu);
            NS_TEST_EXPECT_MSG_EQ(m.worst.kvCache * 2, bf16.worst.kvCache, type);
            NS_TEST_EXPECT_MSG_EQ(m.worst.weights, bf16.worst.weights, "the same weights");
            NS_TEST_EXPECT_MSG_NE(m.assumption.find(std::string(type) + " KV cache"),
                                  std::string::npos,
                                  m.assumption);
            uint32_t decodes = 0;
            for (const WorkNode& n : w.stages[0].nodes)
            {
                if (n.kind == WorkNodeKind::COMPUTE
                    && w.stages[0].OpOf(n).type == OpType::DECODE_ATTENTION)
                {
                    ++decodes;
                    const OperatorDesc& op = w.stages[0].OpOf(n);
                    NS_TEST_EXPECT_MSG_EQ(op.Attention().cacheBits, 8u, "a one-byte cache");
                    NS_TEST_EXPECT_MSG_EQ(int(op.dtype), int(DataType::BF16), "bf16 compute");
                }
            }
            NS_TEST_EXPECT_MSG_EQ(decodes, 4u * 15, "4 layers x 15 decode steps");
        }

        // Half a byte an element (lmdeploy's int4): a quarter of the 16-bit cache.
        RunSpec int4 = run;
        int4.kvCacheDtype = "int4";
        NS_TEST_EXPECT_MSG_EQ(LayerShapes(model, int4).KvCacheBytesPerToken(), perToken16 / 4, "");
        const MemoryReport m4 = AnalyzeMemory(Workload::Build(model, int4), gpu);
        NS_TEST_EXPECT_MSG_EQ(m4.worst.kvCache * 4, bf16.worst.kvCache, "a quarter");
        NS_TEST_EXPECT_MSG_NE(m4.assumption.find("int4 KV cache"), std::string::npos, "named");

        // The disaggregated handover sends the cache as stored: 1,024 tokens x 4 layers x 8
        // KV heads x (K + V) x 128, one byte each, GPU 0 to GPU 1.
        ResolvedJob job;
        job.model = model;
        job.run = run; // int8
        uint64_t sent = 0;
        for (const ProbeTransfer& t : KvCacheTransfers(job, job, 0, 1))
        {
            sent += t.bytes;
        }
        NS_TEST_EXPECT_MSG_EQ(sent, uint64_t(1024) * 4 * 8 * 256, "the handover's bytes");
    }
};

/** \brief A KV cache type on a training run, or an unknown type, names the field and values. */
class KvCacheSpecTestCase : public TestCase
{
  public:
    KvCacheSpecTestCase()
        : TestCase("KV cache type: bad settings name the field and the allowed values")
    {}

  private:
    void
    DoRun() override
    {
        const ModelSpec model = fixture::SmallGpt();
        RunSpec training = fixture::TrainingJob(1, 1, 1, 1, 1);
        training.kvCacheDtype = "fp8";
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      training.Validate(model, "job.yaml");
                                  },
                                  {"job.yaml", "kv_cache_dtype", "inference"}),
                              true,
                              "training keeps no KV cache");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  []()
                                  {
                                      RunSpec::Parse("mode: inference\nkv_cache_dtype: fp4\n",
                                                     "run.yaml");
                                  },
                                  {"run.yaml", "kv_cache_dtype", "auto", "fp8", "int8", "int4"}),
                              true,
                              "the allowed values");
        const RunSpec parsed =
            RunSpec::Parse("mode: inference\nkv_cache_dtype: int8\n", "run.yaml");
        NS_TEST_EXPECT_MSG_EQ(int(parsed.KvCacheType()), int(DataType::INT8), "int8");
        NS_TEST_EXPECT_MSG_EQ(int(RunSpec().KvCacheType()), int(DataType::BF16), "auto: bf16");
    }
};

/** \brief The KV cache type's tests. */
class KvCacheTypeTestSuite : public TestSuite
{
  public:
    KvCacheTypeTestSuite()
        : TestSuite("rapid-llm-kv-cache-type", Type::UNIT)
    {
        AddTestCase(new KvCacheKernelTestCase, TestCase::QUICK);
        AddTestCase(new KvCacheJobTestCase, TestCase::QUICK);
        AddTestCase(new KvCacheSpecTestCase, TestCase::QUICK);
    }
};

/** The suite's one instance, registered with ns-3's test runner. */
KvCacheTypeTestSuite g_kvCacheTypeTestSuite;

} // namespace
