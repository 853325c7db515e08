/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-args.h"

#include "cli-ns3-checks.h"
#include "ns3/command-line.h"
#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return a SpecError about option \p name */
SpecError
OptionError(const std::string& name, const std::string& message)
{
    return SpecError(kCommandLine, name, message);
}

} // namespace

std::string
CliArgs::Repeated(const std::string& item, const std::string& value)
{
    return "'" + item + "' is given twice in '" + value + "'; give each value once";
}

CliArgs::CliArgs(const std::string& command, const std::string& usage, int argc, char** argv)
    : m_command(command)
{
    // --help and ns-3's own --Print... arguments are handed to ns-3's CommandLine.
    std::vector<std::string> ns3Args;
    for (int i = 1; i < argc; ++i)
    {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h" || arg.rfind("--Print", 0) == 0)
        {
            ns3Args.push_back(arg == "-h" ? "--help" : arg);
            continue;
        }
        const CliOption* bare = nullptr;
        for (const auto& o : GetCliOptions())
        {
            bare = o.positional && o.TakenBy(command) ? &o : bare;
        }
        if (bare && arg.rfind("--", 0) != 0 && !arg.empty())
        {
            // A bare argument of a command that takes them (merge DIR...).
            CheckValue(*bare, arg);
            m_given[bare->name].push_back(arg);
            continue;
        }
        if (arg.rfind("--", 0) != 0 || arg.size() == 2)
        {
            throw SpecError(kCommandLine,
                            "",
                            "unexpected argument '" + arg
                                + "'; options take the form --name=value (see rapid-llm " + command
                                + " --help)");
        }
        const std::size_t eq = arg.find('=');
        const std::string name =
            arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        const CliOption* option = FindCliOption(name, command);
        if (!option || !option->TakenBy(command))
        {
            std::vector<std::string> known;
            std::string meant; // the closest option taken by the command, if a likely misspelling
            std::size_t closest = std::string::npos;
            for (const auto& o : GetCliOptions())
            {
                if (o.TakenBy(command))
                {
                    known.push_back("--" + o.name);
                    const std::size_t edits = EditDistance(name, o.name);
                    if (LooksMisspelt(name, o.name) && edits < closest)
                    {
                        closest = edits;
                        meant = o.name;
                    }
                }
            }
            throw SpecError(kCommandLine,
                            "",
                            "unknown option --" + name + " for rapid-llm " + command
                                + (meant.empty() ? "" : " (did you mean --" + meant + "?)")
                                + "; its options: " + JoinNames(known));
        }
        std::string value;
        if (eq != std::string::npos)
        {
            value = arg.substr(eq + 1);
        }
        else if (option->kind == OptionKind::FLAG)
        {
            value = "true"; // --json alone means --json=true
        }
        else
        {
            throw OptionError(name, "needs a value (--" + name + "=VALUE): " + option->Allowed());
        }
        CheckValue(*option, value);
        auto& values = m_given[name];
        if (!values.empty() && !option->repeatable)
        {
            throw OptionError(
                name, "given twice ('" + values.front() + "' and '" + value + "'); give it once");
        }
        values.push_back(value);
    }
    if (!ns3Args.empty())
    {
        PrintHelp(argc > 0 ? argv[0] : "rapid-llm " + command, usage, ns3Args);
    }
    for (const auto& o : GetCliOptions())
    {
        if (o.requiredIn.count(command))
        {
            Require(o.name);
        }
    }
}

const std::string&
CliArgs::Command() const
{
    return m_command;
}

const CliOption&
CliArgs::Option(const std::string& name) const
{
    const CliOption* option = FindCliOption(name, m_command);
    if (!option || !option->TakenBy(m_command))
    {
        // A command reading an option it does not declare is our bug, not the user's.
        throw std::logic_error("rapid-llm " + m_command + " reads option --" + name
                               + ", which cli-options.cc does not declare for it");
    }
    return *option;
}

std::vector<std::string>
CliArgs::Items(const CliOption& option, const std::string& value) const
{
    if (!option.listIn.count(m_command))
    {
        return {value};
    }
    std::vector<std::string> items;
    std::stringstream ss(value);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        items.push_back(item);
    }
    if (!value.empty() && value.back() == ',')
    {
        items.emplace_back();
    }
    return items;
}

void
CliArgs::CheckValue(const CliOption& option, const std::string& value) const
{
    const std::string& name = option.name;
    if (value.empty() && option.kind != OptionKind::FLAG)
    {
        throw OptionError(name, "needs a value (--" + name + "=VALUE): " + option.Allowed());
    }
    const bool list = option.listIn.count(m_command) > 0;
    std::set<std::string> seen;
    for (const std::string& item : Items(option, value))
    {
        if (option.kind == OptionKind::TEXT && item.empty())
        {
            throw OptionError(name, "an empty item in '" + value + "'");
        }
        const std::string why = option.Check(item);
        if (!why.empty())
        {
            const std::string got = "'" + item + "'" + (list ? " (in '" + value + "')" : "");
            throw OptionError(name, got + " " + why);
        }
        // A list item given twice would run (and report) the same thing twice.
        uint64_t number = 0;
        const std::string key = option.kind == OptionKind::COUNT && ParseWholeNumber(item, number)
                                    ? std::to_string(number)
                                    : item;
        if (list && !seen.insert(key).second)
        {
            throw OptionError(name, Repeated(item, value));
        }
    }
}

bool
CliArgs::Has(const std::string& name) const
{
    Option(name);
    return m_given.count(name) > 0;
}

bool
CliArgs::HasValue(const std::string& name) const
{
    return !Text(name).empty();
}

std::string
CliArgs::Text(const std::string& name) const
{
    const CliOption& option = Option(name);
    auto it = m_given.find(name);
    return it != m_given.end() ? it->second.back() : option.DefaultFor(m_command);
}

std::vector<std::string>
CliArgs::Items(const std::string& name, char separator, bool distinct) const
{
    const std::string text = Text(name);
    std::vector<std::string> items;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, separator))
    {
        if (item.empty())
        {
            throw SpecError(kCommandLine, name, "an empty item in '" + text + "'");
        }
        if (distinct && std::find(items.begin(), items.end(), item) != items.end())
        {
            throw SpecError(kCommandLine, name, Repeated(item, text));
        }
        items.push_back(item);
    }
    if (items.empty() || text.back() == separator)
    {
        throw SpecError(kCommandLine, name, "an empty item in '" + text + "'");
    }
    return items;
}

std::vector<std::string>
CliArgs::Texts(const std::string& name) const
{
    Option(name);
    auto it = m_given.find(name);
    return it != m_given.end() ? it->second : std::vector<std::string>();
}

bool
CliArgs::Flag(const std::string& name) const
{
    bool value = false;
    ParseBoolean(Text(name), value);
    return value;
}

void
CliArgs::Require(const std::string& name) const
{
    if (!HasValue(name))
    {
        const CliOption& option = Option(name);
        auto help = option.helpIn.find(m_command);
        throw OptionError(name,
                          "is required (--" + name + "=VALUE: "
                              + (help != option.helpIn.end() ? help->second : option.help) + "; "
                              + option.Allowed() + ")");
    }
}

uint64_t
CliArgs::Count(const std::string& name) const
{
    Require(name);
    uint64_t value = 0;
    ParseWholeNumber(Text(name), value);
    return value;
}

std::vector<uint64_t>
CliArgs::Counts(const std::string& name) const
{
    Require(name);
    std::vector<uint64_t> values;
    for (const auto& item : Items(Option(name), Text(name)))
    {
        values.emplace_back();
        ParseWholeNumber(item, values.back());
    }
    return values;
}

std::vector<uint32_t>
CliArgs::Counts32(const std::string& name) const
{
    std::vector<uint32_t> values;
    for (uint64_t v : Counts(name))
    {
        values.push_back(static_cast<uint32_t>(v));
    }
    return values;
}

double
CliArgs::Real(const std::string& name) const
{
    Require(name);
    double value = 0;
    ParseFiniteNumber(Text(name), value);
    return value;
}

uint64_t
CliArgs::Size(const std::string& name) const
{
    Require(name);
    uint64_t bytes = 0;
    ParseByteSize(Text(name), bytes);
    return bytes;
}

std::vector<std::string>
CliArgs::Choices(const std::string& name) const
{
    Require(name);
    return Items(Option(name), Text(name));
}

void
CliArgs::PrintHelp(const std::string& program,
                   const std::string& usage,
                   const std::vector<std::string>& ns3Args) const
{
    CommandLine cmd(program);
    cmd.Usage(usage);
    // CommandLine keeps references to the values it prints as defaults.
    std::vector<std::string> defaults;
    defaults.reserve(GetCliOptions().size());
    for (const auto& o : GetCliOptions())
    {
        if (o.TakenBy(m_command))
        {
            defaults.push_back(o.DefaultFor(m_command));
            cmd.AddValue(o.name, o.HelpFor(m_command), defaults.back());
        }
    }
    std::vector<std::string> args = {program};
    args.insert(args.end(), ns3Args.begin(), ns3Args.end());
    CheckPrintArguments(ns3Args); // ns-3 aborts on an unknown type or group
    cmd.Parse(args);              // prints what was asked for and exits
    std::exit(0);
}

} // namespace rapidllm
} // namespace ns3
