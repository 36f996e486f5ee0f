"""The words of every memory step's model call, kept apart from the logic.

Parts: `compile_prompt`, `revise_prompt`, `lessons_prompt`, `rule_prompt`,
`counterfactual_prompt`; each returns (system, user).
"""

from __future__ import annotations

from tether.memory.lesson import Lesson
from tether.memory.run import RunRecord, Turn, render_turns

MAX_TURNS_CHARS = 12_000


def _turns(turns: list[Turn]) -> str:
    text = render_turns(turns)
    if len(text) > MAX_TURNS_CHARS:  # keep the start and the end, where plans and failures are
        half = MAX_TURNS_CHARS // 2
        text = text[:half] + "\n[... turns elided ...]\n" + text[-half:]
    return text


def _current(record: RunRecord) -> str:
    gate = ""
    if record.gate is not None:
        gate = (
            f"\nGate: {'passed' if record.gate.passed else 'failed'} {', '.join(record.gate.failed)} "
            f"{record.gate.notes}"
        ).rstrip()
    return f"Task: {record.goal}\nOutcome: {record.outcome}{gate}"


def compile_prompt(record: RunRecord) -> tuple[str, str]:
    system = (
        "You compile an agent's run for its memory. You see only the task, the turns and whether it succeeded; "
        "there is no reference solution. If it succeeded, list the key decisions that made it work. If it failed, "
        "list the probable causes, each tied to a turn. Quote commands and errors exactly. Answer in markdown, "
        "at most 12 lines, no preamble."
    )
    user = f"Task: {record.goal}\nOutcome: {record.outcome}\n\nTurns:\n{_turns(record.turns)}"
    return system, user


def revise_prompt(lesson: Lesson, source_goal: str, source_outcome: str, source_turns: list[Turn],
                  record: RunRecord) -> tuple[str, str]:
    """The revise call; a lesson a person wrote has no source run: its own text is the only source of facts."""
    if lesson.source_run:
        origin = f"learnt from a {lesson.source_outcome} run"
        source = (f"SOURCE RUN (the only source of facts)\nTask: {source_goal}\nOutcome: {source_outcome}\n"
                  f"{_turns(source_turns)}\n")
    else:
        origin = "written by a person"
        source = ("SOURCE (the only source of facts): no run; a person wrote the lesson, so its own text above is "
                  "the source. Quote it as evidence.\n\n")
    system = (
        "You revise one lesson of an agent's memory (ReHarness backward pass).\n"
        "1. Compare the lesson with the CURRENT run's outcome: did it help, harm, or not matter?\n"
        "2. If it harmed or barely helped, find what the lesson lacked: evidence from the SOURCE run, an "
        "over-bold generalisation, missing conditions of applicability.\n"
        "3. Pick ONE verdict. Each one acts on the lesson:\n"
        '- "confirmed": the lesson held. Its text is KEPT as it is (leave "lesson" empty; any text is '
        "ignored) and it gains a confirmation, which ranks it higher in recall.\n"
        '- "too_general": right in its source but stated too broadly. Rewrite it in "lesson" (1-3 sentences) '
        'so that an agent following it would not have failed the CURRENT run, and give a NARROWER "applicability": '
        "keep every word of the current applicability and add the condition that restricts it (e.g. "
        '"numeric sorting tasks" -> "numeric sorting tasks that ask for descending order"). An applicability '
        "that drops a word of the current one, or adds none, is rejected.\n"
        '- "outdated": wrong now. Put the corrected lesson in "lesson" to replace the text, or leave "lesson" '
        "empty to RETIRE the lesson: it is never recalled again.\n"
        "HARD RULE: the CURRENT run is only a test. Every new claim (file, command, number, identifier) must "
        "come from the SOURCE run; quote the source lines you rely on, verbatim, in \"evidence\" (needed for "
        "every verdict that changes the text). Where the source run lacks the data for a sentence you write, end "
        "that sentence with \"(hypothesis, unconfirmed)\". Claims not found in the source run, and unmarked "
        "sentences the source run does not support, are rejected automatically.\n"
        'Answer with one JSON object: {"verdict": "confirmed" | "too_general" | "outdated", '
        '"evidence": ["verbatim quote from the SOURCE run", ...], "lesson": "rewritten lesson, or empty", '
        '"applicability": "when it applies"}'
    )
    user = (
        f"LESSON {lesson.id} ({origin}):\n{lesson.insight}\n"
        f"Applicability: {lesson.applicability or '(not stated)'}\n\n"
        f"{source}"
        f"CURRENT RUN (a test, not a source of facts)\n{_current(record)}\n{_turns(record.turns)}"
    )
    return system, user


def lessons_prompt(record: RunRecord, compilation: str, exemplars: list[Lesson], limit: int) -> tuple[str, str]:
    system = (
        f"You write at most {limit} new lessons from one finished run (forward pass). A lesson is 1-3 sentences "
        "saying what to do and when it applies. Keep only what this run's data confirms; quote commands exactly "
        "as they ran. Do not repeat the existing lessons shown; complement them. From a failed run, write only "
        "the action to avoid. Answer with one JSON object: "
        '{"lessons": [{"title": "...", "insight": "...", "applicability": "..."}]} (an empty list is fine).'
    )
    shown = "\n".join(f"- {x.id}: {x.insight} (applies: {x.applicability})" for x in exemplars) or "(none)"
    user = (
        f"EXISTING LESSONS (revised; use as examples of form, do not repeat):\n{shown}\n\n"
        f"RUN\n{_current(record)}\n\nCOMPILATION\n{compilation or '(none)'}\n\nTURNS\n{_turns(record.turns)}"
    )
    return system, user


def rule_prompt(tool: str, error: str, commands: list[str]) -> tuple[str, str]:
    system = (
        "The same error happened in two runs. Write ONE line (under 160 characters) telling an agent how to "
        "prevent it next time. No preamble, no quotes around it."
    )
    ran = "\n".join(f"- {c}" for c in commands if c) or "(commands not recorded)"
    return system, f"Tool: {tool}\nError (normalised): {error}\nCommands that hit it:\n{ran}"


def counterfactual_prompt(revised: str, applicability: str, record: RunRecord) -> tuple[str, str]:
    system = (
        "Answer with one JSON object {\"prevents\": true | false, \"why\": \"...\"}: would an agent that "
        "followed the revised lesson have avoided this run's failure?"
    )
    user = (
        f"REVISED LESSON: {revised}\nApplicability: {applicability}\n\nFAILED "
        f"RUN\n{_current(record)}\n{_turns(record.turns)}"
    )
    return system, user
