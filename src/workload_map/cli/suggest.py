""" "Did you mean …?": close matches for a mistyped subcommand, type or name (difflib)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["did_you_mean", "suggestions"]


def suggestions(word: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """Up to ``limit`` candidates close to ``word`` (case-insensitive), best first."""
    pool = sorted(set(candidates))
    lowered = {c.lower(): c for c in pool}
    word_l = word.lower()
    # difflib (and its dependencies) only for a miss: every command imports this module
    import difflib

    prefix = [c for c in pool if c.lower().startswith(word_l) and len(word_l) >= 3]
    close = difflib.get_close_matches(word_l, list(lowered), n=limit, cutoff=0.6)
    out: list[str] = []
    for c in [*(lowered[m] for m in close), *prefix]:
        if c not in out and c.lower() != word_l:
            out.append(c)
    return out[:limit]


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """A hint line ``did you mean "x" or "y"?`` or None when nothing is close."""
    found = suggestions(word, candidates)
    if not found:
        return None
    return "did you mean " + " or ".join(f'"{c}"' for c in found) + "?"
