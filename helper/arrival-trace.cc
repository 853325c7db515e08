/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "arrival-trace.h"

#include "ns3/csv-table.h"
#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"
#include "option-spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

namespace ns3 {
namespace rapidllm {

namespace {

/** A request's time as read: whole seconds and the fraction, kept apart for precision. */
struct Stamp
{
    int64_t seconds = 0;    //!< whole seconds from the file's origin
    double fraction = 0;    //!< and the fraction of one
    uint32_t prompt = 0;    //!< its prompt tokens (0: not given)
    uint32_t generated = 0; //!< its generated tokens (0: not given)
    uint32_t cached = 0;    //!< its prompt tokens in the cache already
};

/**
 * \return days from 1970-01-01 to the civil date (the proleptic Gregorian calendar), by
 * H. Hinnant's days_from_civil ("chrono-Compatible Low-Level Date Algorithms")
 */
int64_t
DaysFromCivil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2 ? 1 : 0;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yearOfEra = y - era * 400;
    const int64_t dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear;
    return era * 146097 + dayOfEra - 719468;
}

/** \return the days of month \p m of year \p y */
int64_t
DaysInMonth(int64_t y, int64_t m)
{
    static const int64_t days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/**
 * \brief Reads `YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]` (a 'T' may separate date and
 * time) into seconds since 1970-01-01 UTC and the fraction of one.
 * \return false where the text is not such a time
 */
bool
ParseDateTime(const std::string& text, Stamp& stamp)
{
    std::size_t i = 0;
    auto number = [&](std::size_t digits, int64_t& value)
    {
        value = 0;
        for (std::size_t k = 0; k < digits; ++k, ++i)
        {
            if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i])))
            {
                return false;
            }
            value = value * 10 + (text[i] - '0');
        }
        return true;
    };
    auto expect = [&](const std::string& allowed)
    {
        if (i < text.size() && allowed.find(text[i]) != std::string::npos)
        {
            ++i;
            return true;
        }
        return false;
    };
    int64_t year = 0;
    int64_t month = 0;
    int64_t day = 0;
    int64_t hour = 0;
    int64_t minute = 0;
    int64_t second = 0;
    if (!(number(4, year) && expect("-") && number(2, month) && expect("-") && number(2, day)
          && expect(" T") && number(2, hour) && expect(":") && number(2, minute) && expect(":")
          && number(2, second)))
    {
        return false;
    }
    if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23
        || minute > 59 || second > 60)
    {
        return false;
    }
    double fraction = 0;
    if (expect("."))
    {
        double scale = 0.1;
        const std::size_t start = i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
        {
            fraction += (text[i++] - '0') * scale;
            scale /= 10;
        }
        if (i == start)
        {
            return false;
        }
    }
    int64_t offset = 0;
    if (i < text.size() && (text[i] == '+' || text[i] == '-'))
    {
        const int64_t sign = text[i++] == '-' ? -1 : 1;
        int64_t h = 0;
        int64_t m = 0;
        if (!(number(2, h) && expect(":") && number(2, m)) || h > 23 || m > 59)
        {
            return false;
        }
        offset = sign * (h * 3600 + m * 60);
    }
    else
    {
        expect("Z");
    }
    if (i != text.size())
    {
        return false;
    }
    stamp.seconds =
        DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
    stamp.fraction = fraction;
    return true;
}

/** \return the tokens in \p column of row \p row: a whole number from 1; else SpecError */
uint32_t
Tokens(const CsvTable& table, std::size_t row, const std::string& column)
{
    const std::string& text = table.Text(row, column);
    uint64_t value = 0;
    if (!ParseWholeNumber(text, value) || value < 1 || value > (1ull << 31))
    {
        throw SpecError(table.Path(),
                        column,
                        "'" + text + "' is not a token count (allowed: a whole number from 1 to "
                            + std::to_string(1ull << 31) + ")",
                        table.Line(row));
    }
    return static_cast<uint32_t>(value);
}

/** \return the mean of one of the requests' token counts (0 without requests) */
double
Mean(const std::vector<QueueRequest>& requests, uint32_t QueueRequest::*tokens)
{
    if (requests.empty())
    {
        return 0;
    }
    double sum = 0;
    for (const auto& r : requests)
    {
        sum += r.*tokens;
    }
    return sum / double(requests.size());
}

} // namespace

bool
ArrivalTrace::HasLengths() const
{
    return !requests.empty() && requests.front().prompt > 0;
}

double
ArrivalTrace::RateRps() const
{
    if (requests.size() < 2 || !(requests.back().arrivalS > 0))
    {
        return 0;
    }
    return double(requests.size() - 1) / requests.back().arrivalS;
}

double
ArrivalTrace::MeanPrompt() const
{
    return Mean(requests, &QueueRequest::prompt);
}

double
ArrivalTrace::MeanGenerated() const
{
    return Mean(requests, &QueueRequest::generated);
}

double
ArrivalTrace::MeanCached() const
{
    return Mean(requests, &QueueRequest::cached);
}

ArrivalTrace
ReadArrivalTrace(const std::string& path)
{
    const CsvTable table = CsvTable::Load(path);
    ArrivalTrace trace;
    trace.path = path;
    const bool azure = table.Has("TIMESTAMP");
    if (!azure && !table.Has("arrival_s"))
    {
        throw SpecError(path,
                        "",
                        "names neither arrival_s nor TIMESTAMP in its header (allowed: "
                        "arrival_s[,prompt,generated] in seconds, or the Azure LLM inference "
                        "trace's TIMESTAMP,ContextTokens,GeneratedTokens)");
    }
    trace.format = azure ? "azure" : "arrival_s";
    const std::string promptColumn = azure ? "ContextTokens" : "prompt";
    const std::string generatedColumn = azure ? "GeneratedTokens" : "generated";
    // A column the reader does not take is refused, not ignored: a request's lengths under
    // another name ("Prompt", "output_tokens") would silently become the run's defaults.
    const std::vector<std::string> taken =
        azure ? std::vector<std::string>{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}
              : std::vector<std::string>{"arrival_s", "prompt", "generated", "cached"};
    for (const std::string& column : table.Columns())
    {
        if (std::find(taken.begin(), taken.end(), column) != taken.end())
        {
            continue;
        }
        std::string lower = column;
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        auto has = [&lower](const char* part)
        {
            return lower.find(part) != std::string::npos;
        };
        const std::string meant =
            has("prompt") || has("input") || has("context") ? promptColumn
            : has("output") || has("generat") || has("completion") || has("decode")
                ? generatedColumn
            : has("cache")              ? std::string("cached")
            : has("time") || has("arr") ? taken.front()
                                        : std::string();
        throw SpecError(path,
                        column,
                        "is not a column of an arrivals trace (allowed: " + JoinNames(taken)
                            + (azure ? "" : "; prompt and generated: each request's tokens") + ")"
                            + (meant.empty() ? "" : "; did you mean '" + meant + "'?"));
    }
    const bool lengths = table.Has(promptColumn) || table.Has(generatedColumn);
    trace.hasCached = !azure && table.Has("cached");
    if (trace.hasCached && !lengths)
    {
        throw SpecError(path,
                        "cached",
                        "cached prompt tokens need each request's prompt and generated tokens "
                        "(columns prompt and generated)");
    }
    std::vector<Stamp> stamps(table.Rows());
    for (std::size_t row = 0; row < table.Rows(); ++row)
    {
        Stamp& s = stamps[row];
        if (azure)
        {
            if (!ParseDateTime(table.Text(row, "TIMESTAMP"), s))
            {
                throw SpecError(path,
                                "TIMESTAMP",
                                "'" + table.Text(row, "TIMESTAMP")
                                    + "' is not a date and time (allowed: YYYY-MM-DD "
                                      "HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM])",
                                table.Line(row));
            }
        }
        else
        {
            const double t = table.Number(row, "arrival_s");
            if (!std::isfinite(t) || std::abs(t) > 1e15)
            {
                throw SpecError(path,
                                "arrival_s",
                                "is not a time in seconds (allowed: a number from -1e15 to "
                                "1e15)",
                                table.Line(row));
            }
            s.seconds = static_cast<int64_t>(std::floor(t));
            s.fraction = t - std::floor(t);
        }
        if (lengths)
        {
            // Both or neither: one without the other is a column named wrong.
            s.prompt = Tokens(table, row, promptColumn);
            s.generated = Tokens(table, row, generatedColumn);
        }
        if (trace.hasCached)
        {
            // At least the prompt's last token is computed (it yields the first token).
            const std::string& text = table.Text(row, "cached");
            uint64_t value = 0;
            if (!ParseWholeNumber(text, value) || value >= s.prompt)
            {
                throw SpecError(path,
                                "cached",
                                "'" + text
                                    + "' is not a count of cached prompt tokens (allowed: a "
                                      "whole number from 0 to the prompt's "
                                    + std::to_string(s.prompt) + " less 1)",
                                table.Line(row));
            }
            s.cached = static_cast<uint32_t>(value);
        }
    }
    if (stamps.size() < 2)
    {
        throw SpecError(path,
                        "",
                        "holds " + std::to_string(stamps.size())
                            + (stamps.size() == 1 ? " request" : " requests")
                            + " (allowed: two or more, whose times give the rate)");
    }
    std::stable_sort(stamps.begin(),
                     stamps.end(),
                     [](const Stamp& a, const Stamp& b)
                     {
                         return a.seconds != b.seconds ? a.seconds < b.seconds
                                                       : a.fraction < b.fraction;
                     });
    const Stamp& first = stamps.front();
    trace.requests.resize(stamps.size());
    for (std::size_t i = 0; i < stamps.size(); ++i)
    {
        QueueRequest& r = trace.requests[i];
        r.arrivalS =
            double(stamps[i].seconds - first.seconds) + (stamps[i].fraction - first.fraction);
        r.prompt = stamps[i].prompt;
        r.generated = stamps[i].generated;
        r.cached = stamps[i].cached;
    }
    if (!(trace.requests.back().arrivalS > 0))
    {
        throw SpecError(path,
                        azure ? "TIMESTAMP" : "arrival_s",
                        "every request arrives at the same time (allowed: times spanning more "
                        "than 0 s, which give the rate)");
    }
    return trace;
}

} // namespace rapidllm
} // namespace ns3
