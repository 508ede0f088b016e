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

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (std::tolower(static_cast<unsigned char>(a[i - 1])) !=
                                                 std::tolower(static_cast<unsigned char>(b[j - 1])));
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
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
