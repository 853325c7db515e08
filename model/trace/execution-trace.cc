/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "execution-trace.h"

#include "trace-error.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

namespace {
/** The sync flag, kept in the top bit of a node's host word. */
constexpr uint64_t kHostSyncBit = 1ull << 63;
} // namespace

ExecutionTrace::ExecutionTrace(uint32_t rank)
    : m_rank(rank)
    , m_nEdges(0)
    , m_sortedById(true)
    , m_nextId(0)
    , m_childrenValid(false)
    , m_distinctNames(false)
{}

uint32_t
ExecutionTrace::GetRank() const
{
    return m_rank;
}

void
ExecutionTrace::SetRank(uint32_t rank)
{
    m_rank = rank;
}

const std::string&
ExecutionTrace::GetHardware() const
{
    return m_hardware;
}

void
ExecutionTrace::SetHardware(const std::string& hardware)
{
    m_hardware = hardware;
}

void
ExecutionTrace::SetTokens(uint32_t node, uint32_t generatedTokens, uint64_t requests)
{
    m_firstToken = node;
    m_generated = generatedTokens;
    m_requests = requests;
}

uint32_t
ExecutionTrace::GetFirstTokenNode() const
{
    return m_firstToken;
}

uint32_t
ExecutionTrace::GetGeneratedTokens() const
{
    return m_generated;
}

uint64_t
ExecutionTrace::GetRequests() const
{
    return m_requests;
}

uint32_t
ExecutionTrace::AddCompute(const std::string& name,
                           uint64_t durationNs,
                           uint64_t numOps,
                           uint64_t tensorBytes,
                           std::initializer_list<uint32_t> deps)
{
    return AddCompute(name, durationNs, numOps, tensorBytes, std::vector<uint32_t>(deps));
}

uint32_t
ExecutionTrace::AddCompute(const std::string& name,
                           uint64_t durationNs,
                           uint64_t numOps,
                           uint64_t tensorBytes,
                           const std::vector<uint32_t>& deps)
{
    return AddCompute(
        name, durationNs, numOps, tensorBytes, NodeIndexRange(deps.data(), deps.size()));
}

uint32_t
ExecutionTrace::AddCompute(const std::string& name,
                           uint64_t durationNs,
                           uint64_t numOps,
                           uint64_t tensorBytes,
                           NodeIndexRange deps)
{
    TraceNode node;
    node.id = m_nextId;
    node.type = TraceNodeType::COMP;
    node.durationNs = durationNs;
    node.numOps = numOps;
    node.bytes = tensorBytes;
    return AddNode(node, name, deps.begin(), deps.size());
}

uint32_t
ExecutionTrace::AddCollective(const std::string& name,
                              CollectiveType type,
                              uint64_t bytes,
                              uint32_t group,
                              const std::vector<uint32_t>& deps)
{
    return AddCollective(name, type, bytes, group, NodeIndexRange(deps.data(), deps.size()));
}

uint32_t
ExecutionTrace::AddCollective(const std::string& name,
                              CollectiveType type,
                              uint64_t bytes,
                              uint32_t group,
                              NodeIndexRange deps)
{
    TraceNode node;
    node.id = m_nextId;
    node.type = TraceNodeType::COMM_COLL;
    node.commType = type;
    node.bytes = bytes;
    node.group = group;
    return AddNode(node, name, deps.begin(), deps.size());
}

uint32_t
ExecutionTrace::AddSend(const std::string& name,
                        uint32_t dst,
                        int32_t tag,
                        uint64_t bytes,
                        const std::vector<uint32_t>& deps,
                        uint32_t group)
{
    return AddSend(name, dst, tag, bytes, NodeIndexRange(deps.data(), deps.size()), group);
}

uint32_t
ExecutionTrace::AddSend(const std::string& name,
                        uint32_t dst,
                        int32_t tag,
                        uint64_t bytes,
                        NodeIndexRange deps,
                        uint32_t group)
{
    TraceNode node;
    node.id = m_nextId;
    node.type = TraceNodeType::COMM_SEND;
    node.commSrc = static_cast<int32_t>(m_rank);
    node.commDst = static_cast<int32_t>(dst);
    node.commTag = tag;
    node.bytes = bytes;
    node.group = group;
    return AddNode(node, name, deps.begin(), deps.size());
}

uint32_t
ExecutionTrace::AddRecv(const std::string& name,
                        uint32_t src,
                        int32_t tag,
                        uint64_t bytes,
                        const std::vector<uint32_t>& deps,
                        uint32_t group)
{
    return AddRecv(name, src, tag, bytes, NodeIndexRange(deps.data(), deps.size()), group);
}

uint32_t
ExecutionTrace::AddRecv(const std::string& name,
                        uint32_t src,
                        int32_t tag,
                        uint64_t bytes,
                        NodeIndexRange deps,
                        uint32_t group)
{
    TraceNode node;
    node.id = m_nextId;
    node.type = TraceNodeType::COMM_RECV;
    node.commSrc = static_cast<int32_t>(src);
    node.commDst = static_cast<int32_t>(m_rank);
    node.commTag = tag;
    node.bytes = bytes;
    node.group = group;
    return AddNode(node, name, deps.begin(), deps.size());
}

uint32_t
ExecutionTrace::AddNode(TraceNode node, const std::string& name, const uint32_t* deps, size_t n)
{
    return Insert(node, name, deps, n, true);
}

uint32_t
ExecutionTrace::AppendNode(TraceNode node, const std::string& name, const uint32_t* deps, size_t n)
{
    return Insert(node, name, deps, n, false);
}

uint32_t
ExecutionTrace::Insert(
    TraceNode node, const std::string& name, const uint32_t* deps, size_t n, bool checkOrder)
{
    if (m_nodes.size() >= kNotFound)
    {
        throw std::length_error("ExecutionTrace: more than 2^32-1 nodes in one rank");
    }
    if (m_deps.size() + n > std::numeric_limits<uint32_t>::max())
    {
        throw std::length_error("ExecutionTrace: more than 2^32-1 dependency edges in one rank");
    }
    auto index = static_cast<uint32_t>(m_nodes.size());
    if (checkOrder)
    {
        for (size_t i = 0; i < n; ++i)
        {
            if (deps[i] >= index)
            {
                throw std::out_of_range("ExecutionTrace::AddNode: node '" + name
                                        + "' depends on index " + std::to_string(deps[i])
                                        + ", which is not added yet (" + std::to_string(index)
                                        + " nodes so far)");
            }
        }
    }
    // Unique ids: cheap while ids ascend (the normal case), a hash index otherwise.
    bool ascending = m_nodes.empty() || node.id > m_nodes.back().id;
    if (m_sortedById && !ascending)
    {
        m_idIndex.reserve(m_nodes.size() + 1);
        for (uint32_t i = 0; i < m_nodes.size(); ++i)
        {
            m_idIndex.emplace(m_nodes[i].id, i);
        }
        m_sortedById = false;
    }
    if (!m_sortedById && !m_idIndex.emplace(node.id, index).second)
    {
        throw std::invalid_argument("ExecutionTrace: node id " + std::to_string(node.id)
                                    + " is already used");
    }
    Invalidate();
    node.name = m_distinctNames ? m_names.AddDistinct(name) : m_names.Add(name);
    node.firstDep = static_cast<uint32_t>(m_deps.size());
    node.numDeps = 0;
    for (size_t i = 0; i < n; ++i)
    {
        const uint32_t* listBegin = m_deps.data() + node.firstDep;
        if (std::find(listBegin, listBegin + node.numDeps, deps[i]) == listBegin + node.numDeps)
        {
            m_deps.push_back(deps[i]);
            ++node.numDeps;
        }
    }
    m_nEdges += node.numDeps;
    if (node.id >= m_nextId)
    {
        m_nextId = node.id + 1;
    }
    m_nodes.push_back(node);
    return index;
}

void
ExecutionTrace::AddDependency(uint32_t nodeIndex, uint32_t dep)
{
    CheckIndex(nodeIndex);
    CheckIndex(dep);
    if (nodeIndex == dep)
    {
        throw std::invalid_argument("ExecutionTrace::AddDependency: node "
                                    + std::to_string(nodeIndex) + " cannot depend on itself");
    }
    TraceNode& node = m_nodes[nodeIndex];
    auto current = GetDeps(nodeIndex);
    if (std::find(current.begin(), current.end(), dep) != current.end())
    {
        return;
    }
    if (m_deps.size() + node.numDeps + 1 > std::numeric_limits<uint32_t>::max())
    {
        throw std::length_error("ExecutionTrace: more than 2^32-1 dependency edges in one rank");
    }
    Invalidate();
    if (node.firstDep + node.numDeps != m_deps.size())
    {
        // Not the last list: move it to the end so that it can grow (the old slots stay unused).
        uint32_t newFirst = static_cast<uint32_t>(m_deps.size());
        for (uint32_t i = 0; i < node.numDeps; ++i)
        {
            m_deps.push_back(m_deps[node.firstDep + i]);
        }
        node.firstDep = newFirst;
    }
    m_deps.push_back(dep);
    ++node.numDeps;
    ++m_nEdges;
}

size_t
ExecutionTrace::GetNNodes() const
{
    return m_nodes.size();
}

size_t
ExecutionTrace::GetNEdges() const
{
    return m_nEdges;
}

const TraceNode&
ExecutionTrace::GetNode(uint32_t index) const
{
    CheckIndex(index);
    return m_nodes[index];
}

TraceNode&
ExecutionTrace::GetMutableNode(uint32_t index)
{
    CheckIndex(index);
    Invalidate();
    return m_nodes[index];
}

const std::vector<TraceNode>&
ExecutionTrace::GetNodes() const
{
    return m_nodes;
}

std::string_view
ExecutionTrace::GetName(uint32_t index) const
{
    CheckIndex(index);
    return m_names.Get(m_nodes[index].name);
}

NodeIndexRange
ExecutionTrace::GetDeps(uint32_t index) const
{
    CheckIndex(index);
    const TraceNode& node = m_nodes[index];
    return NodeIndexRange(m_deps.data() + node.firstDep, node.numDeps);
}

uint32_t
ExecutionTrace::FindById(uint64_t id) const
{
    if (m_sortedById)
    {
        auto it = std::lower_bound(m_nodes.begin(),
                                   m_nodes.end(),
                                   id,
                                   [](const TraceNode& n, uint64_t v)
                                   {
                                       return n.id < v;
                                   });
        return (it != m_nodes.end() && it->id == id) ? static_cast<uint32_t>(it - m_nodes.begin())
                                                     : kNotFound;
    }
    auto it = m_idIndex.find(id);
    return it == m_idIndex.end() ? kNotFound : it->second;
}

bool
ExecutionTrace::IsSortedById() const
{
    return m_sortedById;
}

void
ExecutionTrace::BuildChildIndex()
{
    size_t n = m_nodes.size();
    m_childBegin.assign(n + 1, 0);
    for (const auto& node : m_nodes)
    {
        for (uint32_t i = 0; i < node.numDeps; ++i)
        {
            uint32_t parent = m_deps[node.firstDep + i];
            if (parent < n)
            {
                ++m_childBegin[parent + 1];
            }
        }
    }
    for (size_t i = 0; i < n; ++i)
    {
        m_childBegin[i + 1] += m_childBegin[i];
    }
    m_children.assign(m_childBegin[n], 0);
    std::vector<uint32_t> fill(m_childBegin.begin(), m_childBegin.end() - 1);
    for (uint32_t child = 0; child < n; ++child)
    {
        const TraceNode& node = m_nodes[child];
        for (uint32_t i = 0; i < node.numDeps; ++i)
        {
            uint32_t parent = m_deps[node.firstDep + i];
            if (parent < n)
            {
                m_children[fill[parent]++] = child; // children ascend: filled in child order
            }
        }
    }
    m_childrenValid = true;
}

NodeIndexRange
ExecutionTrace::GetChildren(uint32_t index) const
{
    CheckIndex(index);
    if (!m_childrenValid)
    {
        throw std::logic_error("ExecutionTrace::GetChildren: call BuildChildIndex() first");
    }
    return NodeIndexRange(m_children.data() + m_childBegin[index],
                          m_childBegin[index + 1] - m_childBegin[index]);
}

void
ExecutionTrace::Validate(const std::string& file) const
{
    size_t n = m_nodes.size();
    for (const auto& node : m_nodes)
    {
        for (uint32_t i = 0; i < node.numDeps; ++i)
        {
            if (m_deps[node.firstDep + i] >= n)
            {
                throw TraceError(file,
                                 m_rank,
                                 static_cast<int64_t>(node.id),
                                 "depends on node index "
                                     + std::to_string(m_deps[node.firstDep + i])
                                     + ", which does not exist");
            }
        }
    }
    // Kahn's algorithm; what is left over lies on or behind a cycle.
    std::vector<uint32_t> order = KahnOrder();
    if (order.size() == n)
    {
        return;
    }
    // Find a cycle: among nodes not ordered, follow dependencies that are not ordered either;
    // every such node has one (else Kahn would have ordered it), so the walk must repeat.
    std::vector<char> ordered(n, 0);
    for (uint32_t i : order)
    {
        ordered[i] = 1;
    }
    uint32_t start = 0;
    while (ordered[start])
    {
        ++start;
    }
    std::vector<uint32_t> seenAt(n, kNotFound);
    std::vector<uint32_t> path;
    uint32_t current = start;
    while (seenAt[current] == kNotFound)
    {
        seenAt[current] = static_cast<uint32_t>(path.size());
        path.push_back(current);
        const TraceNode& node = m_nodes[current];
        for (uint32_t i = 0; i < node.numDeps; ++i)
        {
            uint32_t parent = m_deps[node.firstDep + i];
            if (!ordered[parent])
            {
                current = parent;
                break;
            }
        }
    }
    std::string cycle;
    size_t from = seenAt[current];
    size_t shown = 0;
    for (size_t i = from; i < path.size() && shown < 12; ++i, ++shown)
    {
        cycle += std::to_string(m_nodes[path[i]].id) + " -> ";
    }
    if (path.size() - from > shown)
    {
        cycle += "... -> ";
    }
    cycle += std::to_string(m_nodes[current].id);
    throw TraceError(file,
                     m_rank,
                     static_cast<int64_t>(m_nodes[current].id),
                     "dependency cycle (each waits for the next): " + cycle);
}

std::vector<uint32_t>
ExecutionTrace::TopologicalOrder() const
{
    std::vector<uint32_t> order = KahnOrder();
    if (order.size() != m_nodes.size())
    {
        Validate("");
    }
    return order;
}

std::vector<uint32_t>
ExecutionTrace::KahnOrder() const
{
    size_t n = m_nodes.size();
    // Children in CSR form, local so that this works on a const graph.
    std::vector<uint32_t> begin(n + 1, 0);
    std::vector<uint32_t> pending(n, 0);
    for (uint32_t c = 0; c < n; ++c)
    {
        const TraceNode& node = m_nodes[c];
        for (uint32_t i = 0; i < node.numDeps; ++i)
        {
            uint32_t p = m_deps[node.firstDep + i];
            if (p >= n)
            {
                throw TraceError("",
                                 m_rank,
                                 static_cast<int64_t>(node.id),
                                 "depends on node index " + std::to_string(p)
                                     + ", which does not exist");
            }
            ++begin[p + 1];
        }
        pending[c] = node.numDeps;
    }
    for (size_t i = 0; i < n; ++i)
    {
        begin[i + 1] += begin[i];
    }
    std::vector<uint32_t> children(begin[n]);
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (uint32_t c = 0; c < n; ++c)
    {
        const TraceNode& node = m_nodes[c];
        for (uint32_t i = 0; i < node.numDeps; ++i)
        {
            children[fill[m_deps[node.firstDep + i]]++] = c;
        }
    }
    // Min-heap on index keeps the order deterministic and close to insertion order.
    std::vector<uint32_t> ready;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (pending[i] == 0)
        {
            ready.push_back(i);
        }
    }
    std::make_heap(ready.begin(), ready.end(), std::greater<uint32_t>());
    std::vector<uint32_t> order;
    order.reserve(n);
    while (!ready.empty())
    {
        std::pop_heap(ready.begin(), ready.end(), std::greater<uint32_t>());
        uint32_t v = ready.back();
        ready.pop_back();
        order.push_back(v);
        for (uint32_t k = begin[v]; k < begin[v + 1]; ++k)
        {
            if (--pending[children[k]] == 0)
            {
                ready.push_back(children[k]);
                std::push_heap(ready.begin(), ready.end(), std::greater<uint32_t>());
            }
        }
    }
    return order;
}

void
ExecutionTrace::Reserve(size_t nodes, size_t edges)
{
    m_nodes.reserve(nodes);
    m_deps.reserve(edges);
    m_names.Reserve(nodes, m_distinctNames); // at most one name per node
}

void
ExecutionTrace::SetDistinctNames()
{
    m_distinctNames = true;
}

bool
ExecutionTrace::operator==(const ExecutionTrace& other) const
{
    if (m_rank != other.m_rank || m_nodes.size() != other.m_nodes.size())
    {
        return false;
    }
    for (uint32_t i = 0; i < m_nodes.size(); ++i)
    {
        const TraceNode& a = m_nodes[i];
        const TraceNode& b = other.m_nodes[i];
        if (a.id != b.id || a.durationNs != b.durationNs || a.numOps != b.numOps
            || a.bytes != b.bytes || a.group != b.group || a.commSrc != b.commSrc
            || a.commDst != b.commDst || a.commTag != b.commTag || a.type != b.type
            || a.commType != b.commType || GetHostNs(i) != other.GetHostNs(i)
            || IsHostSync(i) != other.IsHostSync(i) || GetName(i) != other.GetName(i)
            || GetSmScaling(i) != other.GetSmScaling(i))
        {
            return false;
        }
        auto da = GetDeps(i);
        auto db = other.GetDeps(i);
        if (da.size() != db.size() || !std::equal(da.begin(), da.end(), db.begin()))
        {
            return false;
        }
    }
    return true;
}

bool
ExecutionTrace::operator!=(const ExecutionTrace& other) const
{
    return !(*this == other);
}

void
ExecutionTrace::CheckIndex(uint32_t index) const
{
    if (index >= m_nodes.size())
    {
        throw std::out_of_range("ExecutionTrace: node index " + std::to_string(index)
                                + " out of range (" + std::to_string(m_nodes.size()) + " nodes)");
    }
}

void
ExecutionTrace::Invalidate()
{
    m_childrenValid = false;
}

void
ExecutionTrace::SetHost(uint32_t index, uint64_t hostNs, bool sync)
{
    if (hostNs >= kHostSyncBit)
    {
        throw std::out_of_range("ExecutionTrace::SetHost: host time beyond 2^63 ns");
    }
    if (m_host.size() < m_nodes.size())
    {
        m_host.resize(m_nodes.size(), 0);
    }
    m_host.at(index) = hostNs | (sync ? kHostSyncBit : 0);
}

uint64_t
ExecutionTrace::GetHostNs(uint32_t index) const
{
    return index < m_host.size() ? m_host[index] & ~kHostSyncBit : 0;
}

bool
ExecutionTrace::IsHostSync(uint32_t index) const
{
    return index < m_host.size() && (m_host[index] & kHostSyncBit) != 0;
}

bool
ExecutionTrace::HasHost() const
{
    for (uint64_t h : m_host)
    {
        if (h != 0)
        {
            return true;
        }
    }
    return false;
}

void
ExecutionTrace::SetSmScaling(uint32_t index, float share)
{
    if (!(share >= 0 && share <= 1))
    {
        throw std::out_of_range("ExecutionTrace::SetSmScaling: share outside [0, 1]");
    }
    if (m_sm.size() < m_nodes.size())
    {
        m_sm.resize(m_nodes.size(), 0);
    }
    m_sm.at(index) = share;
}

float
ExecutionTrace::GetSmScaling(uint32_t index) const
{
    return index < m_sm.size() ? m_sm[index] : 0;
}

void
ExecutionTrace::SetCommSms(uint32_t index, uint32_t sms)
{
    if (m_sm.size() < m_nodes.size())
    {
        m_sm.resize(m_nodes.size(), 0);
    }
    m_sm.at(index) = static_cast<float>(sms);
}

uint32_t
ExecutionTrace::GetCommSms(uint32_t index) const
{
    return index < m_sm.size() ? static_cast<uint32_t>(m_sm[index]) : 0;
}

} // namespace rapidllm
} // namespace ns3
