#pragma once
// Small text helpers shared by the name parsers.

#include <string>
#include <string_view>

namespace reducelab::detail {

//! ASCII lower case, for case-insensitive names ("V3", "F16", "Sum").
std::string to_lower(std::string_view text);

}  // namespace reducelab::detail
