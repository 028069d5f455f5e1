#include "bench/scale/exporter_standin.h"

#include <cstdio>

namespace graintune::bench {

namespace asio = boost::asio;
using asio::ip::tcp;

struct ExporterStandIn::Endpoint {
  Endpoint(asio::io_context& io, StandInPod p) : pod(std::move(p)), acceptor(io) {}
  StandInPod pod;
  tcp::acceptor acceptor;
};

ExporterStandIn::ExporterStandIn(StandInOptions options)
    : options_(options), work_(asio::make_work_guard(io_)) {
  thread_ = std::thread([this] { io_.run(); });
}

ExporterStandIn::~ExporterStandIn() { Stop(); }

void ExporterStandIn::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& entry : endpoints_)
      asio::post(io_, [e = entry.second] {
        boost::system::error_code ignored;
        e->acceptor.close(ignored);
      });
    endpoints_.clear();
  }
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

Status ExporterStandIn::Add(const StandInPod& pod) {
  std::lock_guard<std::mutex> lock(mu_);
  if (endpoints_.count(pod.uid)) return Status::Ok();
  auto e = std::make_shared<Endpoint>(io_, pod);
  boost::system::error_code ec;
  const tcp::endpoint at(asio::ip::make_address(pod.ip, ec), static_cast<unsigned short>(pod.port));
  if (ec) return Status::Error("pod " + pod.uid + ": bad address '" + pod.ip + "'");
  e->acceptor.open(at.protocol(), ec);
  if (!ec) e->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) e->acceptor.bind(at, ec);
  // A blackholed exporter's backlog fills with scrapes nobody reads.
  if (!ec) e->acceptor.listen(64, ec);
  if (ec) return Status::Error("listening at " + pod.ip + ":" + std::to_string(pod.port) + ": " + ec.message());
  endpoints_[pod.uid] = e;
  if (pod.behaviour != ExporterBehaviour::kBlackholed) asio::post(io_, [this, e] { Accept(e); });
  return Status::Ok();
}

void ExporterStandIn::Remove(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = endpoints_.find(uid);
  if (it == endpoints_.end()) return;
  std::shared_ptr<Endpoint> e = it->second;
  endpoints_.erase(it);
  asio::post(io_, [e] {
    boost::system::error_code ignored;
    e->acceptor.close(ignored);
  });
}

bool ExporterStandIn::Serves(const std::string& uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  return endpoints_.count(uid) > 0;
}

void ExporterStandIn::StartAttempt(const std::string& key, int attempt, SteadyTime start) {
  std::lock_guard<std::mutex> lock(mu_);
  attempt_start_.try_emplace({key, attempt}, start);
}

std::optional<SteadyTime> ExporterStandIn::AttemptStart(const std::string& key, int attempt) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = attempt_start_.find({key, attempt});
  if (it == attempt_start_.end()) return std::nullopt;
  return it->second;
}

void ExporterStandIn::HoldSteps(bool hold) {
  std::lock_guard<std::mutex> lock(mu_);
  held_at_ = hold ? std::optional<SteadyTime>(held_at_.value_or(std::chrono::steady_clock::now()))
                  : std::nullopt;
}

std::map<std::string, std::vector<SteadyTime>> ExporterStandIn::ScrapesByKey() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scrapes_;
}

void ExporterStandIn::Accept(const std::shared_ptr<Endpoint>& e) {
  auto socket = std::make_shared<tcp::socket>(io_);
  e->acceptor.async_accept(*socket, [this, e, socket](const boost::system::error_code& ec) {
    if (ec) return;  // closed
    Serve(e, socket);
    Accept(e);
  });
}

void ExporterStandIn::Serve(const std::shared_ptr<Endpoint>& e, std::shared_ptr<tcp::socket> socket) {
  auto request = std::make_shared<asio::streambuf>(16 * 1024);
  asio::async_read_until(*socket, *request, "\r\n\r\n",
      [this, e, socket, request](const boost::system::error_code& ec, size_t) {
        if (ec) return;
        const SteadyTime now = std::chrono::steady_clock::now();
        std::string body;
        {
          std::lock_guard<std::mutex> lock(mu_);
          scrapes_[e->pod.key].push_back(now);
          body = StepsDocumentOf(e->pod, now);
        }
        auto answer = std::make_shared<std::string>(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
        auto write = [socket, answer] {
          asio::async_write(*socket, asio::buffer(*answer),
                            [socket, answer](const boost::system::error_code&, size_t) {
                              boost::system::error_code ignored;
                              socket->shutdown(tcp::socket::shutdown_both, ignored);
                              socket->close(ignored);
                            });
        };
        if (e->pod.behaviour != ExporterBehaviour::kSlow) return write();
        auto timer = std::make_shared<asio::steady_timer>(io_, options_.slow_delay);
        timer->async_wait([timer, write](const boost::system::error_code&) { write(); });
      });
}

// Called with mu_ held.
std::string ExporterStandIn::StepsDocumentOf(const StandInPod& pod, SteadyTime arrived) const {
  const SteadyTime now = held_at_ ? std::min(*held_at_, arrived) : arrived;
  long steps = 0;
  auto it = attempt_start_.find({pod.key, pod.attempt});
  if (it != attempt_start_.end() && now >= it->second)
    steps = static_cast<long>((now - it->second) / options_.step_interval);
  const long first = std::max(1L, steps - static_cast<long>(options_.max_steps) + 1);
  std::string doc = "{\"pod_uid\":\"" + pod.uid + "\",\"run\":1,\"steps\":[";
  doc.reserve(doc.size() + static_cast<size_t>(steps - first + 1) * 96 + 64);
  char line[160];
  for (long k = first; k <= steps; ++k) {
    // Step 1 compiles; the rest jitter by up to +-2% around the steady step time.
    const double t = k == 1 ? 30.0 : options_.step_seconds * (1.0 + 0.004 * static_cast<double>((k * 7919) % 11 - 5));
    std::snprintf(line, sizeof(line),
                  "%s{\"step\":%ld,\"step_time_seconds\":%.4f,\"tflops_per_device\":%.2f,"
                  "\"tokens_per_device_per_second\":%.1f}",
                  k == first ? "" : ",", k, t, 195.1 * options_.step_seconds / t, 16384.0 / t);
    doc += line;
  }
  doc += "],\"lines\":" + std::to_string(steps) + ",\"malformed_lines\":0}";
  return doc;
}

}  // namespace graintune::bench
