"""Reductions over a tensor sharded across processes, through torch.distributed (issue 15).

    import torch.distributed as dist
    import reducelab.distributed as rd
    dist.init_process_group("nccl")          # one process per GPU, as usual
    shard = ...                              # this rank's piece: a CUDA tensor, any length
    rd.reduce("sum", shard)                  # on every rank: the sum of all the ranks' shards
    rd.reduce("argmax", shard)               # (value, index in the concatenation of the shards)
    rd.reduce("var", shard, correction=0)    # merged moments, not a mean of variances

Each rank reduces its shard on its GPU into a 64-byte partial state (reducelab/shard.hpp), one
``all_gather_into_tensor`` of the states goes through the group, and one kernel folds them in
rank order. The result is what the whole-array function gives on the concatenation of the shards
in rank order (rank 0's elements first), with the same result types, NaN and empty-input rules;
argmin/argmax give the index in that concatenation (ties, across ranks too, go to the lowest),
and every rank gets the same bits. With one rank the result has the bits of the single-GPU call.
The C++ API does the same over an ``ncclComm_t`` (reducelab/multigpu.hpp).

Rules:
- ``x`` (and ``y`` for dot) is a contiguous CUDA tensor on this rank's device; shards may differ
  in length, 0 included. Every rank of the group must make the same call (op, dtype, correction,
  ord), as every collective.
- The work runs on torch's current stream of the shard's device; the collective follows torch's
  own stream rules (the NCCL backend orders it after the state and the fold after it). Other
  backends (gloo) gather the 64-byte states through host memory.
- Arguments are checked before the collective (dtype, op, contiguity, device): a rank whose call
  raises there does not join it, so the other ranks wait in the collective as for any collective
  a rank skips. Make the same call on every rank.
- ``determinism="gpu_to_gpu"`` is taken by the order-free ops (min, max, argmin, argmax, aminmax,
  count_nonzero, any, all, the integer types); the fixed-order floating ops raise ValueError in
  it (the sharded fixed order is not built yet).
"""

from . import _ops
from . import _reducelab

_STATE_BYTES = _reducelab.shard_state_bytes


def _torch():
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("reducelab.distributed needs torch with torch.distributed") from e
    if not dist.is_available():
        raise ImportError("reducelab.distributed needs torch.distributed, which this torch lacks")
    return torch, dist


def _collective(group):
    """A launch for _ops._reduce: this rank's state, the all-gather, the rank-order fold."""
    torch, dist = _torch()
    if not dist.is_initialized():
        raise ValueError("reducelab.distributed: torch.distributed is not initialised "
                         "(dist.init_process_group first)")

    def launch(opcode, correction, ord, code, ptr, yptr, shape, strides, unit, mask, result,
               stream, device, determinism):
        if device < 0:
            raise TypeError("reducelab.distributed: the shard must be a CUDA tensor")
        _ops._require_contiguous(shape, strides, unit,
                                 "reducelab.distributed reads the shard flat: it must be "
                                 "contiguous")
        n = _ops._count(shape)
        ranks = dist.get_world_size(group)
        dev = torch.device("cuda", device)
        state = torch.empty(_STATE_BYTES, dtype=torch.uint8, device=dev)
        states = torch.empty(ranks * _STATE_BYTES, dtype=torch.uint8, device=dev)
        _reducelab.shard_state(opcode, correction, ord, code, ptr, yptr, n, state.data_ptr(),
                               stream, device, determinism)
        if dist.get_backend(group) == "nccl":
            dist.all_gather_into_tensor(states, state, group=group)
        else:
            parts = [torch.empty(_STATE_BYTES, dtype=torch.uint8) for _ in range(ranks)]
            dist.all_gather(parts, state.cpu(), group=group)
            states.copy_(torch.cat(parts))
        _reducelab.fold_states(opcode, correction, ord, code, states.data_ptr(), ranks, result,
                               stream, device, determinism)

    return launch


def reduce(reduce, x, y=None, *, group=None, correction=1.0, ord=2.0,
           determinism="run_to_run"):
    """The reduction ``reduce`` (a name of reducelab.item's: "sum", "mean", "var", "std",
    "var_mean", "std_mean", "norm", "logsumexp", "min", "max", "argmin", "argmax", "aminmax",
    "count_nonzero", "any", "all", "dot") of the array sharded over the ranks of ``group``
    (None: the default group), this rank's shard being ``x``; every rank gets the result, as the
    whole-array function returns it (a 0-d tensor; a pair for var_mean, std_mean and aminmax;
    (value, global index) for argmin and argmax)."""
    op = _ops._OP.get(reduce)
    if op is None:
        raise ValueError(f"reducelab: unknown reduce {reduce!r}; one of {', '.join(_ops._OP)}")
    det = _ops._determinism(determinism)
    if (op.name == "dot") != (y is not None):
        raise ValueError("reducelab.distributed: dot takes y, the other ops do not")
    return _ops._reduce(op, x, None, False, None, float(correction), float(ord), None, None, y,
                        det, _collective(group))
