/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "graph-emitter.h"

#include "ns3/assert.h"

namespace ns3 {
namespace rapidllm {

GraphEmitter::GraphEmitter(StageGraph& graph)
    : m_graph(graph)
{}

void
GraphEmitter::SetContext(Phase phase, uint32_t microBatch, int32_t layer)
{
    m_phase = phase;
    m_microBatch = microBatch;
    m_layer = layer;
}

void
GraphEmitter::SetPhase(Phase phase)
{
    m_phase = phase;
}

uint32_t
GraphEmitter::MicroBatch() const
{
    return m_microBatch;
}

int32_t
GraphEmitter::Layer() const
{
    return m_layer;
}

Phase
GraphEmitter::GetPhase() const
{
    return m_phase;
}

uint32_t
GraphEmitter::NextPeerTag()
{
    return m_peerTags++;
}

void
GraphEmitter::SetEnergyShare(float share)
{
    m_energyShare = share;
}

float
GraphEmitter::EnergyShare() const
{
    return m_energyShare;
}

void
GraphEmitter::SetModelShare(double share)
{
    m_modelShare = share;
}

double
GraphEmitter::ModelShare() const
{
    return m_modelShare;
}

WorkNode&
GraphEmitter::Append(WorkNodeKind kind, const char* label)
{
    const auto id = static_cast<uint32_t>(m_graph.nodes.size());
    WorkNode& node = m_graph.nodes.emplace_back();
    node.id = id;
    node.kind = kind;
    node.phase = m_phase;
    node.microBatch = m_microBatch;
    node.layer = m_layer;
    node.SetEnergyShare(m_energyShare);
    node.label = label;
    return node;
}

uint32_t
GraphEmitter::Compute(const char* label, const OperatorDesc& op, int64_t saved)
{
    WorkNode& n = Append(WorkNodeKind::COMPUTE, label);
    n.op = m_graph.InternOperator(op);
    n.modelFlops = op.ModelFlops() * m_modelShare;
    n.memDelta = saved;
    JoinStream(n);
    return n.id;
}

uint32_t
GraphEmitter::Blocking(const char* label, CollectiveKind kind, GroupKind group, uint64_t bytes)
{
    WorkNode& n = Append(WorkNodeKind::COLLECTIVE, label);
    n.collective = kind;
    n.group = group;
    n.commBytes = bytes;
    JoinStream(n);
    return n.id;
}

void
GraphEmitter::SetCommSms(uint32_t id, uint8_t sms)
{
    WorkNode& n = m_graph.nodes.at(id);
    NS_ASSERT(n.kind == WorkNodeKind::COLLECTIVE);
    n.commSms = sms;
}

uint32_t
GraphEmitter::Async(
    const char* label, CollectiveKind kind, GroupKind group, uint64_t bytes, uint32_t after)
{
    WorkNode& n = Append(WorkNodeKind::COLLECTIVE, label);
    n.collective = kind;
    n.group = group;
    n.commBytes = bytes;
    Beside(n, after);
    return n.id;
}

WorkNode&
GraphEmitter::Peer(WorkNodeKind kind,
                   const char* label,
                   GroupKind axis,
                   int32_t offset,
                   uint32_t tag,
                   uint64_t bytes)
{
    WorkNode& n = Append(kind, label);
    n.group = axis;
    n.peerOffset = offset;
    n.tag = tag;
    n.commBytes = bytes;
    return n;
}

uint32_t
GraphEmitter::Send(
    const char* label, GroupKind axis, int32_t offset, uint32_t tag, uint64_t bytes, uint32_t after)
{
    WorkNode& n = Peer(WorkNodeKind::SEND, label, axis, offset, tag, bytes);
    Beside(n, after);
    return n.id;
}

uint32_t
GraphEmitter::Recv(const char* label, GroupKind axis, int32_t offset, uint32_t tag, uint64_t bytes)
{
    WorkNode& n = Peer(WorkNodeKind::RECV, label, axis, offset, tag, bytes);
    JoinStream(n);
    return n.id;
}

uint32_t
GraphEmitter::RecvBeside(
    const char* label, GroupKind axis, int32_t offset, uint32_t tag, uint64_t bytes, uint32_t after)
{
    WorkNode& n = Peer(WorkNodeKind::RECV, label, axis, offset, tag, bytes);
    Beside(n, after);
    return n.id;
}

void
GraphEmitter::Beside(WorkNode& n, uint32_t after)
{
    if (after != NONE)
    {
        n.deps.push_back(after);
    }
}

void
GraphEmitter::JoinStream(WorkNode& n)
{
    if (m_lastStream != NONE)
    {
        n.deps.push_back(m_lastStream);
    }
    for (uint32_t id : m_extraWait)
    {
        if (id != m_lastStream)
        {
            n.deps.push_back(id);
        }
    }
    m_extraWait.clear();
    m_lastStream = n.id;
}

void
GraphEmitter::StreamWaitsFor(uint32_t id)
{
    m_extraWait.push_back(id);
}

void
GraphEmitter::StreamWaitsFor(const std::vector<uint32_t>& ids)
{
    m_extraWait.insert(m_extraWait.end(), ids.begin(), ids.end());
}

void
GraphEmitter::AddMemory(uint32_t id, int64_t bytes)
{
    m_graph.nodes[id].memDelta += bytes;
}

uint32_t
GraphEmitter::LastStream() const
{
    return m_lastStream;
}

void
GraphEmitter::BranchFrom(uint32_t node)
{
    m_lastStream = node;
}

void
GraphEmitter::DeferWeightGradients(WeightGradientStore* store)
{
    m_deferred = store;
}

WeightGradientStore*
GraphEmitter::DeferredWeightGradients() const
{
    return m_deferred;
}

StageGraph&
GraphEmitter::Graph()
{
    return m_graph;
}

} // namespace rapidllm
} // namespace ns3
