// Real MaxText as a workload on the local control plane, shared by the maxtext e2e test and
// `graintune-demo --trainer maxtext`: the pinned trainer environment (the GRAINTUNE_MAXTEXT_*
// variables scripts/lib/maxtext_trainer.sh prints), a KWOK TPU host shaped like this machine, an
// xpk-style JobSet (one host, or `pods` pods of one attempt) that trains the tiny model on a data-bound pipeline with
// grain_worker_count=-1, a namespace policy, and how the stand-in kubelet (pod_runner.h) runs
// the command graintune rewrote, and MaxText's metrics file read back. Plain values, text and
// files; nothing here talks to a cluster.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/client.h"
#include "tests/controlplane/control_plane.h"
#include "tests/controlplane/pod_runner.h"

namespace graintune::testing {

// Where the pinned environment is. Empty when a variable is missing (run through
// scripts/test.sh or scripts/demo.sh, which build and export them).
struct MaxTextEnv {
  std::string python;     // the venv's python: its folder goes first on PATH
  std::string records;    // 512 KiB tf.train.Example text records (tokenizing binds)
  std::string tokenizer;  // a SentencePiece model trained on this machine's text
  std::string tiny_args;  // the tiny model's MaxText overrides, space-separated
};
std::optional<MaxTextEnv> MaxTextFromEnvironment();

// The label (and value) that puts the tiny JobSet on MaxTextHost's node only.
inline constexpr char kMaxTextHostLabel[] = "graintune.dev/e2e-host";
inline constexpr char kMaxTextHostValue[] = "maxtext";

// A TPU host (a 2x2 v6e topology, 4 chips) with this machine's allocatable figures: `cpus`
// cores and `memory_bytes`, so graintune's budget is what MaxText will really have here.
Result<kube::Json> MaxTextHost(const std::string& name, double cpus, double memory_bytes);

// The tiny JobSet's steps: 20 after the operator's 2 warm-up steps (its --warmup-steps
// default), so a trial has 10 steady samples where the operator needs 8.
inline constexpr int kTinySteps = 22;
// MaxText overrides that make the tiny JobSet a run that checkpoints (Grain's iterator too) every
// 5 steps, each written before the next step: it keeps one value for its life.
inline constexpr char kTinyCheckpointing[] =
    "enable_checkpointing=true checkpoint_period=5 async_checkpointing=false";
inline constexpr int kOperatorWarmupSteps = 2;

struct TinyJobSetOptions {
  std::string ns;
  std::string name;
  std::string out_dir;  // MaxText's base_output_directory
  int steps = kTinySteps;
  // Where the pod runs and from what. The defaults suit the stand-in kubelet, which runs the
  // command on this machine with the environment on PATH (MaxTextTrainer); OnRealNode sets
  // them for a real kubelet.
  std::string image = "maxtext-runner:latest";
  std::string node_selector;            // a YAML flow map; empty: MaxTextHost's label
  std::vector<std::string> host_paths;  // this machine's folders, mounted read-only at the same path
  std::vector<std::string> writable_host_paths;  // and read-write (a checkpoint folder)
  std::string path;                     // the container's PATH; empty: not set
  bool run_as_root = false;
  std::string memory_limit;             // empty: none
  // The attempt's pods (its Job's parallelism and completions), each asking for `chips`: two
  // pods of two chips stand for the two hosts of one slice on a single node.
  int pods = 1;
  int chips = 4;
  // Each pod reads and writes the writable host paths under its own folder (subPathExpr on its
  // name), as each host has its own disk: MaxText processes that are not one JAX job must not
  // checkpoint into one folder.
  bool writable_per_pod = false;
  // The pods run one JAX job across them, as xpk starts a CPU workload: MaxText's
  // skip_jax_distributed_system=false, and xpk's variables (JOB_INDEX and JOB_COMPLETION_INDEX
  // from the JobSet's and the Job's annotations, PROCESSES_IN_JOB, JAX_PROCESS_COUNT, and
  // JAX_COORDINATOR_ADDRESS naming host 0 as xpk does: CoordinatorName). MaxText's
  // initialize_jax_for_cpu joins that name on port 1234. Not with writable_per_pod: one JAX job
  // checkpoints into one folder.
  bool jax_distributed = false;
  // More MaxText overrides after grain_worker_count=-1 (a later word wins in MaxText), e.g.
  // "enable_checkpointing=true checkpoint_period=5" for a run that checkpoints.
  std::string extra_args;
};
// The name xpk gives host 0 of a JobSet's first replicated job ("$(JOBSET_NAME)-$(REPLICATED_JOB_NAME)-0-0.$(JOBSET_NAME)",
// a pod's hostname under the JobSet's headless service), which the tiny JobSet's hosts resolve.
std::string CoordinatorName(const TinyJobSetOptions& o);
// xpk's `bash -c` wrapper around `python3 -m maxtext.trainers.pre_train.train` with the tiny
// model's overrides and grain_worker_count=-1; single-threaded XLA on the CPU, no network.
// The container is named "maxtext"; the pod fails only when told to (backoffLimit 0, JobSet
// restarts up to 3 times).
std::string TinyMaxTextJobSet(const MaxTextEnv& env, const TinyJobSetOptions& options);

// `options` for a real node: the container runs `image` (any image with bash and glibc) on a
// single-host v6e 2x2 TPU node, with the pinned environment's folders (the venv, the Python it
// was made from, as its pyvenv.cfg names it, and the records and tokenizer) mounted read-only
// from this machine at the same paths, the venv first on PATH, as root (the folders live under
// /root) and within `memory_limit`. An error when pyvenv.cfg names no Python.
Result<TinyJobSetOptions> OnRealNode(const MaxTextEnv& env, TinyJobSetOptions options,
                                     const std::string& image, const std::string& memory_limit);

// A GrainTunePolicy for namespace `ns` only (priority 10): nothing kept back on the host (it is
// this machine), at most `max_workers` workers and at least `min_workers`.
std::string NamespacePolicy(const std::string& ns, int max_workers, int min_workers = 1,
                            bool start_check = true);

// The pods of one attempt of JobSet `ns`/`jobset` (label jobset.sigs.k8s.io/restart-attempt);
// empty when there are none or the list failed.
std::vector<kube::Json> AttemptPods(ControlPlane& cp, const std::string& ns, const std::string& jobset,
                                    int attempt);
// The pod's graintune.dev/worker-count annotation; -1 when absent or not a number.
int WorkerCountOf(const kube::Json& pod);
// The last word of container `name`'s command (the script of a `bash -c` wrapper); "" when
// there is no such container or command.
std::string ScriptOf(const kube::Json& pod, const std::string& name);

// What only MaxText's own trainer process has on its command line (not the shell around it).
inline constexpr char kMaxTextTrainerPattern[] = "maxtext.trainers.pre_train.train";

// How the stand-in kubelet runs the JobSet's container: the venv first on PATH, and an exporter
// trainer pattern only MaxText's own command line holds.
OwnTrainer MaxTextTrainer(const MaxTextEnv& env);

// Whether `command` passes MaxText grain_worker_count=N (an override word ends at a space, a
// quote, a newline, a semicolon or the subshell's parenthesis).
bool RunsWithWorkers(const std::string& command, int workers);

// MaxText's metrics file as graintune's parser reads it: every line counted, the step times in
// step order, and the lines it could not read with the parser's reason.
struct MetricsFileRead {
  int lines = 0;
  std::vector<double> step_seconds;
  std::vector<std::string> malformed;  // "reason: line"
  long first_step = -1, last_step = -1;  // of the training lines; -1 when there are none
};
// An empty read when the file does not exist (yet).
MetricsFileRead ReadMaxTextMetricsFile(const std::string& path);

}  // namespace graintune::testing
