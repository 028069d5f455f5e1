// What the exporter learned of a trainer's processes from /proc (exporter/process_stats.h), as
// it reports them in the /steps document (step_log.h) and the operator reads them. Plain values.
#pragma once

namespace graintune::telemetry {

struct ProcessFigures {
  int workers = 0;
  double worker_busy_fraction = -1;  // cpu time of the workers / (wall time x workers)
  double worker_memory_bytes = 0;    // peak RSS of the largest worker
  double trainer_memory_bytes = 0;   // peak RSS of the trainer
  double trainer_cpu_cores = -1;     // cores the trainer used between two samples
};

}  // namespace graintune::telemetry
