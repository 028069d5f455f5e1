// A light stand-in for the graintune-exporter sidecars of thousands of KWOK pods, so that the
// operator's scrapes are real HTTP: one process, one I/O thread, one listening socket per pod at
// the pod's own IP and exporter port (KWOK gives pods addresses inside 127.0.0.0/8, which are all
// this machine's loopback). GET /steps answers the exporter's document (operator/step_log.h):
// the pod's uid and the steps its trainer has logged so far.
//
// Steps follow an attempt clock: until StartAttempt() names a pod's (key, attempt) the trainer is
// still compiling (no steps); from then on step k (1, 2, ...) exists at start + k x
// step_interval, every pod of the attempt alike (multi-host MaxText steps in lockstep).
//
// A pod's exporter can be made bad: kBlackholed listens and never accepts (a scrape connects and
// then hears nothing until its own timeout), kSlow answers after slow_delay.
//
// Thread-safety: every public method may be called from any thread. Errors (an address that
// cannot be bound) are returned as values. Stop() (or the destructor) closes every socket.
#pragma once

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility> (C++20).
#include <utility>

#include <boost/asio.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace graintune::bench {

using SteadyTime = std::chrono::steady_clock::time_point;

enum class ExporterBehaviour { kServes, kBlackholed, kSlow };

struct StandInPod {
  std::string uid;
  std::string ip;
  int port = 9431;
  std::string key;  // namespace/tuning key
  int attempt = 0;
  ExporterBehaviour behaviour = ExporterBehaviour::kServes;
};

struct StandInOptions {
  std::chrono::milliseconds step_interval{2000};  // wall time between two logged steps
  double step_seconds = 4.3;                       // the step time each line reports
  std::chrono::milliseconds slow_delay{10000};     // kSlow's answer delay
  size_t max_steps = 20000;                        // the exporter's own bound on steps kept
};

class ExporterStandIn {
 public:
  explicit ExporterStandIn(StandInOptions options);
  ~ExporterStandIn();
  ExporterStandIn(const ExporterStandIn&) = delete;
  ExporterStandIn& operator=(const ExporterStandIn&) = delete;

  // Starts listening at the pod's ip:port; an error when the address cannot be bound.
  // Adding a uid already served does nothing.
  Status Add(const StandInPod& pod);
  void Remove(const std::string& uid);
  bool Serves(const std::string& uid) const;
  // Starts the trainers' step clock of (key, attempt) at `start`; later calls keep the first.
  void StartAttempt(const std::string& key, int attempt, SteadyTime start);
  std::optional<SteadyTime> AttemptStart(const std::string& key, int attempt) const;
  // While held, every trainer pauses (as for a checkpoint): no new steps appear.
  void HoldSteps(bool hold);
  // When each scrape of any pod of `key` arrived (answered or not), in arrival order.
  std::map<std::string, std::vector<SteadyTime>> ScrapesByKey() const;
  void Stop();

 private:
  struct Endpoint;
  void Accept(const std::shared_ptr<Endpoint>& endpoint);
  void Serve(const std::shared_ptr<Endpoint>& endpoint,
             std::shared_ptr<boost::asio::ip::tcp::socket> socket);
  std::string StepsDocumentOf(const StandInPod& pod, SteadyTime now) const;

  const StandInOptions options_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Endpoint>> endpoints_;  // by pod uid
  std::map<std::pair<std::string, int>, SteadyTime> attempt_start_;
  std::map<std::string, std::vector<SteadyTime>> scrapes_;  // by key
  std::optional<SteadyTime> held_at_;
  std::thread thread_;
};

}  // namespace graintune::bench
