"""Pure weight arithmetic: independence keys (R25), contributions and log-odds (R26), status (R28)."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import unquote, urlsplit

import idna

#: R26: each origin's reliability when a record gives none of its own.
RELIABILITY: dict[str, float] = {"web": 0.60, "document": 0.75, "tool": 0.90, "person": 0.85, "model": 0.55}
ORIGINS = tuple(RELIABILITY)


_HOST = re.compile(r"^([0-9a-f.]*:[0-9a-f:.]*|[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*)$")
_ZONE = re.compile(r"^[a-z0-9._~-]+$")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


@functools.lru_cache(maxsize=1 << 14)
def web_host(url: str) -> str | None:
    """The host of a web source (R25): lower-cased, ASCII, no port, final dot or `www.`; None if it has none."""
    text = url.strip()
    if "://" not in text and not text.startswith("//"):
        if _SCHEME.match(text) and not re.match(r"^[^/:]+:\d+(/|$)", text):
            return None  # a scheme without an authority (mailto:, urn:) names no host
        text = "//" + text
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    host = _host_key(host.lower()) if host else None
    if host is None:
        return None
    return host[4:] if host.startswith("www.") and len(host) > 4 else host


def _host_key(host: str) -> str | None:
    """A lower-cased host as R25 keys it, or None if it is not a host."""
    if ":" in host:  # an IPv6 literal, perhaps with a zone (`%25eth0` in a URL, RFC 6874)
        address, percent, zone = host.partition("%")
        zone = unquote(zone[2:]) if zone.startswith("25") else zone
        if not _HOST.match(address) or (percent and not _ZONE.match(zone)):
            return None
        return f"{address}%{zone}" if percent else address
    host = host.removesuffix(".")  # `example.com.` names example.com
    if not host.isascii():  # an internationalized name: its ASCII form, as a browser resolves it
        try:
            mapped = idna.uts46_remap(host, std3_rules=False, transitional=False).removesuffix(".")
        except (idna.IDNAError, UnicodeError, ValueError):
            return None
        if any(label.startswith("-") or label.endswith("-") for label in mapped.split(".")):
            return None
        # UTS 46's ToASCII: each mapped label that is not ASCII becomes `xn--` and its Punycode.
        host = ".".join(
            label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
            for label in mapped.split(".")
        )
    return host if _HOST.match(host) else None


def independence_key(origin: str, source: str | None, *, run_id: str) -> str:
    """R25: supports with the same origin and key are one source."""
    if origin == "web":
        if (host := web_host(source or "")) is None:
            raise ValueError(f"web source {source!r} has no host (R25)")
        return host
    if origin == "model":
        return f"model:{run_id}"
    if source is None:
        raise ValueError(f"a {origin} record needs a source (R25)")
    return source


def contribution(reliability: float) -> float:
    """R26: l = ln(r / (1 - r)), for r strictly between 0.5 and 1 (or a default)."""
    return math.log(reliability / (1.0 - reliability))


def reliability_of(origin: str, given: float | None) -> float:
    """The record's own reliability, or its origin's default (R26)."""
    return RELIABILITY[origin] if given is None else given


#: R28: a dispute subtracts the person reliability's l.
DISPUTE_CONTRIBUTION = contribution(RELIABILITY["person"])


def log_odds(source_contributions: Iterable[float], dispute_contributions: Iterable[float]) -> float:
    """R26: L = sum over sources minus sum over disputes; fsum makes it independent of order."""
    return math.fsum([*source_contributions, *(-d for d in dispute_contributions)])


def weight_of(log_odds_value: float) -> float:
    """R26: w = 1 / (1 + e^-L)."""
    return 1.0 / (1.0 + math.exp(-log_odds_value))


#: A support's independence key: None where another organization's support is withheld (R23).
K = TypeVar("K", bound=str | None)


def fold_sources(supports: Iterable[tuple[str, K, float]]) -> dict[tuple[str, K], float]:
    """One vote per (origin, key): a source contributes the largest l among its supports (R25, R26)."""
    best: dict[tuple[str, K], float] = {}
    for origin, key, contrib in supports:
        best[(origin, key)] = max(best.get((origin, key), -math.inf), contrib)
    return best


@dataclass(frozen=True)
class Score:
    log_odds: float
    weight: float
    sources: int
    status: str


#: Weights as answers give them and R22 compares them: rounded to this many decimals (0.9, never 0.8999999999999999).
WEIGHT_DECIMALS = 6

#: Weights are computed in floating point: 1 / (1 + e^-ln 9) comes out as 0.8999999999999999.
#: Comparisons against a threshold (0.5 for R28, a step's min_weight for R22) allow this much.
TOLERANCE = 1e-9


def at_least(weight: float, threshold: float) -> bool:
    """weight >= threshold, up to floating-point rounding (a single tool source does reach 0.9)."""
    return weight >= threshold - TOLERANCE


def status_of(weight: float, *, retracted: bool) -> str:
    """R28: `retracted` goes before `disputed`; below 0.5 is disputed."""
    if retracted:
        return "retracted"
    return "active" if at_least(weight, 0.5) else "disputed"


def score(supports: Sequence[tuple[str, str | None, float]], disputes: Sequence[float], *, retracted: bool) -> Score:
    """A fact's log-odds, weight, independent sources and status from its supports and disputes."""
    folded = fold_sources(supports)
    lo = log_odds(folded.values(), disputes)
    w = weight_of(lo)
    return Score(lo, w, len(folded), status_of(w, retracted=retracted))


@dataclass(frozen=True)
class SourceBreakdown:
    origin: str
    key: str
    contribution: float
    reliability: float
    supports: int  # repeats folded into this one source
    erased: int  # supports whose pointer was erased (R29)
    weight_without: float  # leave-one-out


def breakdown(supports: Sequence[tuple[str, str, float, bool]], disputes: Sequence[float]) -> list[SourceBreakdown]:
    """Each independent source of a fact with what it adds; `supports` are (origin, key, l, erased)."""
    folded = fold_sources((o, k, c) for o, k, c, _ in supports)
    rows = []
    for (origin, key), contrib in folded.items():
        mine = [erased for o, k, _, erased in supports if (o, k) == (origin, key)]
        others = [c for k, c in folded.items() if k != (origin, key)]
        without = weight_of(log_odds(others, disputes))  # leave-one-out
        # the reliability a frozen l stands for is weight_of(l): the logistic inverts `contribution` (R26)
        rows.append(SourceBreakdown(origin, key, contrib, weight_of(contrib), len(mine), sum(mine), without))
    return rows


def _num(x: float) -> str:
    return f"{x:.3f}".replace("-", "\u2212")


def written_out(sources: Sequence[float], disputes: Sequence[float], *, status: str) -> str:
    """R26's arithmetic for one fact as a person checks it by hand, with the status it gives (R28)."""
    terms = (" + ".join(_num(c) for c in sources) or "0") + "".join(f" \u2212 {_num(d)}" for d in disputes)
    lo = log_odds(sources, disputes)
    w = weight_of(lo)
    return (
        f"L = \u03a3 largest l per source \u2212 \u03a3 disputes = {terms} = {_num(lo)}; "
        f"w = \u03c3(L) = 1 / (1 + e^\u2212L) = {w:.3f}; status: {status} (R28)"
    )


def without_each_dispute(sources: Sequence[float], disputes: Sequence[float]) -> list[float]:
    """Leave-one-out for disputes: the weight the fact would have without each dispute (R26, R28)."""
    return [weight_of(log_odds(sources, [d for j, d in enumerate(disputes) if j != i])) for i in range(len(disputes))]
