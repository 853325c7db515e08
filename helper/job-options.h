/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_JOB_OPTIONS_H
#define RAPIDLLM_JOB_OPTIONS_H

#include "fault-options.h"
#include "ns3/fault-schedule.h"
#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/ptr.h"
#include "ns3/run-spec.h"
#include "ns3/spec-override.h"
#include "option-spec.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ns3 {

class CommandLine;

namespace rapidllm {

class RapidLlmHelper;

/** The source name of option values (a script's or the command's command line), in SpecError. */
extern const char* const kCommandLine;

/**
 * \ingroup rapid-llm
 * \return the note for a gpu.sm_count given without the GPU's rates, which are its totals
 */
std::string SmCountNote();
/**
 * \return SmCountNote() where the overrides \p texts (PATH=VALUE) set gpu.sm_count without the
 * tensor rates, else empty
 */
std::string SmCountNote(const std::vector<std::string>& texts);

/**
 * \ingroup rapid-llm
 * \brief A job resolved from its options: the model (shape overrides applied), the machine and
 * the layout and run settings, validated against each other.
 */
struct ResolvedJob
{
    ModelSpec model;       //!< the model
    HardwareSpec hardware; //!< the machine (--set applied; --fault's faults from the start in
                           //!< hardware.network.faults)
    RunSpec run;           //!< the layout and run settings
    std::vector<ScheduledFault> timedFaults; //!< --fault's faults that start mid-run (@TIME)
    std::vector<FaultOption> faults;         //!< --fault as given (every item, for the echo)
    std::map<uint32_t, double> slowGpus;     //!< --slow-gpus: GPU -> compute speed left
    std::map<uint32_t, GpuSpec> gpuVariants; //!< --gpu-set: GPU -> its own spec
    std::map<uint32_t, std::vector<std::string>> gpuSets; //!< --gpu-set as given, per GPU
    std::vector<std::string> overrides; //!< --set (and the job file's set:), as applied
    std::string modelSource;            //!< --model: the preset name or file
    std::string hardwareSource;         //!< --hardware: the preset name or file
    std::string jobFile;                //!< --run: the job file ("" = none)
    std::string backend;                //!< the job file's backend ("" = not given)
    std::string routing;                //!< the job file's routing ("" = not given)

    /**
     * \brief What a command notes on stderr before it predicts: settings it runs as given but
     * that a user may not expect (past the model's context, KV heads replicated by training's
     * tensor parallelism, GEMMs on CUDA cores, GPUs that do not fill whole NVLink domains or
     * tensor-parallel groups that cross their edge).
     * \return one line per note, none when there is nothing to say
     */
    std::vector<std::string> Notes() const;
    /**
     * \brief What a command that replays the job (not memory) notes besides: hardware sections
     * given but not priced (an nccl section where the dimension runs another algorithm; no host
     * section, so dispatch and the engine cost nothing).
     * \return one line per note
     */
    std::vector<std::string> ReplayNotes() const;

    /**
     * \return the machine its traces' kernels are costed for, as the traces record it: the
     * --hardware source (preset or file), and the gpu. overrides that changed the kernels
     * ("a100-sxm-80gb with gpu.hbm_bandwidth_GBps=0.5x"); a replay names the source to run them
     * on their own machine's network
     */
    std::string CostedFor() const;
};

/**
 * \ingroup rapid-llm
 * \brief The options that describe a job (model, hardware, parallel layout, batch, run mode
 * and settings, model shape overrides), declared once here for scenario scripts and for the
 * `rapid-llm` command (whose run command takes exactly these, and memory and trace all but
 * --fault, which only commands that run the network take; utils/ adds its per-command
 * variants).
 *
 * A scenario script adds them all to its CommandLine in one call and turns them into specs:
 * \code
 *   JobOptions job;
 *   job.SetDefault("model", "gpt-1.7b");      // the script's own defaults, shown by --help
 *   CommandLine cmd(__FILE__);
 *   job.AddTo(cmd);                           // --model --tp --pp --dp --mbs --gbs --seq ...
 *   cmd.Parse(argc, argv);                    // each value checked as it is parsed
 *   Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
 *   job.Apply(helper);                        // or ResolvedJob spec = job.ToSpecs();
 * \endcode
 * Values are checked against their declaration (kind, range, choices) when given, and against
 * each other by ToSpecs(); every error is a SpecError naming the option (source kCommandLine).
 * An option of the other run mode (e.g. --gbs with --mode=inference) is an error.
 */
class JobOptions
{
  public:
    /** The largest number of GPUs (endpoints) a network can have. */
    static constexpr uint64_t kMaxGpus = 1ull << 24;
    /** The largest count a run setting holds (counts are 32-bit). */
    static constexpr uint64_t kMaxCount = 4294967295ull;

    /** \return the job options, in the order help lists them */
    static const std::vector<OptionSpec>& GetDeclarations();
    /** \return the job option called \p name, or nullptr */
    static const OptionSpec* Find(const std::string& name);

    JobOptions();

    /**
     * \brief Changes an option's default (what applies when it is not given, and what --help
     * shows); "" leaves it without one (as dp: derived from the others).
     * \param name the option \param value the new default (checked)
     */
    void SetDefault(const std::string& name, const std::string& value);
    /**
     * \brief Sets an option as if given on the command line (a later value replaces it).
     * \param name the option \param value its value; throws SpecError if not allowed
     */
    void Set(const std::string& name, const std::string& value);
    /** \return whether \p name was given (Set or parsed) */
    bool Has(const std::string& name) const;

    /** \return the value given, else the default ("" when neither) */
    std::string Get(const std::string& name) const;

    /**
     * \brief Adds every job option to \p cmd, with its help, allowed values and default;
     * parsing checks each value (throwing SpecError) and records it here. This object must
     * outlive cmd.Parse().
     * \param cmd the script's command line
     */
    void AddTo(CommandLine& cmd);

    /**
     * \brief Loads the specs and validates the layout against the model.
     * \return the job; throws SpecError naming the option (or the field it sets)
     */
    ResolvedJob ToSpecs() const;
    /**
     * \brief Sets the helper's model, hardware and run from ToSpecs().
     * \param helper the helper
     */
    void Apply(Ptr<RapidLlmHelper> helper) const;

    /**
     * \brief Words an error for a person, naming the option as given on the command line.
     * \param e an error (e.g. from CommandLine::Parse, ToSpecs or a run)
     * \return "option --tp: 'abc' is not allowed; ..." for a SpecError about a job option (or
     *         the spec field it sets) from the command line, else e.what()
     */
    static std::string DescribeError(const std::exception& e);

  private:
    /**
     * Reads the job file of --run into m_fromFile: the options it gives, below those given
     * (which override it) and above the defaults.
     */
    void ReadJobFile();
    /** ToSpecs() once the job file is read (its errors name options, not the job file). */
    ResolvedJob Resolve() const;
    /** \return the declaration of \p name; throws SpecError listing the job options */
    const OptionSpec& Option(const std::string& name) const;
    /** \return a COUNT's value; throws "is required" if it has none */
    uint64_t Count(const std::string& name) const;
    /** \return a FLAG's value */
    bool Flag(const std::string& name) const;
    /**
     * \return the model \p source with \p overrides (--set's) and the shape options (--layers,
     *         --hidden, --heads, --kv-heads, --ffn, --vocab) applied as its fields' overrides
     */
    ModelSpec LoadModel(const std::string& source, std::vector<SpecOverride> overrides) const;

    std::map<std::string, std::string> m_given;    //!< option -> value given
    std::map<std::string, std::string> m_parsed;   //!< option -> value parsed (AddTo)
    std::map<std::string, std::string> m_fromFile; //!< option -> value of the --run job file
    std::map<std::string, std::string> m_fileKeys; //!< option -> its key path in the job file
    std::map<std::string, std::string> m_defaults; //!< option -> default set by the script
    std::vector<std::string> m_fileOverrides;      //!< the job file's set:, in order
    std::string m_fileBackend;                     //!< the job file's backend
    std::string m_fileRouting;                     //!< the job file's routing
    uint64_t m_fileBucketBytes = 0;                //!< the job file's bucket_mib (0 = none)
    bool m_fileRead = false;                       //!< whether ReadJobFile ran
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_JOB_OPTIONS_H
