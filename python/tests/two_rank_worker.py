"""One rank of test_gpu.py's two-rank reducelab.distributed test (not collected by pytest).

    RANK=r WORLD_SIZE=2 STORE=path python two_rank_worker.py

Every rank builds the same whole array on its GPU (a fixed seed), takes its shard of it for
each split, calls reducelab.distributed.reduce through a torch.distributed NCCL group, and
checks the result against the single-GPU call on the whole array: the same bits for the
order-free ops (min, max, argmin, argmax with the global index, aminmax, count_nonzero, any),
close for the floating ones (the ranks add in another order than one GPU). It prints one line
per case with the result's bits, so the caller can check that both ranks got the same bits, and
exits non-zero on the first mismatch."""

import os
import sys

import torch
import torch.distributed as dist

import reducelab.distributed as rd
from reducelab import _ops

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "i64": torch.int64}
TOL = {"f32": 1e-5, "f64": 1e-12, "f16": 2e-3}
ORDER_FREE = ["max", "min", "argmin", "argmax", "aminmax", "count_nonzero", "any"]
FLOATING = ["sum", "mean", "var", "std_mean", "norm", "logsumexp", "dot"]


def whole(n, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    if dtype == "i64":
        x = torch.randint(-50, 50, (n,), generator=g, device="cuda", dtype=torch.int64)
        x[(x % 7) == 0] = 0
        return x
    return torch.rand((n,), generator=g, device="cuda").to(DTYPES[dtype])


def bits(t):
    if t.is_floating_point():
        t = t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    return [int(v) for v in t.reshape(-1).tolist()]


def as_tuple(r):
    return tuple(r) if isinstance(r, tuple) else (r,)


def main():
    rank, ranks = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    store = dist.FileStore(os.environ["STORE"], ranks)
    dist.init_process_group("nccl", store=store, rank=rank, world_size=ranks)
    # Shard lengths per rank, rank 0 first: an empty shard, a 1-element shard, uneven ones.
    splits = [(0, 1000), (1, 20_001), (70_001, 33_333), (4096, 4096)]
    failures = 0
    for dtype in DTYPES:
        ops = ORDER_FREE + ([] if dtype == "i64" else FLOATING)
        for lengths in splits:
            n = sum(lengths)
            x = whole(n, dtype, seed=n)
            y = whole(n, dtype, seed=n + 1)
            if dtype != "i64" and lengths[0] > 0:
                # the extreme on the shard boundary, and a tie across the ranks: the largest
                # value at rank 0's last element and at rank 1's first; the lowest index wins.
                x[lengths[0] - 1] = 2.0
                x[lengths[0]] = 2.0
            lo = sum(lengths[:rank])
            shard, yshard = x[lo:lo + lengths[rank]], y[lo:lo + lengths[rank]]
            for op in ops:
                got = as_tuple(rd.reduce(op, shard, yshard if op == "dot" else None))
                want = as_tuple(_ops._reduce(_ops._OP[op], x, y=y if op == "dot" else None))
                ok = len(got) == len(want)
                for g, w in zip(got, want):
                    if op in ORDER_FREE or not g.is_floating_point():
                        ok = ok and torch.equal(g, w)
                    else:
                        ok = ok and torch.allclose(g.double(), w.double(), rtol=TOL[dtype],
                                                   atol=0.0)
                print(f"{dtype} {lengths} {op} {[bits(g) for g in got]}", flush=True)
                if not ok:
                    failures += 1
                    print(f"MISMATCH rank {rank} {dtype} {lengths} {op}: {got} vs {want}",
                          file=sys.stderr, flush=True)
        # NaN on one rank only: every rank's max, sum and argmax see it.
        if dtype != "i64":
            x = whole(2000, dtype, seed=7)
            x[1500] = float("nan")
            shard = x[rank * 1000:(rank + 1) * 1000]
            for op in ("max", "sum", "argmax"):
                got = as_tuple(rd.reduce(op, shard))
                want = as_tuple(_ops._reduce(_ops._OP[op], x))
                ok = all(torch.equal(g.isnan(), w.isnan()) and
                         (not g.is_floating_point() or bool(g.isnan().all()) or
                          torch.equal(g, w)) for g, w in zip(got, want))
                if op == "argmax":
                    ok = ok and int(got[1]) == 1500
                print(f"{dtype} nan {op} {[bits(g) for g in got]}", flush=True)
                if not ok:
                    failures += 1
                    print(f"MISMATCH rank {rank} {dtype} nan {op}: {got} vs {want}",
                          file=sys.stderr, flush=True)
    dist.destroy_process_group()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
