/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_NS3_CHECKS_H
#define RAPIDLLM_CLI_NS3_CHECKS_H

#include "cli-args.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief Checks ns-3's NS_ATTRIBUTE_DEFAULT environment variable before any object reads it:
 * ns-3 aborts the process on a value it cannot parse (a Time "bogus") and ignores a name it
 * does not know. Each `ns3::Class::Attribute=value` entry (';'-separated) must name a
 * registered class and attribute and hold a value of its type; otherwise a SpecError names the
 * variable, the entry and what is allowed.
 */
void CheckAttributeDefaults();

/**
 * \brief Checks ns-3's NS_GLOBAL_VALUE environment variable: ns-3 ignores a name it does not
 * know, and a simulator implementation other than the default one (RealtimeSimulatorImpl paces
 * the replay's simulated time in wall-clock time) is not the simulation the report is of. Each
 * `Name=value` entry (';'-separated) must name a global value; a SpecError names the variable,
 * the entry and what is allowed. (A value ns-3 cannot parse aborts in ns-3's own start-up,
 * before any of this program runs.)
 */
void CheckGlobalValues();

/**
 * \brief Checks ns-3's NS_LOG environment variable: ns-3 aborts the process, its component list
 * on stdout, when the simulator starts with a name no component has. Each ':'-separated entry
 * (`Component[=levels]`, `*`, `***` or `print-list`) must name a registered log component; a
 * SpecError names the variable, the entry and how to list them.
 */
void CheckLogComponents();

/**
 * \brief Checks ns-3's own --PrintAttributes=TYPE and --PrintGroup=GROUP arguments before ns-3's
 * CommandLine prints them: it aborts on an unknown type or group (or none given). A SpecError
 * names the argument and how to list what exists (--PrintTypeIds, --PrintGroups).
 * \param ns3Args the arguments handed to ns-3's CommandLine
 */
void CheckPrintArguments(const std::vector<std::string>& ns3Args);

/**
 * \brief Sets the PacketNetwork attribute defaults of the --packet option, NAME=VALUE[,...],
 * for every packet network the command creates. Each name and value is checked first (ns-3
 * aborts on a value it cannot parse), then the whole set (PacketNetwork::CheckAttributes); a
 * SpecError names the option, the item and what is allowed. An empty list does nothing.
 * \param list the option's value
 */
void ApplyPacketAttributes(const std::string& list);

/**
 * \brief The --packet option of a command that runs one backend (run, replay): refused unless
 * that backend is the packet network, then applied (ApplyPacketAttributes). The packet backend
 * runs at picoseconds (UsePicoseconds).
 * \param list the option's value (empty: nothing) \param backend the backend the command runs
 */
void ApplyPacketAttributesFor(const std::string& list, const std::string& backend);

/**
 * \brief Refuses packet captures (`Pcap=PREFIX` in the --packet list) on a command that runs
 * more than one packet network: each would write the same files over the others'.
 * \param list the option's value \param why what the command runs, for the message
 */
void RefusePacketCaptures(const std::string& list, const std::string& why);

/**
 * \brief Before a command runs: --plot (sweep, merge) needs the gnuplot program, else an error;
 * --out's own plots (run, the studies) are noted on stderr as scripts without their PNGs.
 * \param args the command's options
 */
void CheckPlotting(const CliArgs& args);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_NS3_CHECKS_H
