#include "common/pointer_check.hpp"
#include "ladder/ladder.hpp"
#include "reducelab/error.hpp"

namespace reducelab::ladder {

void run(const Rung& rung, const Problem& p, cudaStream_t stream) {
  if (!supports(p.op))
    throw Error(ErrorCode::invalid_argument, "the ladder implements " + supported_ops_text() +
                                                 ", not " + std::string(to_string(p.op)));
  if (p.n == 0)
    throw Error(ErrorCode::invalid_argument, std::string("ladder rung ") + rung.id +
                                                 " needs n >= 1 (the ladder has no identity "
                                                 "result for empty input)");
  detail::require_device_pointer(p.d_x, p.n, alignof(float), "x");
  if (p.op == Op::dot) detail::require_device_pointer(p.d_y, p.n, alignof(float), "y");
  detail::require_device_pointer(p.d_out, 1, alignof(float), "out");
  detail::require_device_pointer(p.d_workspace, rung.workspace_elems(p.n), alignof(float),
                                 "workspace");
  rung.launch(p, stream);
}

}  // namespace reducelab::ladder
