"""Tool schemas the model is offered, and the prompts of each call site.

Parts: `tool()` (an OpenAI-format tool from a pydantic model), the tool sets
`PLAN_TOOLS`, `ACTOR_TOOLS`, `REPAIR_TOOLS`, `SUMMARY_TOOLS`, and the prompt
builders `planner_messages()`, `actor_messages()`, `replanner_messages()`,
`summarizer_messages()`. Prompts say what the gate will check, because a
model that knows the rules wastes fewer turns.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field


class _StepSpec(BaseModel):
    id: str
    description: str
    depends_on: list[str] = Field(default_factory=list)
    verify: str = Field(description="how this step is verified, ideally a command")


class SubmitPlan(BaseModel):
    steps: list[_StepSpec]


class SubmitRepair(BaseModel):
    steps: list[_StepSpec] = Field(description="new repair steps (may be empty to give up)")
    replace: dict[str, str] = Field(
        default_factory=dict, description="failed step id -> repair step id; dependents are re-attached"
    )


class RunShell(BaseModel):
    command: str = Field(description="bash command, run in the workspace inside the sandbox")


class ReadFile(BaseModel):
    path: str = Field(description="file path, relative to the workspace")


class FinishStep(BaseModel):
    summary: str
    files_read: list[str] = Field(default_factory=list)
    files_changed: list[str] = Field(default_factory=list)
    evidence: str = Field(default="", description="the command whose result proves the step")


class _ClaimSpec(BaseModel):
    text: str
    command: str = Field(description="the command that proves the claim")


class SubmitSummary(BaseModel):
    text: str
    files: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    claims: list[_ClaimSpec] = Field(default_factory=list)
    lessons_used: list[str] = Field(default_factory=list, description="ids of the memory lessons you relied on")


def tool(name: str, description: str, schema: type[BaseModel]) -> dict[str, Any]:
    """An OpenAI-format tool definition every LangChain chat model accepts."""
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": schema.model_json_schema()},
    }


PLAN_TOOLS = [tool("submit_plan", "Submit the plan as steps with dependencies.", SubmitPlan)]
REPAIR_TOOLS = [tool("submit_repair", "Add repair steps; re-attach dependents of failed steps.", SubmitRepair)]
ACTOR_TOOLS = [
    tool("run_shell", "Run a bash command in the sandboxed workspace.", RunShell),
    tool("read_file", "Read a file of the workspace.", ReadFile),
    tool("finish_step", "Declare this step finished, citing evidence.", FinishStep),
]
SUMMARY_TOOLS = [
    tool("submit_summary", "Final summary; cite files and commands; back each claim with a command.", SubmitSummary)
]

SYSTEM = (
    "You are Tether, an agent working in a sandboxed workspace ({mount}). "
    "Every shell command passes a risk guardian first; denied commands must not be retried in another form. "
    "A completion gate checks your work against the journal: claims need passing commands, "
    "changes need a verification command after them."
)


def _memory(memory_context: str) -> str:
    return f"\n\nFrom memory (check before you rely on it):\n{memory_context}" if memory_context else ""


def planner_messages(goal: str, memory_context: str, error: str, mount: str) -> list[BaseMessage]:
    text = f"Goal: {goal}\nPlan it as steps with dependencies; call submit_plan.{_memory(memory_context)}"
    if error:
        text += f"\n\nYour previous plan was rejected: {error}. Submit a corrected plan."
    return [SystemMessage(SYSTEM.format(mount=mount)), HumanMessage(text)]


def actor_messages(
    goal: str, step: dict[str, Any], deps: list[dict[str, Any]], memory_context: str, mount: str
) -> list[BaseMessage]:
    done = (
        "\n".join(f"- {d['id']}: {d.get('summary', '')} (evidence: {d.get('evidence', '')})" for d in deps) or "- none"
    )
    text = (
        f"Goal: {goal}\nCurrent step '{step['id']}': {step.get('description', '')}\n"
        f"Verify it by: {step.get('verify', '') or 'a command of your choice'}\n"
        f"Results of the steps it depends on:\n{done}{_memory(memory_context)}\n\n"
        "Use run_shell / read_file, then finish_step."
    )
    return [SystemMessage(SYSTEM.format(mount=mount)), HumanMessage(text)]


def replanner_messages(
    goal: str, plan: list[dict[str, Any]], steps: dict[str, Any], error: str, mount: str
) -> list[BaseMessage]:
    state = {sid: {"status": s.get("status"), "reason": s.get("reason", "")} for sid, s in steps.items()}
    text = (
        f"Goal: {goal}\nPlan: {json.dumps(plan)}\nStep states: {json.dumps(state)}\n"
        "Some steps failed and their dependents are blocked. Call submit_repair with new steps; "
        "map each failed step to the repair step that replaces it so blocked dependents continue."
    )
    if error:
        text += f"\n\nYour previous repair was rejected: {error}."
    return [SystemMessage(SYSTEM.format(mount=mount)), HumanMessage(text)]


def summarizer_messages(goal: str, steps: dict[str, Any], mount: str, memory_context: str = "") -> list[BaseMessage]:
    lines = "\n".join(
        f"- {sid}: {s.get('status')} {s.get('summary') or s.get('reason', '')}" for sid, s in steps.items()
    )
    text = (
        f"Goal: {goal}\nSteps:\n{lines}\n\nWrite the final summary with submit_summary: cite the files and "
        "commands, back each success claim with the command that proves it, and list in lessons_used "
        "the ids of the memory lessons you relied on (none if you relied on none)."
    ) + _memory(memory_context)
    return [SystemMessage(SYSTEM.format(mount=mount)), HumanMessage(text)]
