/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The rapid-llm command: a thin face on the library. The first word picks the subcommand; the
// rest are ns-3 CommandLine options (--name=value). Bad input prints one clear line and exits 2.

#include "cli-commands.h"
#include "ns3/collective-engine.h"
#include "ns3/config.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"

#include <cstring>
#include <iostream>
#include <vector>

using namespace ns3::rapidllm;

int
main(int argc, char** argv)
{
    const auto& commands = GetCliCommands();
    auto usage = [&](std::ostream& os)
    {
        os << "Usage: rapid-llm <command> [--option=value ...]\n"
           << "Run 'rapid-llm <command> --help' for a command's options.\n"
           << "Every command takes --granularity=auto|fluid|message: how collectives run on the "
              "flow network (auto: fluid forms, except xval and collective, which run messages)."
              "\n\nCommands:\n";
        for (const auto& c : commands)
        {
            os << "  " << c.name << std::string(c.name.size() < 12 ? 12 - c.name.size() : 1, ' ')
               << c.summary << "\n";
        }
    };
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "help") == 0)
    {
        usage(argc < 2 ? std::cerr : std::cout);
        return argc < 2 ? 2 : 0;
    }
    for (const auto& c : commands)
    {
        if (c.name == argv[1])
        {
            // Hand the subcommand its own argv, with "rapid-llm <command>" as the program name.
            std::string program = std::string("rapid-llm ") + argv[1];
            std::vector<char*> args;
            args.push_back(program.data());
            std::string granularity;
            for (int i = 2; i < argc; ++i)
            {
                if (std::strncmp(argv[i], "--granularity=", 14) == 0)
                {
                    granularity = argv[i] + 14; // every command's, through the defaults below
                    continue;
                }
                args.push_back(argv[i]);
            }
            try
            {
                if (!granularity.empty())
                {
                    CollectiveEngine::CheckGranularity(granularity, "--granularity");
                    for (const char* a : {"ns3::rapidllm::CollectiveEngine::Granularity",
                                          "ns3::rapidllm::TraceReplayer::Granularity",
                                          "ns3::rapidllm::RapidLlmHelper::Granularity"})
                    {
                        ns3::Config::SetDefault(a, ns3::StringValue(granularity));
                    }
                }
                return c.run(static_cast<int>(args.size()), args.data());
            }
            catch (const Error& e)
            {
                std::cerr << "rapid-llm " << c.name << ": error: " << e.what() << "\n";
                return 2;
            }
            catch (const std::exception& e)
            {
                std::cerr << "rapid-llm " << c.name << ": error: " << e.what() << "\n";
                return 1;
            }
        }
    }
    std::cerr << "rapid-llm: unknown command '" << argv[1] << "'\n";
    usage(std::cerr);
    return 2;
}
