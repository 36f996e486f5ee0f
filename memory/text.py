"""Text handling shared by retrieval and by the source-only check.

Parts: `tokens` (lowercase word tokens, identifiers split, light stemming,
stopwords dropped), `sparse_document` / `sparse_query` (hashed BM25 term
weights; IDF is left to Qdrant's IDF modifier), `normalize` (the form quotes
are compared in), `claims` (the checkable specifics of a sentence: numbers,
paths, file names, flags, identifiers, backticked spans), `jaccard`.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    """a an and are as at be by for from has have if in into is it its of on or that the
    this to was were will with when then than do does did not no so but can you your we our
    they their there these those which who what how all any each use used using""".split()
)
BM25_K1 = 1.2
BM25_B = 0.75
AVG_LEN = 40.0
"""Typical token count of an indexed lesson; only shapes length normalisation."""


def _stem(word: str) -> str:
    # A deliberately tiny suffix stripper: enough for sort/sorting/sorted/sorts.
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def tokens(text: str) -> list[str]:
    """Split text into retrieval tokens; `snake_case`, `a.b/c` and `x-y` split into parts."""
    out = []
    for raw in _WORD.findall(text.lower()):
        if raw in _STOP or len(raw) < 2 and not raw.isdigit():
            continue
        out.append(_stem(raw))
    return out


def term_id(term: str) -> int:
    """Stable 31-bit id of a term (Python's hash() is salted per process, so not that)."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "big") & 0x7FFFFFFF


def sparse_document(text: str) -> tuple[list[int], list[float]]:
    """BM25 term-frequency weights of a document, keyed by hashed term id."""
    toks = tokens(text)
    counts: Counter[int] = Counter(term_id(t) for t in toks)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * len(toks) / AVG_LEN)
    items = sorted(counts.items())
    return [i for i, _ in items], [tf * (BM25_K1 + 1) / (tf + norm) for _, tf in items]


def sparse_query(text: str) -> tuple[list[int], list[float]]:
    """Each distinct query term weighs 1; Qdrant multiplies in the IDF."""
    ids = sorted({term_id(t) for t in tokens(text)})
    return ids, [1.0] * len(ids)


_SPACE = re.compile(r"\s+")
_EDGE = "\"'`“”«»‘’.,;:!?()[]{}<> "


def normalize(text: str) -> str:
    """Lowercase, unify quotes, collapse whitespace: the form evidence is matched in."""
    text = text.lower().replace("“", '"').replace("”", '"').replace("’", "'").replace("‘", "'")
    return _SPACE.sub(" ", text).strip()


def normalize_quote(quote: str) -> str:
    """A quote as it should occur in the source: normalised, outer quotes and dots trimmed."""
    q = normalize(quote)
    q = q.removesuffix("...").removesuffix("…")
    return q.strip(_EDGE)


_BACKTICK = re.compile(r"`([^`]+)`")
_CLAIM_PATTERNS = (
    re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*%?)"),  # numbers
    re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*(?:=\S+)?)"),  # command-line flags
    re.compile(r"((?:[\w.-]*/)+[\w.-]+)"),  # paths
    re.compile(r"\b([\w-]+\.[a-zA-Z]\w{0,7})\b"),  # file names, module.attr
    re.compile(r"\b([A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|\w+\(|\w+=\w+)"),  # identifiers, calls
)


def claims(text: str) -> set[str]:
    """The specific, checkable tokens of a text (normalised).

    Plain words are not claims: a revision may narrow a lesson with ordinary
    language ("only for descending order"), but any number, path, file name,
    flag, identifier or backticked command it adds must come from somewhere.
    """
    found = {normalize(m) for m in _BACKTICK.findall(text)}
    for pattern in _CLAIM_PATTERNS:
        found.update(normalize(m).strip(_EDGE) for m in pattern.findall(text))
    return {c for c in found if c}


def occurs(needle: str, haystack_normalized: str) -> bool:
    """Whether a normalised needle occurs in a normalised text, not inside a longer word or number."""
    if not needle:
        return False
    left = r"(?<!\w)" if needle[0].isalnum() else ""
    right = r"(?!\w)" if needle[-1].isalnum() else ""
    return re.search(left + re.escape(needle) + right, haystack_normalized) is not None


def jaccard(a: str, b: str) -> float:
    """Token-set overlap of two texts, 0..1; used to drop near-duplicate lessons."""
    ta, tb = set(tokens(a)), set(tokens(b))
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)
