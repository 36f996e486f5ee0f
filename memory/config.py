"""Configuration of the memory cycle and its index."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tether.memory.backends import BACKENDS


class MemoryConfig(BaseModel):
    """What is read before a task, and how lessons and rules evolve after it."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Wrap every run in the read -> revise -> write cycle."""
    index: str = "edge"
    """A backend of memory.backends: `edge` (Qdrant's in-process engine) or `qdrant` (qdrant-client: a server by
    `qdrant_url`, else its local mode)."""
    qdrant_url: str | None = None
    """URL of a Qdrant server when index = "qdrant" (None = qdrant-client local mode)."""
    qdrant_collection: str = "tether_memory"
    """Collection that holds the index on a Qdrant server."""
    embeddings: Literal["sparse", "dense", "hybrid"] = "sparse"
    """`sparse`: BM25 only, no model. `dense`: all-MiniLM-L6-v2 vectors only (extra
    `tether[dense]`, torch on CPU). `hybrid`: both, fused by RRF (k = 60). The older
    `dense = true` means `hybrid`."""
    dense_min_score: float = Field(default=0.3, ge=-1, le=1)
    """Cosine similarity below which a dense match is dropped (dense and hybrid), so that an
    unrelated goal still retrieves nothing; paraphrases score about 0.4-0.8, unrelated text below 0.2."""
    top_k: int = Field(default=5, gt=0)
    """Lessons retrieved per task."""
    similar_runs: int = Field(default=3, ge=0)
    """Past runs retrieved per task."""
    recall_item_chars: int = Field(default=600, ge=40)
    """Each recalled text (insight, applicability, rule, past goal) is cut to this many characters in a prompt."""
    recall_total_chars: int = Field(default=8000, ge=200)
    """The recalled entries of one prompt stop at this many characters, so no past run crowds out a new task."""
    max_new_lessons: int = Field(default=3, ge=0)
    """Lessons written per run at most."""
    duplicate_threshold: float = Field(default=0.7, gt=0, le=1)
    """Token overlap (Jaccard) at which a new lesson counts as a near-duplicate and is dropped."""
    history_keep: int = Field(default=20, ge=0)
    """History entries a lesson file keeps; older ones move to lessons/history/<id>.md (its counts of
    confirmations, uses and pinning kept in the lesson). 0 keeps every entry in the lesson file."""
    merge_threshold: float = Field(default=0.9, gt=0, le=1)
    """Word overlap (Jaccard, negations counted) at which a revised lesson and another live lesson say the same:
    they are merged into the older one (memory.merge); a person's pinned lesson is never merged."""
    counterfactual: bool = False
    """After an accepted revision of a lesson that a failed run used, ask whether the revised
    lesson would have prevented the failure; a 'no' discards the revision (one more call)."""
    rule_inject_threshold: float = 0.60
    """Rules at or above this confidence go into prompts."""
    rule_initial_confidence: float = 0.40
    """Confidence of a freshly learnt rule."""
    rule_success_delta: float = 0.03
    """Added when a task the rule applied to succeeds."""
    rule_failure_delta: float = 0.05
    """Subtracted when a task the rule applied to fails."""
    rule_retire_below: float = 0.20
    """Rules below this confidence are retired."""
    rule_window_days: float = 7.0
    """Two equal error signatures within this window make a rule."""
    rule_max_injected: int = Field(default=10, ge=0)
    """Rules put into one prompt at most (highest confidence first)."""
    rule_trial_rate: float = Field(default=0.2, ge=0, le=1)
    """Share of runs that carry one rule still below the threshold, on trial, so that it can
    earn credit at all. Drawn per run from a generator seeded by the run id (the draw is
    recorded in the run's recall.json); the rule tried is the one tried least recently, so
    every sub-threshold rule gets its turn even when the same goal repeats."""
    rule_half_life_days: float | None = Field(default=30.0, gt=0)
    """Days without use (no run it applied to, no recurrence of its error) after which a rule's
    margin above `rule_inject_threshold` halves (an earned place in prompts is never lost by
    idling), or, for a rule below the threshold, its whole confidence halves; it retires once
    below `rule_retire_below`. None: rules never fade."""
    confirm_boost: float = Field(default=0.1, ge=0)
    """Each accepted `confirmed` verdict (since the text last changed) multiplies a lesson's
    retrieval score by 1 + confirm_boost, counting at most 5 confirmations."""
    recall_global_share: float = Field(default=0.4, ge=0, le=1)
    """Share of the top_k lesson slots kept for lessons from other projects (the rest go to the
    current project's lessons first); slots one side cannot fill go to the other."""

    auto_commit: bool = False
    """After each run, commit the memory folder's changes to git (`git init` first when it is in no
    repository), the run id in the message; its `.gitignore` keeps everything derived out, so
    only markdown is committed. `tether memory log` reads the history back."""

    @field_validator("index")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if value not in BACKENDS:
            msg = f"unknown memory index {value!r}; use one of {', '.join(BACKENDS)}"
            raise ValueError(msg)
        return value

    @model_validator(mode="before")
    @classmethod
    def _legacy_dense(cls, data: Any) -> Any:
        """Accept the former `dense = true|false` as `embeddings = "hybrid"|"sparse"`."""
        if isinstance(data, dict) and "dense" in data:
            data = dict(data)
            dense = data.pop("dense")
            if isinstance(dense, str):
                dense = dense.strip().lower() in {"1", "true", "yes", "on"}
            data.setdefault("embeddings", "hybrid" if dense else "sparse")
        return data

    @property
    def uses_dense(self) -> bool:
        """Whether the index holds dense vectors (embeddings = dense or hybrid)."""
        return self.embeddings != "sparse"
