"""The source-only rule, enforced in code.

Parts: `RevisionProposal` (a revise answer, validated), `read_revision`
(answer text -> proposal or the reason it is unreadable), `unsupported_claims`
(new specifics not found in a run), `check_revision` (every reason to reject).

A revision is rejected when a quote it gives as evidence does not occur in the
SOURCE run (normalised substring), or when the rewritten lesson adds a number,
path, file name, flag, identifier or backticked command that neither the old
lesson nor the source run contains, or when it is over 3 sentences, or when
one of its sentences stands mostly on words neither the source run nor the old
lesson has without saying "hypothesis, unconfirmed". `confirmed` keeps the
text (its "lesson" is ignored); an empty lesson retires it for `outdated`;
`too_general` must rewrite it and state an applicability that restricts the
current one: every word of the old applicability kept, at least one added
(`narrows`). The current run may decide the verdict; it can never supply a fact.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from tether.memory.lesson import Verdict
from tether.memory.llm import parse_json
from tether.memory.text import claims, normalize, normalize_quote, occurs, tokens

MAX_SENTENCES = 3
HYPOTHESIS = "hypothesis, unconfirmed"
UNSUPPORTED_SHARE = 0.5
"""A sentence more than this share of whose words neither the source nor the old lesson has must be marked."""


class RevisionProposal(BaseModel):
    """What the revise call must return."""

    model_config = ConfigDict(extra="ignore")

    verdict: Verdict
    evidence: list[str]
    lesson: str
    applicability: str = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict(cls, value: Any) -> Any:
        return value.strip().lower().replace(" ", "_").replace("-", "_") if isinstance(value, str) else value

    @field_validator("evidence", mode="before")
    @classmethod
    def _evidence(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


def read_revision(answer: str) -> tuple[RevisionProposal | None, str]:
    """Parse a revise answer; (None, reason) when it is not the JSON asked for."""
    data = parse_json(answer)
    if data is None:
        return None, "answer is not a JSON object"
    try:
        return RevisionProposal.model_validate(data), ""
    except ValidationError as e:
        first = e.errors()[0]
        return None, f"answer JSON field '{'.'.join(map(str, first['loc']))}': {first['msg']}"


def sentences(text: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s])


def unsupported_claims(new_text: str, old_text: str, source_normalized: str) -> list[str]:
    """Specifics in `new_text` that are neither in `old_text` nor in the source run."""
    old = claims(old_text)
    old_norm = normalize(old_text)
    return sorted(c for c in claims(new_text) - old if not occurs(c, source_normalized) and not occurs(c, old_norm))


def narrows(new: str, old: str) -> tuple[bool, list[str]]:
    """Whether applicability `new` restricts `old` (keeps all its words, adds one); and the old words it drops.

    Words are compared as retrieval tokens (lowercased, lightly stemmed, stopwords
    dropped), so "numeric sorting tasks" -> "numeric sorting tasks in descending
    order" narrows, while "descending sorts" (it drops "numeric" and "tasks") does not.
    """
    old_words, new_words = set(tokens(old)), set(tokens(new))
    dropped = sorted(old_words - new_words)
    return not dropped and bool(new_words - old_words), dropped


def unmarked_guesses(new_text: str, known: set[str]) -> list[str]:
    """Sentences of `new_text` standing mostly on words not in `known`, without the hypothesis mark."""
    out = []
    for sentence in re.split(r"(?<=[.!?;])\s+", new_text.strip()):
        words = set(tokens(sentence))
        if len(words) < 3 or HYPOTHESIS in normalize(sentence):
            continue
        if len(words - known) / len(words) > UNSUPPORTED_SHARE:
            out.append(sentence)
    return out


def check_revision(p: RevisionProposal, old_insight: str, old_applicability: str, source_text: str) -> list[str]:
    """Every reason to reject the proposal; empty means it stands on the source run."""
    source = normalize(source_text)
    problems = []
    if p.verdict == "confirmed":  # keeps the text: only the evidence is checked
        p = p.model_copy(update={"lesson": "", "applicability": ""})
    unchanged = normalize(p.lesson) in ("", normalize(old_insight))
    if not p.evidence and not (p.verdict == "confirmed" and unchanged):
        problems.append("no evidence quoted from the source run")
    for quote in p.evidence:
        q = normalize_quote(quote)
        if not q or q not in source:
            problems.append(f"evidence not found in the source run: {quote!r}")
    if not p.lesson.strip():
        if p.verdict == "too_general":
            problems.append(
                "rewritten lesson is empty (too_general narrows the lesson; outdated with no text retires it)"
            )
    elif sentences(p.lesson) > MAX_SENTENCES:
        problems.append(f"rewritten lesson has {sentences(p.lesson)} sentences (at most {MAX_SENTENCES})")
    if p.verdict == "too_general":
        narrower, dropped = narrows(p.applicability, old_applicability)
        if not narrower:
            problems.append(
                f"too_general must state a narrower applicability: keep every word of {old_applicability!r} and add "
                f"the condition that restricts it" + (f" (it drops {', '.join(dropped)})" if dropped else "")
            )
    known = set(tokens(f"{source_text}\n{old_insight}\n{old_applicability}"))
    for sentence in unmarked_guesses(p.lesson, known):
        problems.append(f"sentence not supported by the source run and not marked {HYPOTHESIS!r}: {sentence!r}")
    invented = unsupported_claims(f"{p.lesson}\n{p.applicability}", f"{old_insight}\n{old_applicability}", source)
    if invented:
        problems.append("claims not supported by the source run: " + ", ".join(invented))
    return problems
