/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "option-spec.h"

#include "ns3/spec-reader.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return a number as printed in messages: whole numbers in full, others by %g */
std::string
NumberText(double x)
{
    char buffer[64];
    if (x == std::floor(x) && std::fabs(x) < 1e15)
    {
        std::snprintf(buffer, sizeof(buffer), "%.0f", x);
    }
    else
    {
        std::snprintf(buffer, sizeof(buffer), "%g", x);
    }
    return buffer;
}

/** \return the names a function lists, or none */
std::vector<std::string>
NamesOf(const std::function<std::vector<std::string>()>& f)
{
    return f ? f() : std::vector<std::string>();
}

/** \return an option of \p kind with its name, help and default */
OptionSpec
Declare(const std::string& name,
        const std::string& help,
        OptionKind kind,
        const std::string& fallback)
{
    OptionSpec o;
    o.name = name;
    o.help = help;
    o.kind = kind;
    o.fallback = fallback;
    return o;
}

} // namespace

OptionSpec
OptionSpec::Flag(const std::string& name, const std::string& help, const std::string& fallback)
{
    return Declare(name, help, OptionKind::FLAG, fallback);
}

OptionSpec
OptionSpec::Count(const std::string& name,
                  const std::string& help,
                  uint64_t minimum,
                  uint64_t maximum,
                  const std::string& fallback)
{
    OptionSpec o = Declare(name, help, OptionKind::COUNT, fallback);
    o.minimum = minimum;
    o.maximum = maximum;
    return o;
}

OptionSpec
OptionSpec::Real(const std::string& name,
                 const std::string& help,
                 double low,
                 double high,
                 const std::string& fallback)
{
    OptionSpec o = Declare(name, help, OptionKind::REAL, fallback);
    o.low = low;
    o.high = high;
    return o;
}

OptionSpec
OptionSpec::Size(const std::string& name,
                 const std::string& help,
                 uint64_t minimum,
                 uint64_t maximum,
                 const std::string& fallback)
{
    OptionSpec o = Count(name, help, minimum, maximum, fallback);
    o.kind = OptionKind::SIZE;
    return o;
}

OptionSpec
OptionSpec::Choice(const std::string& name,
                   const std::string& help,
                   std::function<std::vector<std::string>()> choices,
                   const std::string& fallback)
{
    OptionSpec o = Declare(name, help, OptionKind::CHOICE, fallback);
    o.choices = std::move(choices);
    return o;
}

OptionSpec
OptionSpec::Text(const std::string& name,
                 const std::string& help,
                 const std::string& fallback,
                 std::function<std::vector<std::string>()> names)
{
    OptionSpec o = Declare(name, help, OptionKind::TEXT, fallback);
    o.choices = std::move(names);
    return o;
}

OptionSpec
OptionSpec::Field(const std::string& name) const
{
    OptionSpec o = *this;
    o.field = name;
    return o;
}

OptionSpec
OptionSpec::Mode(const std::string& runMode) const
{
    OptionSpec o = *this;
    o.mode = runMode;
    return o;
}

OptionSpec
OptionSpec::Unit(const std::string& name) const
{
    OptionSpec o = *this;
    o.unit = name;
    return o;
}

std::string
OptionSpec::Allowed() const
{
    switch (kind)
    {
        case OptionKind::FLAG:
            return "true or false";
        case OptionKind::COUNT:
            return "a whole number from " + std::to_string(minimum) + " to "
                   + std::to_string(maximum);
        case OptionKind::REAL:
            return "a number" + (unit.empty() ? std::string() : " of " + unit) + " from "
                   + NumberText(low) + " to " + NumberText(high);
        case OptionKind::SIZE:
            return "a size from " + std::to_string(minimum) + " to " + std::to_string(maximum)
                   + " bytes, e.g. 1GiB, 256MiB, 4K, 1000000";
        case OptionKind::CHOICE:
            return JoinNames(NamesOf(choices));
        case OptionKind::TEXT:
            return "a non-empty value";
    }
    return "";
}

std::string
OptionSpec::HelpText(const std::string& text, bool list, bool modeNote, bool required) const
{
    const bool flag = kind == OptionKind::FLAG;
    std::string allowed = flag ? "true or false" : Allowed();
    if (!flag && kind == OptionKind::TEXT)
    {
        std::vector<std::string> names = NamesOf(choices);
        allowed = names.empty() ? std::string() : "known: " + JoinNames(names);
    }
    if (list && !flag)
    {
        allowed = "a comma-separated list; each " + allowed;
    }
    auto add = [&allowed](const std::string& note)
    {
        allowed += (allowed.empty() ? "" : "; ") + note;
    };
    if (modeNote && !mode.empty())
    {
        add("--mode=" + mode + " only");
    }
    if (required)
    {
        add("required");
    }
    return allowed.empty() ? text : text + " (" + allowed + ")";
}

std::string
OptionSpec::Check(const std::string& item) const
{
    switch (kind)
    {
        case OptionKind::FLAG:
        {
            bool b = false;
            return ParseBoolean(item, b)
                       ? ""
                       : "is not allowed; use true or false (--" + name + " alone means true)";
        }
        case OptionKind::COUNT:
        {
            uint64_t v = 0;
            return ParseWholeNumber(item, v) && v >= minimum && v <= maximum
                       ? ""
                       : "is not allowed; give " + Allowed();
        }
        case OptionKind::REAL:
        {
            double v = 0;
            if (ParseFiniteNumber(item, v) && v >= low && v <= high)
            {
                return "";
            }
            const bool withUnit =
                !unit.empty() && item.size() > unit.size()
                && item.compare(item.size() - unit.size(), unit.size(), unit) == 0
                && ParseFiniteNumber(item.substr(0, item.size() - unit.size()), v);
            return withUnit ? "is not allowed; give the number alone, in " + unit + ": " + Allowed()
                            : "is not allowed; give " + Allowed();
        }
        case OptionKind::SIZE:
        {
            uint64_t bytes = 0;
            const std::string why = ParseByteSize(item, bytes);
            if (!why.empty())
            {
                return why + "; give " + Allowed();
            }
            if (bytes < minimum || bytes > maximum)
            {
                return "(" + std::to_string(bytes) + " bytes) is "
                       + (bytes < minimum ? "too small" : "too large") + "; give " + Allowed();
            }
            return "";
        }
        case OptionKind::CHOICE:
        {
            for (const auto& c : NamesOf(choices))
            {
                if (c == item)
                {
                    return "";
                }
            }
            return "is not allowed; allowed values: " + Allowed();
        }
        case OptionKind::TEXT:
            return item.empty() ? "is empty; give " + Allowed() : "";
    }
    return "";
}

bool
ParseGpuName(const std::string& text, uint64_t& index)
{
    return text.compare(0, 3, "gpu") == 0 && ParseWholeNumber(text.substr(3), index);
}

bool
ParseWholeNumber(const std::string& text, uint64_t& value)
{
    if (text.empty() || text.size() > 20)
    {
        return false;
    }
    value = 0;
    for (char c : text)
    {
        if (c < '0' || c > '9')
        {
            return false;
        }
        const uint64_t digit = static_cast<uint64_t>(c - '0');
        if (value > (UINT64_MAX - digit) / 10)
        {
            return false;
        }
        value = value * 10 + digit;
    }
    return true;
}

bool
ParseFiniteNumber(const std::string& text, double& value)
{
    // Decimal only: strtod also reads C's hexadecimal floats ("0x1p-3"), which no whole-number
    // option takes either.
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
        || text.find_first_of("xX") != std::string::npos)
    {
        return false;
    }
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && std::isfinite(value);
}

bool
ParseBoolean(const std::string& text, bool& value)
{
    if (text == "true" || text == "1")
    {
        value = true;
        return true;
    }
    if (text == "false" || text == "0")
    {
        value = false;
        return true;
    }
    return false;
}

std::string
ParseByteSize(const std::string& text, uint64_t& bytes)
{
    std::size_t i = 0;
    while (i < text.size()
           && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'
               || ((text[i] == 'e' || text[i] == 'E') && i > 0)))
    {
        ++i;
    }
    const std::string number = text.substr(0, i);
    const std::string unit = text.substr(i);
    double value = 0;
    std::size_t used = 0;
    try
    {
        value = std::stod(number, &used);
    }
    catch (const std::out_of_range&)
    {
        return "is too large";
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (number.empty() || used != number.size() || !std::isfinite(value))
    {
        return "is not a size";
    }
    struct Unit
    {
        const char* name;
        double factor;
    };
    const Unit units[] = {{"", 1},
                          {"B", 1},
                          {"K", 1024.0},
                          {"KiB", 1024.0},
                          {"KB", 1e3},
                          {"M", 1048576.0},
                          {"MiB", 1048576.0},
                          {"MB", 1e6},
                          {"G", 1073741824.0},
                          {"GiB", 1073741824.0},
                          {"GB", 1e9},
                          {"T", 1099511627776.0},
                          {"TiB", 1099511627776.0},
                          {"TB", 1e12}};
    for (const auto& u : units)
    {
        if (unit == u.name)
        {
            uint64_t whole = 0;
            if (ParseWholeNumber(number, whole))
            {
                // Exactly, as a count: a double would round 2^60 + 1 down to 2^60, within range.
                const unsigned __int128 exact =
                    static_cast<unsigned __int128>(whole) * static_cast<uint64_t>(u.factor);
                if (exact > std::numeric_limits<uint64_t>::max())
                {
                    return "is too large";
                }
                bytes = static_cast<uint64_t>(exact);
                return "";
            }
            const double exact = value * u.factor;
            const double b = std::floor(exact + 0.5);
            // 2^64 is the first double beyond uint64_t.
            if (!(b < 18446744073709551616.0))
            {
                return "is too large";
            }
            // Rounded to whole bytes where that moves it by at most 0.1% (1.1GiB); 1.5 bytes
            // is a slip, not 2 bytes.
            if (std::fabs(b - exact) > 1e-3 * exact)
            {
                char text[64];
                std::snprintf(text, sizeof(text), "%.6g", exact);
                return std::string("is ") + text + " bytes, not a whole number of bytes";
            }
            bytes = static_cast<uint64_t>(b);
            return "";
        }
    }
    return "has an unknown unit (use B, K/KiB, KB, M/MiB, MB, G/GiB, GB, T/TiB, TB)";
}

} // namespace rapidllm
} // namespace ns3
