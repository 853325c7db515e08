/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_EXTENSIONS_H
#define RAPIDLLM_CLI_EXTENSIONS_H

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief Loads the shared libraries named by `--load=PATH` (each occurrence, in order) before
 * the options are parsed, so that the routing policies, collective algorithms and network
 * backends they register (static TypeRegistrar lines) are known by name to every option and
 * spec that follows. A library that cannot be loaded is a SpecError naming --load, the path
 * and the loader's reason (dlerror).
 * \param argc argument count \param argv the command's arguments (argv[0] is the program)
 * \return the paths loaded, in order (for naming them when an exception escapes a command)
 */
std::vector<std::string> LoadExtensions(int argc, char** argv);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_EXTENSIONS_H
