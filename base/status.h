// Status and Result<T, E>: errors as values.
//
// A Status is either OK or carries a message a person can act on ("memory quantity '2Gx':
// unknown suffix 'Gx'"). Result<T> holds a T or a non-OK Status; Result<T, E> a T or a
// typed error E that can say itself as a Status (E::ToStatus()). Nothing in graintune throws
// across a module boundary: library exceptions are caught where they arise and turned into one
// of these. Both are cheap value types, safe to copy and to use from any thread.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <type_traits>
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

template <typename T, typename E = Status>
class Result;

// What an error of type E says to a person: a Status's message, or E::ToStatus()'s.
template <typename E>
Status ToStatus(const E& error) {
  if constexpr (std::is_same_v<E, Status>) return error;
  else return error.ToStatus();
}

// A T or an error E (by default a Status; kube::ApiResult<T> is Result<T, kube::ApiError>).
template <typename T, typename E>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : state_(std::move(error)) {   // NOLINT
    if constexpr (std::is_same_v<E, Status>)
      assert(!std::get<Status>(state_).ok() && "Result built from an OK status has no value");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().
  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  // The error as a Status; OK when the result holds a value.
  Status status() const { return ok() ? Status::Ok() : ToStatus(std::get<E>(state_)); }
  // For a Status error: its message ("" when ok()). For any other E: the error itself
  // (precondition: !ok()).
  decltype(auto) error() const {
    if constexpr (std::is_same_v<E, Status>) {
      static const std::string kEmpty;
      return ok() ? kEmpty : std::get<Status>(state_).message();
    } else {
      return static_cast<const E&>(std::get<E>(state_));
    }
  }

 private:
  std::variant<T, E> state_;
};

}  // namespace graintune
