// What the real-MaxText tests (the stand-in kubelet's e2e and the real node's) see of one
// attempt, from the machine and the files rather than from graintune's figures, and the checks
// they share: MaxText ran graintune's value and started that many Grain worker processes, every
// line it wrote parses, and the trial graintune stored has the verdict the file's steps imply.
// gtest assertions: include from tests only.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kube/client.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tuner/trial.h"

namespace graintune::testing {

struct MaxTextAttemptSeen {
  std::string pod, command;
  int workers = 0;                  // the pod's graintune.dev/worker-count
  int most_grain_processes = -1;    // counted from /proc while MaxText trained
  int exporter_workers = -1;        // the exporter's count in /steps
  std::vector<double> step_seconds; // from MaxText's metrics file, step order
  int lines = 0, malformed = 0;
  long exporter_malformed = -1;
};

// MaxText ran the pod's value: in the command, as Grain worker processes counted from /proc
// and by the exporter, and every line of its metrics file (and of the exporter's read) parsed.
inline void ExpectRanItsValue(const MaxTextAttemptSeen& seen) {
  EXPECT_TRUE(RunsWithWorkers(seen.command, seen.workers)) << seen.command;
  EXPECT_EQ(seen.command.find("grain_worker_count=-1"), std::string::npos) << seen.command;
  EXPECT_EQ(seen.most_grain_processes, seen.workers) << "Grain worker processes MaxText started";
  EXPECT_EQ(seen.exporter_workers, seen.workers) << "the exporter's count from /proc";
  EXPECT_EQ(seen.malformed, 0);
  EXPECT_EQ(seen.exporter_malformed, 0);
  EXPECT_EQ(static_cast<int>(seen.step_seconds.size()), seen.lines) << "a line per step, no eval lines";
}

// The stored verdict against what the file's steps and the exporter's busy fraction imply. A
// trial keeps a data-bound verdict once one scrape showed it (an earlier, shorter view), so a
// data-bound trial needs no more; a fed one can be neither bound by the whole file's steps nor
// have had its workers busy all the time.
inline void ExpectTheVerdictTheStepsImply(const kube::Json& stored, const Trial& from_file) {
  const bool bound = stored.value("dataBound", false);
  const double busy = stored.value("workerBusyFraction", -1.0);
  std::printf("trial of attempt %d: dataBound=%d, from the file: spread %.3f, draining %d, "
              "%d samples, mean %.3f s; worker busy fraction %.2f\n",
              stored.value("attempt", -1), bound, from_file.step_spread, from_file.draining,
              from_file.samples, from_file.step_seconds_mean, busy);
  if (IsDataBound(from_file)) {
    EXPECT_TRUE(bound) << stored.dump();
  }
  if (!bound) {
    EXPECT_LT(busy, kSaturatedBusyFraction) << stored.dump();
  }
}

}  // namespace graintune::testing
