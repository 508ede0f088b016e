// Parsing op and dtype names from the tables in op.hpp and dtype.hpp, with a suggestion when a
// name is one or two edits away from a valid one.

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "common/text.hpp"
#include "reducelab/dtype.hpp"
#include "reducelab/error.hpp"
#include "reducelab/op.hpp"

namespace reducelab {
namespace detail {

std::string to_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Optimal string alignment distance (Levenshtein plus adjacent transpositions, the commonest
// typo: "bnech", "bf61"), case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t columns = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * columns);
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * columns + j]; };
  auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  for (std::size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) != lower(b[j - 1]);
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
    }
  }
  return at(a.size(), b.size());
}

std::string closest_match(std::string_view text, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  std::size_t best_distance = 3;  // suggest only for one or two edits
  for (std::string_view candidate : candidates) {
    const std::size_t d = edit_distance(text, candidate);
    if (d < best_distance && d < std::max<std::size_t>(candidate.size(), 2)) {
      best = candidate;
      best_distance = d;
    }
  }
  return std::string(best);
}

std::string unknown_name_message(std::string_view what, std::string_view text,
                                 const std::vector<std::string_view>& names) {
  std::string message = "unknown " + std::string(what) + " '" + std::string(text) + "'";
  const std::string guess = closest_match(text, names);
  if (!guess.empty()) message += " (did you mean '" + guess + "'?)";
  message += "; expected one of:";
  for (std::string_view name : names) message += " " + std::string(name);
  return message;
}

}  // namespace detail

Op parse_op(std::string_view text) {
  const std::string name = detail::to_lower(text);
  std::vector<std::string_view> names;
  for (const OpInfo& op : kOps) {
    if (name == op.name) return op.op;
    names.push_back(op.name);
  }
  throw Error(ErrorCode::invalid_argument, detail::unknown_name_message("op", text, names));
}

DType parse_dtype(std::string_view text) {
  const std::string name = detail::to_lower(text);
  std::vector<std::string_view> names;
  for (const DTypeInfo& dtype : kDTypes) {
    if (name == dtype.name) return dtype.dtype;
    for (std::string_view alias : dtype.aliases)
      if (!alias.empty() && name == alias) return dtype.dtype;
    names.push_back(dtype.name);
  }
  throw Error(ErrorCode::invalid_argument, detail::unknown_name_message("dtype", text, names));
}

}  // namespace reducelab
