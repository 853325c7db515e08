/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The rapid-llm command: a thin face on the library. The first word picks the subcommand; the
// rest are options (--name=value) declared in cli-options.cc. Bad input prints one line,
// "rapid-llm <command>: error: ...", and exits 2; an internal fault exits 1.

#include "cli-commands.h"
#include "cli-error.h"
#include "cli-extensions.h"
#include "cli-ns3-checks.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/global-value.h"
#include "ns3/job-echo.h"
#include "ns3/job-options.h"
#include "ns3/run-progress.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ns3/worker-pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

using namespace ns3::rapidllm;

namespace {
/**
 * \return CPU seconds (user + system) of this process so far, and of its finished worker
 * processes (sweep --workers)
 */
double
CpuSeconds()
{
    double total = 0;
    for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN})
    {
        rusage usage{};
        getrusage(who, &usage);
        total += usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
                 + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    }
    return total;
}
/**
 * Gives the job's graphs the host memory --host-memory asks for (the ns-3 global value
 * RapidLlmHostMemoryGiB), refusing more than this machine has: a build that large would be
 * killed for want of memory, or swap for hours, instead of being refused with its size.
 */
void
ApplyHostMemory(const CliArgs& options)
{
    const CliOption* hostMemory = FindCliOption("host-memory", options.Command());
    if (!hostMemory || !hostMemory->TakenBy(options.Command()) || !options.Has("host-memory"))
    {
        return;
    }
    const double gib = options.Real("host-memory");
    const double machine =
        double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)) / 1073741824.0;
    if (machine > 0 && gib > machine)
    {
        char text[160];
        std::snprintf(text,
                      sizeof(text),
                      "%g GiB is more than this machine's memory (%.1f GiB)",
                      gib,
                      machine);
        throw SpecError(kCommandLine, "host-memory", text);
    }
    ns3::GlobalValue::Bind("RapidLlmHostMemoryGiB", ns3::DoubleValue(gib));
}

/** Set once a command has its options: from then on it checks its own output (OutputError). */
bool g_commandRuns = false;

/**
 * At exit after a help text, a listing or the version (ns-3's CommandLine exits by itself once
 * it printed them): a standard output that could not be written fails the program, as a
 * command's output does.
 */
void
CheckOutputAtExit()
{
    if (!g_commandRuns && (std::fflush(stdout) != 0 || std::ferror(stdout)))
    {
        std::fputs("rapid-llm: error: cannot write 'standard output'\n", stderr);
        std::_Exit(kExitOutputError);
    }
}
} // namespace

int
main(int argc, char** argv)
{
    std::atexit(CheckOutputAtExit);
    const auto& commands = GetCliCommands();
    auto usage = [&](std::ostream& os)
    {
        os << "Usage: rapid-llm <command> [--option=value ...]\n"
           << "Run 'rapid-llm <command> --help' for a command's options.\n\nCommands:\n";
        std::size_t width = 0;
        for (const auto& c : commands)
        {
            width = std::max(width, c.name.size());
        }
        for (const auto& c : commands)
        {
            os << "  " << c.name << std::string(width + 2 - c.name.size(), ' ') << c.summary
               << "\n";
        }
    };
    if (argc >= 2
        && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0))
    {
        std::cout << "rapid-llm " << RapidLlmVersion() << "\n";
        return 0;
    }
    // "help run" is "run --help" (and "help study faults", "study faults --help").
    std::vector<char*> helpArgv;
    if (argc >= 3 && std::strcmp(argv[1], "help") == 0)
    {
        helpArgv.assign(argv, argv + argc);
        helpArgv.erase(helpArgv.begin() + 1);
        static char help[] = "--help";
        helpArgv.push_back(help);
        argc = static_cast<int>(helpArgv.size());
        argv = helpArgv.data();
    }
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "help") == 0)
    {
        usage(argc < 2 ? std::cerr : std::cout);
        return argc < 2 ? 2 : 0;
    }
    if (std::strncmp(argv[1], "--Print", 7) == 0)
    {
        // ns-3's own listings (--PrintTypeIds, --PrintAttributes=TYPE, ...) need no command.
        std::vector<std::string> args(argv + 1, argv + argc);
        try
        {
            for (const std::string& a : args)
            {
                if (a.rfind("--Print", 0) != 0)
                {
                    throw SpecError(kCommandLine,
                                    "",
                                    "'" + a
                                        + "' beside ns-3's --Print arguments: give a command "
                                          "first (rapid-llm <command> --help)");
                }
            }
            CheckPrintArguments(args); // ns-3 aborts on an unknown type or group
        }
        catch (const Error& e)
        {
            std::cerr << "rapid-llm: error: " << e.what() << "\n";
            return 2;
        }
        args.insert(args.begin(), "rapid-llm");
        ns3::CommandLine cmd("rapid-llm");
        cmd.Parse(args); // prints what was asked for and exits
        return 0;
    }
    // A command of two words ("study faults") takes the second from the command line too.
    std::string name = argv[1];
    int first = 2;
    if (argc > 2 && argv[2][0] != '-')
    {
        const std::string two = name + " " + argv[2];
        for (const auto& c : commands)
        {
            if (c.name == two)
            {
                name = two;
                first = 3;
            }
        }
    }
    for (const auto& c : commands)
    {
        if (c.name != name)
        {
            continue;
        }
        // Hand the subcommand its own argv, with "rapid-llm <command>" as the program name.
        std::string program = "rapid-llm " + name;
        std::vector<char*> args;
        args.push_back(program.data());
        for (int i = first; i < argc; ++i)
        {
            args.push_back(argv[i]);
        }
        const auto wall0 = std::chrono::steady_clock::now();
        const double cpu0 = CpuSeconds();
        std::unique_ptr<CliArgs> options;
        std::vector<std::string> extensions;
        // An exception no layer translated: a defect here, or in an extension the user loaded,
        // whose code runs inside the command (named, so its author knows where to look).
        const auto internalError = [&](const std::string& what)
        {
            std::cout.flush();
            std::cerr << "rapid-llm " << c.name << ": internal error: " << what;
            if (!extensions.empty())
            {
                std::cerr << " (extensions loaded:";
                for (const auto& path : extensions)
                {
                    std::cerr << " " << path;
                }
                std::cerr << "; the exception may come from one of them)";
            }
            std::cerr << "\n";
            return 1;
        };
        try
        {
            // Extensions first: the options may name what they register.
            extensions = LoadExtensions(static_cast<int>(args.size()), args.data());
            CheckAttributeDefaults(); // before any object reads them
            CheckGlobalValues();
            CheckLogComponents();
            options = std::make_unique<CliArgs>(
                c.name, c.usage, static_cast<int>(args.size()), args.data());
            g_commandRuns = true;
            const CliOption* granularity = FindCliOption("granularity", c.name);
            if (granularity && granularity->TakenBy(c.name) && options->Has("granularity"))
            {
                // Every engine, replayer and helper of the command runs collectives so.
                for (const char* a : {"ns3::rapidllm::CollectiveEngine::Granularity",
                                      "ns3::rapidllm::TraceReplayer::Granularity"})
                {
                    ns3::Config::SetDefault(a, ns3::StringValue(options->Text("granularity")));
                }
            }
            ApplyHostMemory(*options);
            CheckPlotting(*options);
            const int status = c.run(*options);
            // A full disk or a closed stream fails the flush: the output a script reads is cut.
            errno = 0;
            if (std::fflush(stdout) != 0 || !std::cout.flush() || std::ferror(stdout))
            {
                throw OutputError("standard output");
            }
            if (options->Flag("timing"))
            {
                std::fflush(stdout);
                std::fprintf(
                    stderr,
                    "rapid-llm %s: wall %.3f s, cpu %.3f s\n",
                    c.name.c_str(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(),
                    CpuSeconds() - cpu0);
            }
            return status;
        }
        catch (const OutputError& e)
        {
            std::cerr << "rapid-llm " << c.name << ": error: " << e.what() << "\n";
            return kExitOutputError;
        }
        catch (const Error& e)
        {
            std::cout.flush();
            std::cerr << "rapid-llm " << c.name
                      << ": error: " << DescribeError(c.name, e, options.get()) << "\n";
            return 2;
        }
        catch (const WorkerLost& e)
        {
            // Not the input's fault, nor a defect: the machine took the worker (out of memory).
            std::cout.flush();
            std::cerr << "rapid-llm " << c.name << ": error: " << e.what() << "\n";
            return 1;
        }
        catch (const Interrupted&)
        {
            // What was known is printed; 128 + SIGINT, as a shell reports an interrupted job.
            std::cout.flush();
            return 130;
        }
        catch (const std::exception& e)
        {
            return internalError(e.what());
        }
        catch (...)
        {
            return internalError("an exception that is not a std::exception");
        }
    }
    std::string kinds;
    for (const auto& c : commands)
    {
        if (c.name.rfind(name + " ", 0) == 0)
        {
            kinds += (kinds.empty() ? "" : ", ") + c.name.substr(name.size() + 1);
        }
    }
    const bool askedHelp = argc > 2 && (std::strcmp(argv[2], "--help") == 0);
    if (!kinds.empty() && askedHelp)
    {
        // "study --help": the kinds, each with its summary.
        std::cout << "Usage: rapid-llm " << name << " <kind> [--option=value ...]\n"
                  << "Run 'rapid-llm " << name
                  << " <kind> --help' for a kind's options.\n\nKinds:\n";
        const std::size_t width = 1
                                  + std::max_element(commands.begin(),
                                                     commands.end(),
                                                     [](const CliCommand& a, const CliCommand& b)
                                                     {
                                                         return a.name.size() < b.name.size();
                                                     })
                                        ->name.size();
        for (const auto& c : commands)
        {
            if (c.name.rfind(name + " ", 0) == 0)
            {
                const std::string kind = c.name.substr(name.size() + 1);
                std::cout << "  " << kind << std::string(width - name.size() - kind.size(), ' ')
                          << c.summary << "\n";
            }
        }
        return 0;
    }
    if (!kinds.empty())
    {
        std::cerr << "rapid-llm " << name << ": error: name what to run: " << kinds
                  << " (e.g. rapid-llm " << name << " " << kinds.substr(0, kinds.find(','))
                  << " --help)\n";
        return 2;
    }
    std::cerr << "rapid-llm: unknown command '" << argv[1] << "'\n";
    usage(std::cerr);
    return 2;
}
