#!/usr/bin/env python3
"""How many vector loads a kernel's main loop has in flight when it first waits on one.

A memory-bound loop hides latency with the loads it issues before it needs their data. This
reads the SASS of each matching kernel (cuobjdump -sass; it needs nvdisasm, from the toolkit or
the nvidia-cuda-nvdisasm wheel, on PATH or in NVDISASM_PATH), finds the innermost loop that
holds at least --min-loads vector loads (LDG ... .64 or .128), runs its body twice and prints,
for the second pass (the steady state), the number of loads still outstanding at each
instruction that reads a pending load's registers: its first use, where the warp waits.

  default f32 sum (reduce_kernel):            [4, 3, 2, 1]  four loads, then the adds
  gpu_to_gpu f32 sum at 075fbde (session 37): [2, 1, 1, 2, 2, 1, 1, 2, 2, 4, 3, 2, 4, 3, 2, 1]

A static count: it says what the schedule allows, not how long each wait lasts.

Usage: scripts/sass_loads.py OBJECT_OR_BINARY KERNEL_REGEX [--min-loads N]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_BRANCH = re.compile(r"\bBRA\s+(0x[0-9a-f]+)")
_VECTOR_LOAD = re.compile(r"^LDG\S*\.(64|128)\b")
_REGISTER = re.compile(r"\bR(\d+)\b")


def parse_sass(text):
    """[(address, instruction)] of one function's SASS listing, predicates kept."""
    return [(int(m.group(1), 16), m.group(2)) for m in _INSTRUCTION.finditer(text)]


def _opcode(instruction):
    parts = instruction.split()
    if parts and parts[0].startswith("@"):
        parts = parts[1:]
    return (parts[0], " ".join(parts[1:])) if parts else ("", "")


def innermost_loop(instructions, min_loads=4):
    """The shortest backward-branch body with at least min_loads vector loads, or None."""
    best = None
    for address, instruction in instructions:
        m = _BRANCH.search(instruction)
        if not m:
            continue
        target = int(m.group(1), 16)
        if target >= address:
            continue
        body = [i for a, i in instructions if target <= a <= address]
        loads = sum(bool(_VECTOR_LOAD.match(_opcode(i)[0])) for i in body)
        if loads >= min_loads and (best is None or len(body) < len(best)):
            best = body
    return best


def loads_at_waits(body):
    """Outstanding vector loads at each first use of a pending load, over the second of two
    passes through body (a load's destination is its first register and the 1, 2 or 4 after)."""
    pending = {}  # first register -> registers written
    counts = []
    for instruction in body + body:
        opcode, operands = _opcode(instruction)
        registers = [int(r) for r in _REGISTER.findall(operands)]
        # The first operand is the destination when it is a register (R8, R8.reuse); a
        # predicate (ISETP P1, ...) or an address (STG [R2.64], ...) there makes all sources.
        writes = re.match(r"R\d+\b", operands) is not None
        sources = registers[1:] if writes else registers
        hit = [b for b, width in pending.items() if any(b <= s < b + width for s in sources)]
        if hit:
            counts.append(len(pending))
        for b in hit:
            del pending[b]
        m = _VECTOR_LOAD.match(opcode)
        if m and registers:
            pending[registers[0]] = 4 if m.group(1) == "128" else 2
    return counts[len(counts) // 2:] if counts else []


def _tool(name):
    path = shutil.which(name) or shutil.which(name, path="/usr/local/cuda/bin")
    if path is None:
        sys.exit(f"sass_loads: {name} not found on PATH or in /usr/local/cuda/bin")
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", help="an object file, library or executable with sm_xx SASS")
    parser.add_argument("kernel", help="regular expression matched against mangled names")
    parser.add_argument("--min-loads", type=int, default=4)
    args = parser.parse_args(argv)
    cuobjdump = os.environ.get("CUOBJDUMP") or _tool("cuobjdump")
    usage = subprocess.run([cuobjdump, "-res-usage", args.binary], capture_output=True,
                           text=True, check=True).stdout
    names = [n for n in re.findall(r"Function (\S+?):", usage) if re.search(args.kernel, n)]
    if not names:
        sys.exit(f"sass_loads: no function matching {args.kernel!r} in {args.binary}")
    for name in dict.fromkeys(names):
        sass = subprocess.run([cuobjdump, "-sass", "-fun", name, args.binary],
                              capture_output=True, text=True)
        if sass.returncode != 0:
            sys.exit(f"sass_loads: cuobjdump -sass failed (nvdisasm on PATH or NVDISASM_PATH?): "
                     f"{sass.stderr.strip()}")
        loop = innermost_loop(parse_sass(sass.stdout), args.min_loads)
        registers = re.search(re.escape(name) + r".*?REG:(\d+)", usage, re.S)
        shown = subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip()
        if loop is None:
            print(f"{shown}\n  no loop with {args.min_loads}+ vector loads")
            continue
        print(f"{shown}\n  registers {registers.group(1) if registers else '?'}, loop of "
              f"{len(loop)} instructions, loads in flight at its waits: {loads_at_waits(loop)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
