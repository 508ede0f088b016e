#pragma once
//! \file error.hpp
//! The one exception type reducelab throws. The library never exits the process and never leaves
//! the CUDA context unusable on a validation error: every check runs before any launch.

#include <stdexcept>
#include <string>

namespace reducelab {

//! What went wrong, coarsely, so callers can branch without parsing messages.
enum class ErrorCode {
  invalid_argument,  //!< null pointer with n > 0, host pointer, misaligned pointer, empty input
  no_device,         //!< no CUDA device or no driver
  cuda_error,        //!< a CUDA runtime call failed; the message names the call and its text
};

//! Thrown by every reducelab entry point. `what()` is one line a person can act on.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error("reducelab: " + message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace reducelab
