"""Which recalled lessons reach the prompt: confirmed ones rank higher, the current project first.

Parts: `boosted_score` (similarity times the confirmation boost), `prefer_project`
(fill the top-k slots: the current project's lessons first, with a share of the
slots kept for other projects' lessons).
"""

from __future__ import annotations

import math
from typing import TypeVar

from tether.memory.config import MemoryConfig
from tether.memory.lesson import Lesson

MAX_COUNTED_CONFIRMATIONS = 5
T = TypeVar("T")


def boosted_score(score: float, lesson: Lesson, config: MemoryConfig) -> float:
    """The index score, multiplied by 1 + confirm_boost per confirmation (at most 5 counted)."""
    return score * (1 + config.confirm_boost * min(lesson.confirmations, MAX_COUNTED_CONFIRMATIONS))


def prefer_project(ranked: list[tuple[T, str]], project: str, top_k: int, global_share: float) -> list[T]:
    """Pick top_k of (item, project) pairs, best first, keeping their order among the chosen.

    ceil(top_k * global_share) slots are kept for lessons of other projects
    (lessons without a project count as other); the current project's best
    lessons take the rest. Slots one side cannot fill go to the other side's
    next best. Without a current project every lesson competes on score alone.
    """
    if not project:
        return [item for item, _ in ranked[:top_k]]
    local = [i for i, (_, p) in enumerate(ranked) if p == project]
    other = [i for i, (_, p) in enumerate(ranked) if p != project]
    keep_other = min(len(other), math.ceil(top_k * global_share))
    keep_local = min(len(local), top_k - keep_other)
    picked = set(local[:keep_local]) | set(other[:keep_other])
    spare = [i for i in range(len(ranked)) if i not in picked]
    picked |= set(spare[: top_k - len(picked)])
    return [ranked[i][0] for i in sorted(picked)]
