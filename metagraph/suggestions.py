"""`did_you_mean`: the close matches of a misspelt name among the known ones, for the errors
that refuse an unknown environment id, config key or option ("did you mean 'CartPole-v1'?")."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str], count: int = 3) -> str:
    """" (did you mean 'A' or 'B'?)" for the up to `count` names of `known` closest to `name`
    (case ignored: `cartpole-v1` finds `CartPole-v1`), or "" when none is close."""
    known = list(known)
    by_folded = {k.casefold(): k for k in known}
    close = difflib.get_close_matches(str(name).casefold(), list(by_folded), n=count,
                                      cutoff=0.6)
    if not close:
        return ""
    quoted = [repr(by_folded[c]) for c in close]
    names = " or ".join([", ".join(quoted[:-1]), quoted[-1]]) if len(quoted) > 1 else quoted[0]
    return f" (did you mean {names}?)"
