/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CHAKRA_TEST_ENCODER_H
#define RAPIDLLM_CHAKRA_TEST_ENCODER_H

// A hand-written protobuf encoder for the trace tests: it stands in for "another tool" writing
// Chakra files, so it uses the official schema's field numbers and none of our generated code.

#include <cstdint>
#include <string>

namespace ns3 {
namespace rapidllm {
namespace chakratest {

// Field numbers and enum values of Chakra's et_def.proto.
constexpr int kMetaVersion = 1;        //!< GlobalMetadata.version
constexpr int kMetaAttr = 2;           //!< GlobalMetadata.attr
constexpr int kNodeId = 1;             //!< Node.id
constexpr int kNodeName = 2;           //!< Node.name
constexpr int kNodeType = 3;           //!< Node.type
constexpr int kNodeCtrlDeps = 4;       //!< Node.ctrl_deps
constexpr int kNodeDataDeps = 5;       //!< Node.data_deps
constexpr int kNodeDurationMicros = 7; //!< Node.duration_micros
constexpr int kNodeInputs = 8;         //!< Node.inputs
constexpr int kNodeAttr = 10;          //!< Node.attr
constexpr int kAttrName = 1;           //!< AttributeProto.name
constexpr int kAttrInt32 = 7;          //!< AttributeProto.int32_val
constexpr int kAttrDouble = 3;         //!< AttributeProto.double_val
constexpr int kAttrInt64 = 9;          //!< AttributeProto.int64_val
constexpr int kAttrUint64 = 13;        //!< AttributeProto.uint64_val
constexpr int kAttrBool = 27;          //!< AttributeProto.bool_val
constexpr int kAttrString = 29;        //!< AttributeProto.string_val
constexpr int kCompNode = 4;           //!< NodeType.COMP_NODE
constexpr int kSendNode = 5;           //!< NodeType.COMM_SEND_NODE
constexpr int kRecvNode = 6;           //!< NodeType.COMM_RECV_NODE
constexpr int kCollNode = 7;           //!< NodeType.COMM_COLL_NODE
constexpr int kAllReduce = 0;          //!< CollectiveCommType.ALL_REDUCE
constexpr int kAllGather = 2;          //!< CollectiveCommType.ALL_GATHER
constexpr int kReduceScatter = 7;      //!< CollectiveCommType.REDUCE_SCATTER

/** Appends a base-128 varint. */
inline void
PutVarint(std::string& s, uint64_t v)
{
    while (v >= 0x80)
    {
        s.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
    }
    s.push_back(static_cast<char>(v));
}

/** Appends a varint field (wire type 0). */
inline void
PutVarintField(std::string& s, int field, uint64_t v)
{
    PutVarint(s, static_cast<uint64_t>(field) << 3);
    PutVarint(s, v);
}

/** Appends a length-delimited field (wire type 2). */
inline void
PutBytesField(std::string& s, int field, const std::string& b)
{
    PutVarint(s, (static_cast<uint64_t>(field) << 3) | 2);
    PutVarint(s, b.size());
    s += b;
}

/** \return an AttributeProto with an integer value in \p valueField */
inline std::string
IntAttr(const std::string& name, int valueField, uint64_t v)
{
    std::string a;
    PutBytesField(a, kAttrName, name);
    PutVarintField(a, valueField, v);
    return a;
}

/** \return an AttributeProto with a string value */
inline std::string
StringAttr(const std::string& name, const std::string& v)
{
    std::string a;
    PutBytesField(a, kAttrName, name);
    PutBytesField(a, kAttrString, v);
    return a;
}

/** \return \p message prefixed by its varint length, as a Chakra file holds it */
inline std::string
Delimited(const std::string& message)
{
    std::string s;
    PutVarint(s, message.size());
    return s + message;
}

} // namespace chakratest
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CHAKRA_TEST_ENCODER_H
