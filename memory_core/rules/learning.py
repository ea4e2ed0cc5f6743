"""What a completed turn writes (R5, R7 to R10): which rule keeps a claim out of a graph."""

from __future__ import annotations

from dataclasses import dataclass

from .turns import teaches


@dataclass(frozen=True)
class RunFacts:
    """What R8 and R9 ask of a run and its organization when a turn's teaching is written (R16)."""

    surface: str
    ephemeral: bool
    person_erased: bool
    learn_from_ephemeral_runs: bool
    learn_from_users: bool


def record_teaches(nested_status: str | None) -> bool:
    """R5: a record of nested work that failed or was cancelled contributes nothing."""
    return nested_status is None or teaches(nested_status)


def world_skip_rule(run: RunFacts, *, persons_words: bool) -> str | None:
    """R8, reported as R10 says: the first of R8b, R8a, R8d, R8c that applies, or None."""
    search = run.surface == "search"
    if run.ephemeral and search:
        return "R8b"
    if run.ephemeral and not run.learn_from_ephemeral_runs:
        return "R8a"
    if persons_words and search:
        return "R8d"
    if persons_words and not run.learn_from_users:
        return "R8c"
    return None


def user_skip_rule(run: RunFacts, *, persons_words: bool) -> str | None:
    """R9 (and R30): why a user claim is kept out of the person's User graph, or None."""
    if run.person_erased:
        return "R30"
    if run.ephemeral or (persons_words and run.surface == "search"):
        return "R9"
    return None


def skip_rule(graph: str, run: RunFacts, *, origin: str) -> str | None:
    """Which rule keeps a claim targeted at `graph` out of it; Flow keeps everything (R7)."""
    persons_words = origin == "person"
    if graph == "world":
        return world_skip_rule(run, persons_words=persons_words)
    if graph == "user":
        return user_skip_rule(run, persons_words=persons_words)
    return None
