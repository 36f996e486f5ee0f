"""The scripted chat model: a deterministic LangChain chat model read from YAML.

It is what the tests use and what a user runs for a reproducible demo without
an LLM. Callers name their call site (and, where a node may be re-run after a
crash, a key and a turn) in the invoke config's metadata:

    model.invoke(messages, config={"metadata": {"tether_site": "actor",
                                                "tether_key": "step-1",
                                                "tether_turn": 2}})

A site's queue is a list (indexed by `tether_turn`, or consumed in order when
no turn is given) or a mapping from key to such a list. Indexing by a turn
taken from checkpointed state makes a resumed run pick the same answers.
`{{recalled_lessons}}` in an answer stands for the ids of the lessons the
prompt recalled, so a script can cite lessons whose ids it cannot know.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from pathlib import Path
from typing import Any

import yaml
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from tether.common.errors import ConfigError, TetherError
from tether.common.files import read_text
from tether.common.yamlsafe import YamlLimitError
from tether.common.yamlsafe import load as load_yaml

MAX_SCENARIO_BYTES = 4 << 20
"""A scenario file larger than this is refused (with the limits of common.yamlsafe on depth and aliases)."""
RECALLED = "{{recalled_lessons}}"
"""Placeholder for the ids of the lessons the prompt recalled (memory lists them as `- [id] ...`)."""
_RECALLED_LINE = re.compile(r"^- \[([^\]\s]+)\] ", re.MULTILINE)


def _fill(value: Any, ids: list[str]) -> Any:
    """Replace RECALLED in strings (comma-joined) and list items (expanded to every id)."""
    if isinstance(value, str):
        return value.replace(RECALLED, ", ".join(ids))
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            out += ids if item == RECALLED else [_fill(item, ids)]
        return out
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


class ScriptExhaustedError(TetherError, LookupError):
    """The script has no answer for a call; the message says which to add."""


class ScriptedToolCall(BaseModel):
    """One tool call the scripted model makes."""

    model_config = ConfigDict(extra="forbid")

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ScriptedInvalidCall(BaseModel):
    """A tool call whose arguments a real client could not parse (as LangChain reports it)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    args: str = ""
    """The raw argument text the model sent."""
    error: str = "invalid JSON"


class ScriptedResponse(BaseModel):
    """One answer: plain text, tool calls, or both (and, to test the runtime, malformed calls)."""

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    invalid_tool_calls: list[ScriptedInvalidCall] = Field(default_factory=list)


Queue = list[ScriptedResponse]


class Script(BaseModel):
    """A scripted run: its goal and one queue of answers per call site."""

    model_config = ConfigDict(extra="forbid")

    goal: str | None = None
    """Goal used by `tether run` when none is given on the command line."""
    description: str = ""
    """What the scenario shows, for people."""
    responses: dict[str, Queue | dict[str, Queue]] = Field(default_factory=dict)
    """Call site -> answers, or call site -> key -> answers."""
    latency_s: float = Field(default=0.0, ge=0, le=60, allow_inf_nan=False)
    """Seconds each answer takes, as a real model's would (benches measure what overlaps the model's time)."""

    @field_validator("responses", mode="before")
    @classmethod
    def _plain_strings(cls, value: Any) -> Any:
        def norm(queue: Any) -> Any:
            if isinstance(queue, list):
                return [{"text": r} if isinstance(r, str) else r for r in queue]
            return queue

        if isinstance(value, dict):
            return {
                site: {k: norm(q) for k, q in queue.items()} if isinstance(queue, dict) else norm(queue)
                for site, queue in value.items()
            }
        return value

    @classmethod
    def from_file(cls, path: Path) -> Script:
        """Read and validate a script; ConfigError names the file and the problem."""
        text = read_text(path, ConfigError, "pass an existing UTF-8 YAML scenario (docs/scripted-model.md)",
                         max_bytes=MAX_SCENARIO_BYTES)
        try:
            data = load_yaml(text) or {}
        except YamlLimitError as e:
            msg = f"scripted model: {path} is refused: {e}; simplify the scenario (no deep nesting, no alias bombs)"
            raise ConfigError(msg) from e
        except yaml.YAMLError as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            msg = f"scripted model: {path} is not valid YAML ({first}); fix the file"
            raise ConfigError(msg) from e
        if not isinstance(data, dict):
            msg = (
                f"scripted model: {path} holds a YAML {type(data).__name__}, not a mapping with `responses:`; see "
                "docs/scripted-model.md"
            )
            raise ConfigError(msg)
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            msg = f"scripted model: {path}: '{where}': {first['msg']}; see docs/scripted-model.md"
            raise ConfigError(msg) from e


class ScriptedChatModel(BaseChatModel):
    """Answers each call from the script; tool binding is accepted and ignored."""

    script: Script
    source: str = "<script>"
    _counters: dict[tuple[str, str], itertools.count] = PrivateAttr(default_factory=dict)
    _calls: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedChatModel:
        return cls(script=Script.from_file(path), source=str(path))

    @property
    def _llm_type(self) -> str:
        return "tether-scripted"

    @property
    def calls(self) -> list[dict[str, Any]]:
        """Every call made: site, key, turn, input and output token estimates."""
        return list(self._calls)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # noqa: ARG002
        return self

    def _pick(self, site: str, key: str, turn: int | None) -> ScriptedResponse:
        queue = self.script.responses.get(site)
        if isinstance(queue, dict):
            queue = queue.get(key)
        label = f"site '{site}'" + (f" key '{key}'" if key else "")
        if queue is None:
            msg = f"scripted model: {self.source} has no responses for {label}; add them under responses.{site}"
            raise ScriptExhaustedError(msg)
        if turn is None:
            turn = next(self._counters.setdefault((site, key), itertools.count()))
        if turn >= len(queue):
            msg = (
                f"scripted model: {self.source} ran out of responses for {label} "
                f"(asked for #{turn + 1}, has {len(queue)}); add more or fix the scenario"
            )
            raise ScriptExhaustedError(msg)
        return queue[turn]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,  # noqa: ARG002
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,  # noqa: ARG002
    ) -> ChatResult:
        meta = run_manager.metadata if run_manager else {}
        site = meta.get("tether_site")
        if not site:
            msg = "scripted model called without metadata 'tether_site'; every call site must name itself"
            raise ScriptExhaustedError(msg)
        key = str(meta.get("tether_key") or "")
        turn = meta.get("tether_turn")
        response = self._pick(site, key, None if turn is None else int(turn))
        if self.script.latency_s:
            time.sleep(self.script.latency_s)
        recalled = list(dict.fromkeys(i for m in messages for i in _RECALLED_LINE.findall(str(m.content))))
        calls = [
            {
                "name": c.name,
                "args": _fill(c.args, recalled),
                "id": f"call_{site}_{len(self._calls)}_{i}",
                "type": "tool_call",
            }
            for i, c in enumerate(response.tool_calls)
        ]
        in_tokens = sum(len(str(m.content)) for m in messages) // 4 + 1
        out_tokens = (len(response.text) + len(json.dumps([c["args"] for c in calls]))) // 4 + 1
        self._calls.append(
            {"site": site, "key": key, "turn": turn, "input_tokens": in_tokens, "output_tokens": out_tokens}
        )
        message = AIMessage(
            content=_fill(response.text, recalled),
            tool_calls=calls,
            invalid_tool_calls=[{"name": b.name, "args": b.args, "id": f"bad_{site}_{i}", "error": b.error,
                                 "type": "invalid_tool_call"} for i, b in enumerate(response.invalid_tool_calls)],
            usage_metadata={
                "input_tokens": in_tokens,
                "output_tokens": out_tokens,
                "total_tokens": in_tokens + out_tokens,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def endpoint(name: str, config: Any, environ: Any) -> str:  # noqa: ARG001
    """The scenario file, as a file: URL (nothing leaves the machine)."""
    return "file:" + str(Path(name).expanduser().resolve())


def build(name: str, config: Any, environ: Any) -> ScriptedChatModel:  # noqa: ARG001
    """`scripted:PATH`: the scenario at PATH."""
    return ScriptedChatModel.from_file(Path(name).expanduser())
