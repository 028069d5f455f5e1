#include "base/log.h"

#include <atomic>
#include <iostream>
#include <mutex>

namespace graintune {

namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::mutex g_mu;
std::string& Program() {
  static std::string program = "graintune";
  return program;
}

}  // namespace

std::string ToString(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "info";
}

Result<LogLevel> ParseLogLevel(std::string_view text) {
  for (LogLevel l : {LogLevel::kError, LogLevel::kWarning, LogLevel::kInfo, LogLevel::kDebug})
    if (text == ToString(l)) return l;
  return Status::Error("log level '" + std::string(text) + "': want error, warning, info or debug");
}

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) <= g_level.load(); }

void SetLogProgram(std::string_view program) {
  std::lock_guard<std::mutex> lock(g_mu);
  Program() = std::string(program);
}

void Log(LogLevel level, std::string_view message) {
  if (!LogEnabled(level)) return;
  std::lock_guard<std::mutex> lock(g_mu);
  std::cerr << ToString(level) << " " << Program() << ": " << message << "\n";
}

}  // namespace graintune
