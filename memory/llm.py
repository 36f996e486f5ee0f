"""How memory talks to the chat model: one named call per step, JSON read strictly.

Parts: `Call` (what one call cost), `ask` (invoke with the site metadata the
scripted model and the run journal key on), `parse_json` (the first JSON
object in an answer, fenced or bare; None when there is none).
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

SITES = ("compile", "revise", "lessons", "rule", "counterfactual")


class Call(BaseModel):
    """One model call made by the memory cycle."""

    site: str
    key: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content)


def ask(model: BaseChatModel, site: str, system: str, user: str, key: str = "") -> tuple[str, Call]:
    """One model call at `site`; returns the answer text and its token counts.

    The token counts come from the provider's usage metadata when it reports
    them, else from a 4-characters-a-token estimate.
    """
    meta: dict[str, Any] = {"tether_site": site}
    if key:
        meta["tether_key"] = key
    message = model.invoke([SystemMessage(system), HumanMessage(user)], config={"metadata": meta})
    text = _text(message.content)
    usage = getattr(message, "usage_metadata", None) or {}
    call = Call(
        site=site, key=key,
        input_tokens=int(usage.get("input_tokens") or (len(system) + len(user)) // 4 + 1),
        output_tokens=int(usage.get("output_tokens") or len(text) // 4 + 1),
    )
    return text, call


_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL)


def parse_json(text: str) -> dict[str, Any] | None:
    """The JSON object in a model answer (inside a ``` fence or bare), or None."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start >= 0 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None
