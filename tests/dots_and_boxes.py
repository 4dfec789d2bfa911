"""Dots and Boxes (examples/games/dots_and_boxes), a game where a player may move again, for
the tests: `register()` builds and registers its boards from outside the package as a user
does, and an exact solver of the 2x2 board (`Solver2x2`: every line set, every score),
checked against OpenSpiel's own alpha-beta search in the tests."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np

GAME = Path(__file__).resolve().parents[1] / "examples" / "games" / "dots_and_boxes"
SMALL = "DotsAndBoxes2x2-v0"
ROWS = COLUMNS = 2
HORIZONTAL = (ROWS + 1) * COLUMNS
LINES = HORIZONTAL + ROWS * (COLUMNS + 1)  # 12
BOXES = ROWS * COLUMNS


def register() -> str:
    """Build (once, cached) and register the boards; returns the 2x2 board's id."""
    sys.path.insert(0, str(GAME))
    try:
        import dots_and_boxes_env  # noqa: F401  (registers DotsAndBoxes2x2-v0, 3x3)
    finally:
        sys.path.remove(str(GAME))
    return SMALL


def box_lines(box: int) -> tuple[int, int, int, int]:
    """The four lines (OpenSpiel's action numbers) around `box` (row-major)."""
    r, c = divmod(box, COLUMNS)
    return (r * COLUMNS + c, (r + 1) * COLUMNS + c, HORIZONTAL + r * (COLUMNS + 1) + c,
            HORIZONTAL + r * (COLUMNS + 1) + c + 1)


BOX_MASKS = [sum(1 << line for line in box_lines(b)) for b in range(BOXES)]


def completed(lines: int, line: int) -> int:
    """How many boxes drawing `line` onto the line set `lines` (a bit mask) completes."""
    after = lines | (1 << line)
    return sum(1 for mask in BOX_MASKS
               if after & mask == mask and lines & mask != mask)


class Solver2x2:
    """The exact game value of every 2x2 position for its player to move: `value(lines,
    lead)` in {-1, 0, 1} (win, draw, loss at the end with best play by both), `lines` the
    drawn lines as a bit mask, `lead` the mover's boxes minus the opponent's so far. A line
    that completes a box keeps the move (the same player's value), any other passes it (the
    opponent's, negated)."""

    @functools.cache  # noqa: B019 (one solver per test session)
    def value(self, lines: int, lead: int) -> int:
        if lines == (1 << LINES) - 1:
            return int(np.sign(lead))
        return max(self.after(lines, lead, line) for line in range(LINES)
                   if not lines >> line & 1)

    def after(self, lines: int, lead: int, line: int) -> int:
        """The mover's value once it draws `line`."""
        taken = completed(lines, line)
        if taken:
            return self.value(lines | 1 << line, lead + taken)
        return -self.value(lines | 1 << line, -lead)

    def best_moves(self, lines: int, lead: int) -> set[int]:
        """The lines whose drawing keeps the position's value."""
        best = self.value(lines, lead)
        return {line for line in range(LINES)
                if not lines >> line & 1 and self.after(lines, lead, line) == best}

    def table(self) -> np.ndarray:
        """float32 [2**LINES, 2 * BOXES + 1]: `value(lines, lead)` at [lines, lead + BOXES]
        (0 where no game reaches it)."""
        out = np.zeros((1 << LINES, 2 * BOXES + 1), np.float32)
        for lines in range(1 << LINES):
            for lead in range(-BOXES, BOXES + 1):
                out[lines, lead + BOXES] = self.value(lines, lead)
        return out


def position_of(planes: np.ndarray) -> tuple[int, int]:
    """(lines bit mask, the mover's lead) of an observation's planes [5, 5, 3] (the lines
    drawn; the mover's boxes; the opponent's)."""
    lines = 0
    for r in range(ROWS + 1):
        for c in range(COLUMNS):
            lines |= int(planes[2 * r, 2 * c + 1, 0] > 0) << (r * COLUMNS + c)
    for r in range(ROWS):
        for c in range(COLUMNS + 1):
            lines |= int(planes[2 * r + 1, 2 * c, 0] > 0) << (
                HORIZONTAL + r * (COLUMNS + 1) + c)
    lead = int(planes[..., 1].sum() - planes[..., 2].sum())
    return lines, lead


def line_weights() -> np.ndarray:
    """float32 [5, 5]: 2**line at each line's cell of the planes, 0 elsewhere (a line set's
    bit mask is the sum over the drawn lines)."""
    weights = np.zeros((2 * ROWS + 1, 2 * COLUMNS + 1), np.float32)
    for r in range(ROWS + 1):
        for c in range(COLUMNS):
            weights[2 * r, 2 * c + 1] = 2.0 ** (r * COLUMNS + c)
    for r in range(ROWS):
        for c in range(COLUMNS + 1):
            weights[2 * r + 1, 2 * c] = 2.0 ** (HORIZONTAL + r * (COLUMNS + 1) + c)
    return weights
