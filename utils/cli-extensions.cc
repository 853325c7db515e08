/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-extensions.h"

#include "cli-args.h"
#include "ns3/spec-error.h"
#include "ns3/type-registry.h"

#include <dlfcn.h>

#include <filesystem>
#include <string>

namespace ns3 {
namespace rapidllm {

std::vector<std::string>
LoadExtensions(int argc, char** argv)
{
    std::vector<std::string> loaded;
    for (int i = 1; i < argc; ++i)
    {
        const std::string arg = argv[i];
        if (arg != "--load" && arg.rfind("--load=", 0) != 0)
        {
            continue;
        }
        const std::string path = arg.size() > 7 ? arg.substr(7) : std::string();
        // A bare file name is one in the current folder, as everywhere on the command line
        // (dlopen would search the system's library path for it instead); a name that is not
        // a file there is still looked up as dlopen does.
        std::error_code ec;
        const std::string file =
            path.find('/') == std::string::npos && std::filesystem::is_regular_file(path, ec)
                ? "./" + path
                : path;
        if (path.empty())
        {
            throw SpecError(kCommandLine,
                            "load",
                            "needs a value (--load=PATH): the shared library to load, e.g. "
                            "--load=./libmy-policy.so");
        }
        // RTLD_GLOBAL: a library may build on another loaded before it. Never unloaded: the
        // types it registered stay in use until the process ends.
        TypeRegistryBase::TakeRepeats(); // this library's alone
        if (!dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL))
        {
            const char* why = dlerror();
            throw SpecError(kCommandLine,
                            "load",
                            "cannot load '" + path + "': " + (why ? why : "unknown reason"));
        }
        const std::vector<std::string> refused = TypeRegistryBase::TakeRefusals();
        if (!refused.empty())
        {
            throw SpecError(kCommandLine, "load", "'" + path + "': " + refused.front());
        }
        const std::vector<std::string> repeats = TypeRegistryBase::TakeRepeats();
        if (!repeats.empty())
        {
            throw SpecError(kCommandLine,
                            "load",
                            "'" + path + "' registers " + repeats.front()
                                + " again, as a library loaded before did: the dynamic linker "
                                  "binds its type to that library's code, so this one's would "
                                  "not run (two builds of one plugin?); load one of them");
        }
        loaded.push_back(path);
    }
    return loaded;
}

} // namespace rapidllm
} // namespace ns3
