/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_PROCESS_H
#define RAPIDLLM_CLI_PROCESS_H

// The tool's path is compiled in by the standalone build (CMakeLists.txt); the in-tree ns-3
// build has none, and the command-line suites are left out there.
#ifdef RAPIDLLM_CLI

#    include "scratch-dir.h"

#    include <sys/wait.h>
#    include <unistd.h>

#    include <cstdio>
#    include <cstdlib>
#    include <filesystem>
#    include <fstream>
#    include <sstream>
#    include <string>
#    include <vector>

namespace ns3 {
namespace rapidllm {

/** \brief What one run of the rapid-llm tool gave. */
struct CliResult
{
    int status = -1; //!< exit code (-1 if it did not exit normally)
    std::string out; //!< stdout
    std::string err; //!< stderr
};

/** \return the whole file as text ("" if unreadable) */
inline std::string
ReadText(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/** \return \p arg quoted for the shell */
inline std::string
ShellQuote(const std::string& arg)
{
    std::string quoted = "'";
    for (char c : arg)
    {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

/**
 * \brief Runs the built `rapid-llm` tool (path compiled in as RAPIDLLM_CLI) as a user would,
 * with \p args after the program name, capturing its exit code, stdout and stderr.
 * \param args the arguments, e.g. {"run", "--tp=2"} \param dir a scratch directory
 * \param env environment settings before the command, e.g. "env PATH=/nonexistent" ("": none)
 * \return the result
 */
inline CliResult
RunCli(const std::vector<std::string>& args, const std::string& dir, const std::string& env = "")
{
    const std::string out = dir + "/stdout.txt";
    const std::string err = dir + "/stderr.txt";
    std::string command = env + (env.empty() ? "" : " ") + ShellQuote(RAPIDLLM_CLI);
    for (const auto& a : args)
    {
        command += " " + ShellQuote(a);
    }
    command += " >" + ShellQuote(out) + " 2>" + ShellQuote(err) + " </dev/null";
    const int raw = std::system(command.c_str());
    CliResult r;
    r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = ReadText(out);
    r.err = ReadText(err);
    return r;
}

/**
 * \brief Starts the built `rapid-llm` tool with \p args in the background, its stdout and
 * stderr to files in \p dir (stdout.bg.txt, stderr.bg.txt).
 * \return its process id (-1 if it could not start)
 */
inline pid_t
StartCli(const std::vector<std::string>& args, const std::string& dir)
{
    const std::string out = dir + "/stdout.bg.txt";
    const std::string err = dir + "/stderr.bg.txt";
    std::vector<std::string> argv = {RAPIDLLM_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    const pid_t pid = ::fork();
    if (pid == 0)
    {
        std::FILE* o = std::freopen(out.c_str(), "w", stdout);
        std::FILE* e = std::freopen(err.c_str(), "w", stderr);
        if (!o || !e)
        {
            ::_exit(127);
        }
        std::vector<char*> raw;
        for (auto& a : argv)
        {
            raw.push_back(a.data());
        }
        raw.push_back(nullptr);
        ::execv(raw[0], raw.data());
        ::_exit(127);
    }
    return pid;
}

/** \return the exit code of a process StartCli started (-1 if it did not exit normally) */
inline int
WaitCli(pid_t pid)
{
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid)
    {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/** \return \p a followed by \p b */
inline std::vector<std::string>
Cat(std::vector<std::string> a, const std::vector<std::string>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/** A small training job that runs in well under a second. */
const std::vector<std::string> kSmallTraining = {
    "--model=gpt-1.7b", "--gpus=8", "--tp=2", "--pp=2", "--gbs=8", "--seq=1024"};
/** A small inference job. */
const std::vector<std::string> kSmallInference = {
    "--model=llama2-7b", "--mode=inference", "--tp=2", "--batch=4", "--prompt=256", "--gen=16"};

/** \return a command line for messages: "run --tp=2" */
inline std::string
Joined(const std::vector<std::string>& args)
{
    std::string text;
    for (const auto& a : args)
    {
        text += (text.empty() ? "" : " ") + a;
    }
    return text;
}

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI

#endif // RAPIDLLM_CLI_PROCESS_H
