#pragma once
// Small text helpers shared by the name parsers of the library and the tools.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace reducelab::detail {

//! ASCII lower case, for case-insensitive names ("V3", "F16", "Sum").
std::string to_lower(std::string_view text);

//! Edit distance (Levenshtein plus adjacent transpositions), case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

//! The candidate one or two edits from `text` (the nearest; the first on a tie), or "".
std::string closest_match(std::string_view text, const std::vector<std::string_view>& candidates);

//! "unknown <what> 'text' (did you mean 'x'?); expected one of: a b c".
std::string unknown_name_message(std::string_view what, std::string_view text,
                                 const std::vector<std::string_view>& names);

}  // namespace reducelab::detail
