/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-ns3-checks.h"

#include "cli-options.h"
#include "ns3/attribute-text.h"
#include "ns3/attribute.h"
#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/job-options.h"
#include "ns3/log.h"
#include "ns3/packet-network.h"
#include "ns3/packet-resolution.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ns3/study-plot.h"
#include "ns3/type-id.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <vector>

namespace ns3 {
namespace rapidllm {

namespace {
/** \return the non-empty ';'-separated entries of environment variable \p variable */
std::vector<std::string>
EnvironmentEntries(const char* variable)
{
    std::vector<std::string> found;
    const char* env = std::getenv(variable);
    std::istringstream entries(env ? env : "");
    std::string entry;
    while (std::getline(entries, entry, ';'))
    {
        if (!entry.empty())
        {
            found.push_back(entry);
        }
    }
    return found;
}
} // namespace

void
CheckLogComponents()
{
    const char* env = std::getenv("NS_LOG");
    std::istringstream entries(env ? env : "");
    std::string entry;
    while (std::getline(entries, entry, ':'))
    {
        const std::string name = entry.substr(0, entry.find('='));
        if (name == "*" || name == "***" || name == "print-list")
        {
            continue;
        }
        if (LogComponent::GetComponentList()->count(name) == 0)
        {
            throw SpecError("NS_LOG",
                            "",
                            "'" + entry + "': no log component " + name
                                + " (entries are Component[=level|...], separated by ':'; "
                                  "NS_LOG=print-list lists the components, e.g. "
                                  "RapidLlmTraceReplayer)");
        }
    }
}

void
CheckAttributeDefaults()
{
    CheckAttributeDefaultsVariable("rapid-llm");
}

void
CheckGlobalValues()
{
    const char* const variable = "NS_GLOBAL_VALUE";
    for (const std::string& entry : EnvironmentEntries(variable))
    {
        const auto eq = entry.find('=');
        const std::string name = entry.substr(0, eq);
        std::string known;
        bool found = false;
        for (auto it = GlobalValue::Begin(); it != GlobalValue::End(); ++it)
        {
            known += (known.empty() ? "" : ", ") + (*it)->GetName();
            found = found || (*it)->GetName() == name;
        }
        if (eq == std::string::npos || !found)
        {
            throw SpecError(variable,
                            "",
                            "'" + entry + "' is not Name=value with a global value's name (" + known
                                + "; entries are separated by ';')");
        }
        const std::string value = entry.substr(eq + 1);
        if (name == "SimulatorImplementationType" && value != "ns3::DefaultSimulatorImpl")
        {
            throw SpecError(variable,
                            "",
                            "'" + entry
                                + "': a replay runs on ns-3's default simulator "
                                  "(ns3::DefaultSimulatorImpl); another (a real-time one paces "
                                  "simulated time in wall-clock time) is not the simulation "
                                  "the report is of");
        }
    }
}

void
CheckPrintArguments(const std::vector<std::string>& ns3Args)
{
    for (const std::string& arg : ns3Args)
    {
        for (const std::string option : {"--PrintAttributes", "--PrintGroup"})
        {
            if (arg.rfind(option, 0) != 0
                || (arg.size() > option.size() && arg[option.size()] != '='))
            {
                continue;
            }
            const std::string name =
                arg.size() > option.size() ? arg.substr(option.size() + 1) : std::string();
            bool known = false;
            if (option == "--PrintAttributes")
            {
                TypeId tid;
                known = !name.empty() && TypeId::LookupByNameFailSafe(name, &tid);
            }
            else
            {
                for (uint16_t i = 0; i < TypeId::GetRegisteredN() && !known; ++i)
                {
                    known = !name.empty() && TypeId::GetRegistered(i).GetGroupName() == name;
                }
            }
            if (!known)
            {
                throw SpecError(
                    kCommandLine,
                    option.substr(2),
                    (name.empty() ? std::string("needs a name") : "'" + name + "' is not known")
                        + "; " + option + "=NAME, NAME from "
                        + (option == "--PrintAttributes" ? "--PrintTypeIds" : "--PrintGroups"));
            }
        }
    }
}

void
ApplyPacketAttributes(const std::string& list)
{
    std::stringstream items(list);
    std::string item;
    const TypeId packet = PacketNetwork::GetTypeId();
    const std::string listing =
        " (rapid-llm --PrintAttributes=" + packet.GetName() + " lists them)";
    std::vector<std::string> given;
    while (std::getline(items, item, ','))
    {
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos)
        {
            throw SpecError(kCommandLine,
                            "packet",
                            "'" + item + "' is not NAME=VALUE of a PacketNetwork attribute"
                                + listing);
        }
        const std::string name = item.substr(0, eq);
        TypeId::AttributeInformation info;
        if (!packet.LookupAttributeByName(name, &info))
        {
            throw SpecError(kCommandLine,
                            "packet",
                            "'" + item + "': PacketNetwork has no attribute '" + name + "'"
                                + listing);
        }
        if (std::find(given.begin(), given.end(), name) != given.end())
        {
            throw SpecError(kCommandLine, "packet", "attribute " + name + " is given twice");
        }
        given.push_back(name);
        // Checked here: ns-3 aborts on a value it cannot parse.
        const std::string why = CheckAttributeText(packet, name, item.substr(eq + 1));
        if (!why.empty()
            || !Config::SetDefaultFailSafe(packet.GetName() + "::" + name,
                                           StringValue(item.substr(eq + 1))))
        {
            throw SpecError(kCommandLine, "packet", "'" + item + "': " + why);
        }
    }
    if (!list.empty())
    {
        try
        {
            CreateObject<PacketNetwork>()->CheckAttributes(); // the set, before anything runs
        }
        catch (const SpecError& e)
        {
            throw SpecError(kCommandLine, "packet", e.GetField() + ": " + e.GetMessage());
        }
    }
}

void
ApplyPacketAttributesFor(const std::string& list, const std::string& backend)
{
    if (!list.empty() && backend != "packet")
    {
        throw SpecError(kCommandLine,
                        "packet",
                        "sets the packet network's attributes, and the backend here is '" + backend
                            + "': add --backend=packet");
    }
    if (backend == "packet")
    {
        UsePicoseconds();
    }
    ApplyPacketAttributes(list);
}

void
RefusePacketCaptures(const std::string& list, const std::string& why)
{
    std::stringstream items(list);
    std::string item;
    while (std::getline(items, item, ','))
    {
        if (item.rfind("Pcap=", 0) == 0 && item.size() > 5)
        {
            throw SpecError(kCommandLine,
                            "packet",
                            "'" + item + "': " + why
                                + ", and each would write the same capture files over the "
                                  "others'; capture one network with run, replay, collective "
                                  "or xval --only=WORKLOAD");
        }
    }
}

void
CheckPlotting(const CliArgs& args)
{
    if (GnuplotFound())
    {
        return;
    }
    const std::string command = args.Command();
    const CliOption* plot = FindCliOption("plot", command);
    if (plot && plot->TakenBy(command) && args.Flag("plot"))
    {
        throw SpecError(kCommandLine,
                        "plot",
                        "draws with the gnuplot program, which is missing (Debian: apt-get "
                        "install gnuplot-nox, as utils/install-deps.sh does); leave --plot out");
    }
    const CliOption* out = FindCliOption("out", command);
    if (command != "sweep" && command != "merge" && command != "trace" && out
        && out->TakenBy(command) && args.HasValue("out"))
    {
        std::cerr << "rapid-llm " << command
                  << ": note: the gnuplot program is missing (Debian: apt-get install "
                     "gnuplot-nox): "
                  << args.Text("out")
                  << " gets its plots' gnuplot scripts (.plt), not their PNGs\n";
    }
}

} // namespace rapidllm
} // namespace ns3
