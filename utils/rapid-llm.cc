/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The rapid-llm command: a thin face on the library. The first word picks the subcommand; the
// rest are ns-3 CommandLine options (--name=value). Bad input prints one clear line and exits 2.

#include "cli-commands.h"
#include "ns3/spec-error.h"

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
           << "Run 'rapid-llm <command> --help' for a command's options.\n\nCommands:\n";
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
            for (int i = 2; i < argc; ++i)
            {
                args.push_back(argv[i]);
            }
            try
            {
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
