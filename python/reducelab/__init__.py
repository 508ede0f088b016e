"""reducelab: GPU reductions on torch tensors, CuPy arrays and anything with
``__cuda_array_interface__`` or ``__dlpack__``, without copies.

    import torch, reducelab
    x = torch.randn(4096, 1024, device="cuda")
    reducelab.sum(x)                      # 0-d tensor, on torch's current stream, no sync
    reducelab.var(x, dim=1, keepdim=True) # torch's names, keywords and dtype rules
    reducelab.item("sum", x)              # a Python float: one launch, one stream sync

Functions: sum, mean, var, std, var_mean, std_mean, norm, logsumexp, count_nonzero, any, all,
amin, amax, min, max, argmin, argmax, aminmax, dot, segment_reduce, foreach, item. The rules they share
(dim, stream, out, result types, errors) are in the documentation of reducelab._ops.
reducelab.distributed reduces a tensor sharded over the ranks of a torch.distributed group.
"""

from ._reducelab import CudaError, __version__
from ._ops import (MinMax, ValuesIndices, all, amax, amin, aminmax, any, argmax, argmin,
                   count_nonzero, dot, foreach, item, logsumexp, max, mean, min, norm, segment_reduce, std,
                   std_mean, sum, var, var_mean)

__all__ = ["CudaError", "MinMax", "ValuesIndices", "all", "amax", "amin", "aminmax", "any",
           "argmax", "argmin", "count_nonzero", "dot", "foreach", "item", "logsumexp", "max", "mean", "min",
           "norm", "segment_reduce", "std", "std_mean", "sum", "var", "var_mean", "__version__"]
