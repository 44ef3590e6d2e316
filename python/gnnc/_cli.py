"""Strict argparse types for the command lines of gnnc's Python tools.

argparse's type=int takes ' 7', '+7', '1_000' and non-ASCII digits, and
nothing bounds the value; these take the whole argument, ASCII digits only,
in a range, and say which: "argument --seed: expected an integer in [0, 9]
but got '10'".
"""

from __future__ import annotations

import argparse
import math
import re

_INT = re.compile(r"-?[0-9]+")


def int_in(lo: int, hi: int):
    """An argparse type: the whole argument, ASCII digits, in [lo, hi] (int()
    also takes ' 7', '1_000', '+7' and non-ASCII digits)."""
    def parse(text: str) -> int:
        if not _INT.fullmatch(text) or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(
                f"expected an integer in [{lo}, {hi}] but got '{text}'")
        return int(text)
    return parse


def float_in(lo: float, hi: float):
    """An argparse type: a finite number in [lo, hi]."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        if not (math.isfinite(v) and lo <= v <= hi) or text.strip() != text:
            raise argparse.ArgumentTypeError(
                f"expected a number in [{lo:g}, {hi:g}] but got '{text}'")
        return v
    return parse
