/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "sweep-dir.h"

#include "ns3/job-echo.h"
#include "ns3/job-options.h"
#include "ns3/spec-error.h"
#include "report-output.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

namespace fs = std::filesystem;

/** \return the JSON object of \p path; throws SpecError naming it */
Json
ReadJsonFile(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        throw SpecError(path, "", "cannot read (not a sweep folder?)");
    }
    Json j;
    try
    {
        j = Json::parse(in);
    }
    catch (const std::exception& e)
    {
        throw SpecError(path, "", std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object())
    {
        throw SpecError(path, "", "not a sweep's inputs (a JSON object of them)");
    }
    return j;
}

/** Writes \p j to \p path; throws SpecError naming it. */
void
WriteJsonFile(const std::string& path, const Json& j)
{
    std::ofstream out(path, std::ios::trunc);
    out << DumpJson(j);
    out.close();
    if (!out)
    {
        throw OutputError(path);
    }
}

/** The suffix of a spec's digest among a sweep's inputs ("hardware_digest"). */
const std::string kDigest = "_digest";

/** \return whether input \p key is a spec's digest, and so the spec it is of */
bool
IsDigest(const std::string& key, std::string* spec = nullptr)
{
    const bool digest = key.size() > kDigest.size()
                        && key.compare(key.size() - kDigest.size(), kDigest.size(), kDigest) == 0;
    if (digest && spec)
    {
        *spec = key.substr(0, key.size() - kDigest.size());
    }
    return digest;
}

/**
 * \return the first field whose value differs between \p a and \p b ("" if none): the options
 * first, then the counts that follow from them (layouts, skipped), so that the error names the
 * option changed. A spec's digest is compared where both have it (older sweeps have none),
 * and then decides for the name it stands for ("model_digest" for "model").
 */
std::string
FirstDifference(const Json& a, const Json& b)
{
    std::set<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it)
    {
        keys.insert(it.key());
    }
    for (auto it = b.begin(); it != b.end(); ++it)
    {
        keys.insert(it.key());
    }
    auto both = [&](const std::string& k)
    {
        return a.contains(k) && b.contains(k);
    };
    auto differs = [&](const std::string& k)
    {
        if (both(k + kDigest))
        {
            return false; // the name of the same contents: the digest decides
        }
        if (IsDigest(k) && !both(k))
        {
            return false; // an older sweep, without digests
        }
        return !both(k) || a.at(k) != b.at(k);
    };
    const std::set<std::string> derived = {"layouts", "skipped"};
    for (const auto& k : keys)
    {
        if (!derived.count(k) && differs(k))
        {
            return k;
        }
    }
    for (const auto& k : derived)
    {
        if (keys.count(k) && differs(k))
        {
            return k;
        }
    }
    return "";
}

/** \return a value as it reads in a message */
std::string
Shown(const Json& j, const std::string& key)
{
    return j.contains(key) ? j.at(key).dump() : "(none)";
}

/**
 * \return how field \p field of \p a and \p b differs, for a message: "its tp is [1,2], this
 * one's [1]", or for a digest "its hardware "hw.yaml" had other contents (fnv1a64 ...) than this
 * one's "hw.yaml" has (fnv1a64 ...)"
 */
std::string
Difference(const Json& a, const Json& b, const std::string& field)
{
    std::string spec;
    if (IsDigest(field, &spec))
    {
        return "its " + spec + " " + Shown(a, spec) + " had other contents (" + Shown(a, field)
               + ") than this one's " + Shown(b, spec) + " has (" + Shown(b, field) + ")";
    }
    return "its " + field + " is " + Shown(a, field) + ", this one's " + Shown(b, field);
}

} // namespace

SweepDir::SweepDir(const std::string& dir,
                   const Json& inputs,
                   uint64_t shardIndex,
                   uint64_t shardCount)
    : m_dir(dir)
    , m_inputs(inputs)
{
    if (shardCount > 1)
    {
        m_inputs["shard"] = std::to_string(shardIndex) + "/" + std::to_string(shardCount);
    }
}

SweepDir::~SweepDir()
{
    if (m_csv)
    {
        std::fclose(m_csv);
    }
}

std::string
SweepDir::CsvPath() const
{
    return (fs::path(m_dir) / "results.csv").string();
}

Json
SweepDir::Digests(const std::vector<std::string>& sources)
{
    Json digests = Json::array();
    for (const std::string& source : sources)
    {
        digests.push_back(SpecSourceDigest(source));
    }
    return digests;
}

std::vector<std::string>
SweepDir::SpeltMachines(const Json& inputs)
{
    std::vector<std::string> machines;
    std::stringstream items(inputs.value("hardware", std::string()));
    for (std::string item; std::getline(items, item, ',');)
    {
        machines.push_back(item);
    }
    return machines;
}

const Json&
SweepDir::GetInputs() const
{
    return m_inputs;
}

std::vector<SweepRow>
SweepDir::Open(bool resume)
{
    CreateOutputDir(m_dir);
    const std::string csv = CsvPath();
    const std::string json = (fs::path(m_dir) / "sweep.json").string();
    std::vector<SweepRow> rows;
    const bool exists = fs::exists(csv);
    if (exists && !resume)
    {
        throw SpecError(kCommandLine,
                        "out",
                        "'" + m_dir
                            + "' already holds a sweep (results.csv); --resume continues it, or "
                              "choose another --out");
    }
    if (exists)
    {
        const Json before = ReadJsonFile(json);
        const std::string field = FirstDifference(before, m_inputs);
        if (!field.empty())
        {
            throw SpecError(kCommandLine,
                            "resume",
                            "'" + m_dir
                                + "' holds another sweep: " + Difference(before, m_inputs, field));
        }
        rows = ReadSweepCsv(csv);
        // The same files spelt otherwise (their digests agree): the folder keeps its spelling.
        for (const char* spelt : {"model", "hardware"})
        {
            if (before.contains(spelt))
            {
                m_inputs[spelt] = before.at(spelt);
            }
        }
    }
    else
    {
        WriteJsonFile(json, m_inputs);
    }
    // Rewritten with the complete rows only (a line cut short by a kill goes).
    WriteSweepCsv(csv, rows);
    m_csv = std::fopen(csv.c_str(), "a");
    if (!m_csv)
    {
        throw OutputError(csv); // the system's reason (a full disk, a read-only folder): exit 5
    }
    return rows;
}

void
SweepDir::Append(const std::string& line)
{
    const std::string text = line + "\n";
    if (std::fwrite(text.data(), 1, text.size(), m_csv) != text.size() || std::fflush(m_csv) != 0)
    {
        throw OutputError(CsvPath());
    }
}

void
SweepDir::Finish(const std::vector<SweepRow>& ranked)
{
    if (m_csv)
    {
        std::fclose(m_csv);
        m_csv = nullptr;
    }
    WriteSweepCsv(CsvPath(), ranked);
}

std::vector<SweepRow>
SweepDir::Merge(const std::vector<std::string>& dirs, const std::string& out)
{
    if (dirs.empty())
    {
        throw SpecError(kCommandLine, "dirs", "no sweep folders to merge");
    }
    // The merged folder is a new one: never one of the shards (whose files it would overwrite
    // while reading them), nor a folder that already holds a sweep.
    std::error_code ec;
    for (const auto& dir : dirs)
    {
        if (fs::exists(out, ec) && fs::equivalent(out, dir, ec))
        {
            throw SpecError(kCommandLine,
                            "out",
                            "'" + out + "' is one of the folders to merge ('" + dir
                                + "'); choose another --out");
        }
    }
    for (const char* file : {"results.csv", "sweep.json"})
    {
        if (fs::exists(fs::path(out) / file, ec))
        {
            throw SpecError(kCommandLine,
                            "out",
                            "'" + out + "' already holds a sweep (" + file
                                + "); choose another --out");
        }
    }
    Json common;
    std::string first;
    uint64_t count = 0;
    std::set<uint64_t> shards;
    std::map<uint64_t, SweepRow> rows;
    for (const auto& dir : dirs)
    {
        const std::string jsonPath = (fs::path(dir) / "sweep.json").string();
        Json inputs = ReadJsonFile(jsonPath);
        if (!inputs.contains("layouts") || !inputs.at("layouts").is_number_unsigned())
        {
            throw SpecError(jsonPath, "layouts", "missing: not a sweep's inputs");
        }
        uint64_t index = 1;
        uint64_t n = 1;
        if (inputs.contains("shard"))
        {
            const std::string s = inputs.at("shard").get<std::string>();
            index = std::stoull(s.substr(0, s.find('/')));
            n = std::stoull(s.substr(s.find('/') + 1));
            inputs.erase("shard");
        }
        if (first.empty())
        {
            common = inputs;
            first = dir;
            count = n;
        }
        const std::string field = FirstDifference(common, inputs);
        if (!field.empty())
        {
            throw SpecError(jsonPath,
                            field,
                            Shown(inputs, field) + " differs from " + first + "'s "
                                + Shown(common, field) + ": not shards of one sweep");
        }
        if (n != count)
        {
            throw SpecError(jsonPath,
                            "shard",
                            "a sweep in " + std::to_string(n) + " shards; " + first + " is in "
                                + std::to_string(count));
        }
        if (!shards.insert(index).second)
        {
            throw SpecError(jsonPath,
                            "shard",
                            "shard " + std::to_string(index) + "/" + std::to_string(n)
                                + " is given twice");
        }
        // This shard's spelling of the machines, named as the first shard names them.
        const std::vector<std::string> spelt = SpeltMachines(inputs);
        const std::vector<std::string> named = SpeltMachines(common);
        for (SweepRow r : ReadSweepCsv((fs::path(dir) / "results.csv").string()))
        {
            // A shard from before the columns: its sweep had the one type and the one machine
            // its inputs name.
            if (r.dtype.empty())
            {
                r.dtype = common.value("dtype", std::string());
            }
            if (r.hardware.empty())
            {
                r.hardware = common.value("hardware", std::string());
            }
            const auto at = std::find(spelt.begin(), spelt.end(), r.hardware);
            if (spelt.size() == named.size() && at != spelt.end())
            {
                r.hardware = named[at - spelt.begin()];
            }
            if (r.layout >= common.at("layouts").get<uint64_t>())
            {
                throw SpecError((fs::path(dir) / "results.csv").string(),
                                "layout",
                                std::to_string(r.layout) + " is not a layout of the sweep (it has "
                                    + std::to_string(common.at("layouts").get<uint64_t>()) + ")");
            }
            if (!rows.emplace(r.layout, r).second)
            {
                throw SpecError((fs::path(dir) / "results.csv").string(),
                                "layout",
                                std::to_string(r.layout) + " is in two of the folders");
            }
        }
    }
    std::string missing;
    for (uint64_t i = 1; i <= count; ++i)
    {
        missing += shards.count(i) ? "" : (missing.empty() ? "" : ", ") + std::to_string(i);
    }
    if (!missing.empty())
    {
        throw SpecError(kCommandLine,
                        "dirs",
                        "shard(s) " + missing + " of " + std::to_string(count) + " missing");
    }
    const uint64_t layouts = common.value("layouts", uint64_t(0));
    if (rows.size() != layouts)
    {
        uint64_t firstMissing = 0;
        while (rows.count(firstMissing))
        {
            ++firstMissing;
        }
        throw SpecError(kCommandLine,
                        "dirs",
                        "the folders hold " + std::to_string(rows.size()) + " of the sweep's "
                            + std::to_string(layouts) + " layouts (layout "
                            + std::to_string(firstMissing)
                            + " is missing: an unfinished shard? rerun it with --resume)");
    }
    std::vector<SweepRow> ranked;
    for (const auto& [i, r] : rows)
    {
        ranked.push_back(r);
    }
    RankSweepRows(ranked);
    CreateOutputDir(out);
    WriteJsonFile((fs::path(out) / "sweep.json").string(), common);
    WriteSweepCsv((fs::path(out) / "results.csv").string(), ranked);
    return ranked;
}

Json
SweepRowsJson(const std::vector<SweepRow>& rows)
{
    Json all = Json::array();
    for (const auto& r : rows)
    {
        Json j = Json::object();
        j["layout"] = r.layout;
        j["hardware"] = r.hardware;
        j["gpus"] = r.Gpus();
        j["tp"] = r.tp;
        j["pp"] = r.pp;
        j["dp"] = r.dp;
        j["cp"] = r.cp;
        j["ep"] = r.ep;
        j["vpp"] = r.vpp;
        j["pp_schedule"] = r.schedule;
        j["mbs"] = r.mbs;
        j["recompute"] = r.recompute;
        if (!r.dtype.empty())
        {
            j["dtype"] = r.dtype;
        }
        j["feasible"] = r.fits;
        j["reason"] = r.reason;
        j["peak_bytes"] = r.peakBytes;
        if (r.fits)
        {
            j["step_time_s"] = r.stepTimeS;
            j["tflops_per_gpu"] = r.tflopsPerGpu;
            j["mfu"] = r.mfu;
            j["compute_s"] = r.computeS;
            j["exposed_comm_s"] = r.exposedCommS;
            j["bubble_s"] = r.bubbleS;
            if (r.haveEnergy)
            {
                j["energy_j"] = r.energyJ;
                j["avg_power_w"] = r.avgPowerW;
            }
        }
        all.push_back(j);
    }
    return all;
}

} // namespace rapidllm
} // namespace ns3
