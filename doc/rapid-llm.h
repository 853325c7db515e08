/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Documentation only (no code): the Doxygen group every class of the module names with
// \ingroup rapid-llm. Not compiled nor installed; ns-3's Doxygen run picks it up from the
// module's doc/ folder in-tree.

/**
 * \defgroup rapid-llm RAPID-LLM: LLM training and inference on GPU clusters
 *
 * Predicts the step time of a large language model's training iteration or inference request
 * on a GPU cluster, and why: an LLM job (model shape, batch and sequence, training or inference,
 * hybrid parallelism) and a machine (GPU memory hierarchy, multi-dimensional network) go in; a
 * tile-based cost of every operator, a memory verdict per GPU, Chakra execution traces, and the
 * step time from replaying those traces on a flow-level or ns-3 packet-level network come out.
 *
 * The layers (doc/rapid-llm.md):
 * - spec (model/spec): ModelSpec, HardwareSpec, RunSpec from YAML and presets; the Error
 *   hierarchy; the TypeRegistry of every extension point.
 * - compute (model/compute): GpuComputeModel, per-operator time and why.
 * - workload (model/workload): Workload, one operator graph per pipeline stage; memory.
 * - trace (model/trace): ExecutionTrace and Chakra files.
 * - system (model/system): TraceReplayer on ns3::Simulator, CollectiveAlgorithm and engine,
 *   driving the network through NetworkBackend and NetworkView only.
 * - network (model/network): Topology, RoutingPolicy, NetworkBackend ("flow", "packet").
 * - report (model/report): RunReport and JSON.
 * - helper (helper/): RapidLlmHelper and JobOptions for scenario scripts, and the studies
 *   (collective probe, flow-vs-packet cross-validation, layout sweep, validation).
 *
 * Start with RapidLlmHelper (scratch-scenarios/rapid-llm-scenario.cc is a short script). To
 * extend: subclass RoutingPolicy, CollectiveAlgorithm or NetworkBackend and register a name
 * (TypeRegistrar); doc/building-against.md builds one as a plugin against the installed module.
 */
