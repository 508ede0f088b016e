#!/usr/bin/env python3
"""scripts/sass_loads.py on SASS text written here: the loop it finds and the loads it counts
as in flight at each wait (no GPU, no CUDA toolkit)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import sass_loads  # noqa: E402


def listing(lines, start=0x100):
    """SASS as cuobjdump -sass prints it: /*address*/ instruction ; /* encoding */"""
    return "\n".join(f"        /*{start + 16 * i:04x}*/                   {text} ;"
                     f"                /* 0x000000000000 */" for i, text in enumerate(lines))


# Four loads, then their adds (the default kernel's shape), in a loop that branches back.
BATCHED = [
    "LDG.E.NA.128.CONSTANT R4, desc[UR4][R2.64]",
    "LDG.E.NA.128.CONSTANT R8, desc[UR4][R2.64+0x200]",
    "LDG.E.NA.128.CONSTANT R12, desc[UR4][R2.64+0x400]",
    "LDG.E.NA.128.CONSTANT R16, desc[UR4][R2.64+0x600]",
    "IADD3 R2, P0, R2, 0x800, RZ",
    "FADD R20, R4, R20",
    "FADD R21, R9, R21",
    "FADD R22, R14, R22",
    "FADD R23, R19, R23",
    "ISETP.GE.U32.AND P0, PT, R2, R24, PT",
    "@!P0 BRA 0x100",
]

# Two loads, a use, then the other two: the first wait has only two in flight.
INTERLEAVED = [
    "LDG.E.NA.128.CONSTANT R4, desc[UR4][R2.64]",
    "LDG.E.NA.128.CONSTANT R8, desc[UR4][R2.64+0x200]",
    "FADD R20, R4, R20",
    "LDG.E.NA.128.CONSTANT R12, desc[UR4][R2.64+0x400]",
    "LDG.E.NA.128.CONSTANT R16, desc[UR4][R2.64+0x600]",
    "FADD R21, R9, R21",
    "FADD R22, R14, R22",
    "FADD R23, R19, R23",
    "@!P0 BRA 0x100",
]


class SassLoadsTest(unittest.TestCase):
    def test_parse_keeps_addresses_and_predicates(self):
        parsed = sass_loads.parse_sass(listing(BATCHED))
        self.assertEqual(len(parsed), len(BATCHED))
        self.assertEqual(parsed[0], (0x100, BATCHED[0]))
        self.assertEqual(parsed[-1][1], "@!P0 BRA 0x100")

    def test_batched_loop_waits_with_all_four_in_flight(self):
        loop = sass_loads.innermost_loop(sass_loads.parse_sass(listing(BATCHED)))
        self.assertEqual(len(loop), len(BATCHED))
        self.assertEqual(sass_loads.loads_at_waits(loop), [4, 3, 2, 1])

    def test_interleaved_loop_waits_with_two(self):
        loop = sass_loads.innermost_loop(sass_loads.parse_sass(listing(INTERLEAVED)))
        self.assertEqual(sass_loads.loads_at_waits(loop), [2, 3, 2, 1])

    def test_innermost_loop_is_the_shortest_with_enough_loads(self):
        # An outer loop around the batched one, and a short loop without loads after it.
        outer = ["MOV R30, RZ"] + BATCHED + ["IADD3 R30, R30, 0x1, RZ", "@!P1 BRA 0x100",
                                            "FADD R31, R31, R31", "@!P2 BRA 0x0"]
        parsed = sass_loads.parse_sass(listing(outer, start=0x100))
        # the inner branch targets 0x100 + 16 (its first load), the outer one 0x100
        inner = [(a, i.replace("BRA 0x100", "BRA 0x110") if a == 0x100 + 16 * 11 else i)
                 for a, i in parsed]
        loop = sass_loads.innermost_loop(inner)
        self.assertEqual(loop[0], BATCHED[0])
        self.assertEqual(len(loop), len(BATCHED))
        self.assertIsNone(sass_loads.innermost_loop(inner, min_loads=5))

    def test_predicates_and_store_addresses_are_sources(self):
        body = [
            "LDG.E.NA.128.CONSTANT R4, desc[UR4][R2.64]",
            "LDG.E.NA.128.CONSTANT R8, desc[UR4][R2.64+0x200]",
            "ISETP.GT.AND P1, PT, R5, RZ, PT",   # reads R5: the first load
            "STG.E [R10.64], R20",               # reads R10: the second load's registers
            "@!P0 BRA 0x100",
        ]
        loop = sass_loads.innermost_loop(sass_loads.parse_sass(listing(body)), min_loads=2)
        self.assertEqual(sass_loads.loads_at_waits(loop), [2, 1])


if __name__ == "__main__":
    unittest.main()
