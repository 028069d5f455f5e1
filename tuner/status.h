// Status and Result<T>: errors as values.
//
// A Status is either OK or carries a message a person can act on ("memory quantity '2Gx':
// unknown suffix 'Gx'"). Result<T> holds a T or a non-OK Status. Nothing in graintune throws
// across a module boundary: library exceptions are caught where they arise and turned into one
// of these. Both are cheap value types, safe to copy and to use from any thread.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace graintune {

class Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  // The message of a non-OK status; empty for OK.
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status error) : state_(std::move(error)) {  // NOLINT
    assert(!std::get<Status>(state_).ok() && "Result built from an OK status has no value");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().
  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

  // The error; OK when the result holds a value.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(state_); }
  const std::string& error() const {
    static const std::string kEmpty;
    return ok() ? kEmpty : std::get<Status>(state_).message();
  }

 private:
  std::variant<T, Status> state_;
};

}  // namespace graintune
