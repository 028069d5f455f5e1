// maxtext_standin: a stand-in for MaxText's trainer whose data pipeline is real processes, for
// the local demo's practice lap (KWOK runs no containers, and MaxText needs its environment).
// graintune's exporter measures it as it measures MaxText: the trainer's metrics file, and its
// forked workers' cpu time and resident memory in /proc.
//
//   maxtext_standin [--compute-ms C] [--records-per-step K] [--record-cpu-us R]
//                   [--worker-mib M] [--compile-ms P] -- MAXTEXT_ARGS...
//
// Contract:
//   - MAXTEXT_ARGS are read as MaxText's overrides (maxtext_words.h: the last `key=value` wins,
//     else `M_KEY`): `grain_worker_count` (0..256, required), `steps` (default 10),
//     `metrics_file` (none: no metrics), `per_device_batch_size` x `max_target_length` x 4
//     chips for the tokens a step reports. Every other word is ignored, so `-m MaxText.train
//     base.yml run_name=...` is accepted and keeps the exporter's default trainer pattern.
//   - The pipeline: grain_worker_count workers, forked as Grain forks them (same command line,
//     children of the trainer), each touching M MiB (default 16) once, then producing records
//     into one small pipe (a few steps' worth), each record costing R us of its own cpu time
//     (default 8000). With 0 workers the trainer produces its records itself, as Grain's
//     in-process loading does.
//   - The trainer: P ms (default 1000) of compile, then per step it takes K records (default
//     32) and computes for C ms (default 500, a sleep). A step is its wait for data plus its
//     compute, so a pipeline that delivers less than K records per C ms is data-bound. Each
//     step's line is written when the next one ends (as trainer_emulator does), in MaxText's
//     format (metrics_line.h); after the last step it stops its workers and exits 0.
//   - A usage error exits 2; a pipeline whose workers all died exits 1. Workers die with the
//     trainer (PR_SET_PDEATHSIG).
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "server/flags.h"
#include "tests/emulator/maxtext_words.h"
#include "tests/emulator/metrics_line.h"

namespace {

constexpr char kProgram[] = "maxtext_standin";
constexpr size_t kRecordBytes = 64;  // a 4 KiB pipe holds 64 records
constexpr size_t kMiB = 1024 * 1024;

struct Pipeline {
  int workers = 0;
  int records_per_step = 32;
  int record_cpu_us = 8000;
  int worker_mib = 16;
};

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Spends `us` microseconds of this thread's cpu time: a record's cost, however busy the machine.
void BurnCpu(int us) {
  const double until = CpuSeconds() + us * 1e-6;
  volatile unsigned sink = 0;
  while (CpuSeconds() < until)
    for (int i = 0; i < 1000; ++i) sink = sink + static_cast<unsigned>(i);
}

[[noreturn]] void RunWorker(int write_fd, const Pipeline& pipeline) {
  std::vector<char> held(static_cast<size_t>(pipeline.worker_mib) * kMiB);
  for (size_t at = 0; at < held.size(); at += 4096) held[at] = 1;  // resident, as a worker's buffers are
  char record[kRecordBytes] = {};
  for (;;) {
    BurnCpu(pipeline.record_cpu_us);
    if (write(write_fd, record, sizeof(record)) != static_cast<ssize_t>(sizeof(record))) _exit(0);
  }
}

// Takes `records` records from the pipe; false when every worker is gone.
bool TakeRecords(int read_fd, int records) {
  std::vector<char> buffer(static_cast<size_t>(records) * kRecordBytes);
  size_t got = 0;
  while (got < buffer.size()) {
    const ssize_t n = read(read_fd, buffer.data() + got, buffer.size() - got);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

int IntOrExit(const std::optional<std::string>& text, int low, int high, const std::string& what) {
  char* end = nullptr;
  const long value = text ? std::strtol(text->c_str(), &end, 10) : 0;
  if (!text || text->empty() || *end != '\0' || value < low || value > high)
    graintune::server::ExitWithUsageError(kProgram, what + " must be " + std::to_string(low) + ".." +
                                                        std::to_string(high) + ", got '" + text.value_or("") + "'");
  return static_cast<int>(value);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace graintune;
  std::vector<std::string> own, words;
  bool after_separator = false;
  for (int i = 1; i < argc; ++i) {
    if (!after_separator && std::strcmp(argv[i], "--") == 0) after_separator = true;
    else (after_separator ? words : own).push_back(argv[i]);
  }
  const server::Flags flags = server::ExitOnUsageError(
      kProgram, server::Flags::Parse(own, {"compute-ms", "records-per-step", "record-cpu-us", "worker-mib", "compile-ms"}));
  auto flag = [&](const char* name, int low, int high, int fallback) {
    return server::ExitOnUsageError(kProgram, flags.IntegerIn(name, low, high)).value_or(fallback);
  };
  Pipeline pipeline;
  pipeline.workers = IntOrExit(testing::MaxTextValue(words, "grain_worker_count"), 0, 256, "grain_worker_count");
  pipeline.records_per_step = flag("records-per-step", 1, 1 << 16, pipeline.records_per_step);
  pipeline.record_cpu_us = flag("record-cpu-us", 0, 10'000'000, pipeline.record_cpu_us);
  pipeline.worker_mib = flag("worker-mib", 0, 4096, pipeline.worker_mib);
  const int compute_ms = flag("compute-ms", 0, 600'000, 500);
  const int compile_ms = flag("compile-ms", 0, 600'000, 1000);
  const std::optional<std::string> steps_text = testing::MaxTextValue(words, "steps");
  const int steps = steps_text ? IntOrExit(steps_text, 1, 1'000'000, "steps") : 10;
  const std::string metrics = testing::MaxTextValue(words, "metrics_file").value_or("");
  const double tokens_per_step =
      std::atof(testing::MaxTextValue(words, "per_device_batch_size").value_or("0").c_str()) *
      std::atof(testing::MaxTextValue(words, "max_target_length").value_or("0").c_str()) * 4;

  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("maxtext_standin: pipe");
    return 1;
  }
  (void)fcntl(fds[1], F_SETPIPE_SZ, 4096);
  std::printf("%s: pid %d, %d workers, %d steps of %d records (%d us of cpu each) and %d ms of compute\n",
              kProgram, getpid(), pipeline.workers, steps, pipeline.records_per_step, pipeline.record_cpu_us,
              compute_ms);
  std::fflush(stdout);
  const pid_t trainer = getpid();
  std::vector<pid_t> workers;
  for (int i = 0; i < pipeline.workers; ++i) {
    const pid_t pid = fork();
    if (pid < 0) break;
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != trainer) _exit(1);  // the trainer died before prctl took effect
      close(fds[0]);
      RunWorker(fds[1], pipeline);
    }
    workers.push_back(pid);
  }
  close(fds[1]);
  if (!metrics.empty()) std::ofstream(metrics, std::ios::trunc).flush();
  std::this_thread::sleep_for(std::chrono::milliseconds(compile_ms));
  int status = 0;
  double previous = -1;
  for (int step = 0; step < steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    if (pipeline.workers == 0) {
      for (int r = 0; r < pipeline.records_per_step; ++r) BurnCpu(pipeline.record_cpu_us);
    } else if (!TakeRecords(fds[0], pipeline.records_per_step)) {
      std::fprintf(stderr, "%s: every worker is gone\n", kProgram);
      status = 1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(compute_ms));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (previous >= 0 && !metrics.empty())
      testing::AppendMetricsLine(metrics, step, previous, compute_ms / 1000.0, tokens_per_step);
    previous = seconds;
  }
  close(fds[0]);
  for (pid_t pid : workers) kill(pid, SIGTERM);
  for (pid_t pid : workers) waitpid(pid, nullptr, 0);
  return status;
}
