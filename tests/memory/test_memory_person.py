"""MEMORY.md owned by the person: added lines become lessons, unreadable lines stay, edits are pinned."""

from __future__ import annotations

from memory_helpers import Clock, learn_desc, record

from tether.memory.api import list_memory, show_item
from tether.memory.cycle import MemoryCycle
from tether.memory.manifest import HEADER, OLD_HEADERS, read_manifest, render_manifest
from tether.memory.review import accept_proposal, list_proposals, reject_proposal

ADDED = "Spreadsheets: Deduplicate records before merging spreadsheets."


def add_lines(cycle: MemoryCycle, *lines: str, section: str = "## Rules") -> None:
    """Type lines into MEMORY.md just above `section`, as a person in an editor would."""
    path = cycle.store.manifest_path
    text = path.read_text()
    assert section in text
    path.write_text(text.replace(section, "\n".join(lines) + "\n\n" + section, 1))


def test_a_line_a_person_adds_becomes_a_lesson_that_is_recalled(cycle: MemoryCycle, scripted, clock: Clock) -> None:
    learn_desc(cycle, scripted)
    add_lines(cycle, f"- {ADDED}", "Always read the task's order words twice.")
    recall = cycle.read("merge two spreadsheets")
    [x] = recall.lessons
    assert (x.title, x.insight, x.source_run, x.source_outcome) == (
        "Spreadsheets", "Deduplicate records before merging spreadsheets.", "", None)
    assert "Source: written by a person (no source run)" in recall.prompt()
    lesson = cycle.store.load_lesson(x.id)
    assert (lesson.author, lesson.pinned, lesson.created) == ("person", True, clock())
    assert "written by a person in MEMORY.md" in cycle.store.lesson_path(x.id).read_text()
    listed = read_manifest(cycle.store.manifest_path).lessons
    assert listed[x.id] == f"- {ADDED}"  # the person's line lists the lesson, kept as they wrote it
    assert len(listed) == 3  # the line without a bullet is a lesson too
    assert "\nAlways read the task's order words twice.\n" in cycle.store.manifest_path.read_text()
    assert cycle.read("order words").lessons[0].insight == "Always read the task's order words twice."

    model = scripted(compile=["c"], lessons=[{"lessons": []}])  # a later run keeps both
    cycle.after_run(record("run-2", "merge sheets"), model)
    assert len(read_manifest(cycle.store.manifest_path).lessons) == 3
    assert [h.run_id for h in cycle.store.load_lesson(x.id).history] == []


def test_unreadable_and_free_text_lines_are_kept_in_place(cycle: MemoryCycle, scripted, caplog) -> None:
    lesson_id = learn_desc(cycle, scripted)
    path = cycle.store.manifest_path
    broken = "- [L-12345678(lessons/L-12345678.md) — a link with a typo"
    gone = "- [L-00000000](lessons/L-00000000.md) — Gone: a lesson whose file was deleted (success)"
    block = "```\nsort -rn x\n```\n| a | b |\n> a quote\n???"
    text = path.read_text().replace("## Rules\n", f"{broken}\n{gone}\n{block}\n\n## Rules\n")
    path.write_text("My own note at the top.\n\n" + text + "- Never run rm -rf without asking.\n")
    with caplog.at_level("WARNING"):
        recall = cycle.read("rm -rf asking")
    assert "kept but not read" in caplog.text and "L-12345678" in caplog.text
    assert [b["line"] for b in list_memory(cycle.store)["unreadable_lines"]] == [
        n + 1 for n, line in enumerate(path.read_text().splitlines()) if line in (broken, "???")]
    # A line appended at the end (under "## Rules") is a lesson too: rules are learnt, not written.
    assert [x.insight for x in recall.lessons] == ["Never run rm -rf without asking."]
    model = scripted(compile=["c"], lessons=[{"lessons": [{"title": "t", "insight": "Check the file encoding."}]}])
    cycle.after_run(record("run-2", "sort numbers"), model)
    after = path.read_text()
    for line in (broken, gone, "My own note at the top."):  # `gone` is a person's: now the lesson L-00000000
        assert line.replace("(success)", "(person)") in after
    assert block in after and "no words to make a lesson of" in caplog.text
    assert after.index(broken) < after.index("## Rules") < after.index("Never run rm -rf")
    assert after.endswith("\n- Never run rm -rf without asking.\n")  # verbatim, where it was typed
    assert cycle.store.load_lesson("L-00000000").author == "person"
    assert len(read_manifest(path).lessons) == 4 and lesson_id in read_manifest(path).lessons
    (cycle.store.root / "lessons" / f"{lesson_id}.md").unlink()  # a file deleted by hand: its line stays
    with caplog.at_level("WARNING"):
        cycle.read("sort numbers")
    assert f"there is no lessons/{lesson_id}.md" in caplog.text and f"[{lesson_id}]" in path.read_text()


def test_deleting_a_person_lesson_line_forgets_it(cycle: MemoryCycle, scripted) -> None:
    learn_desc(cycle, scripted)
    add_lines(cycle, f"- {ADDED}")
    [x] = cycle.read("merge spreadsheets").lessons
    path = cycle.store.manifest_path
    path.write_text("\n".join(ln for ln in path.read_text().splitlines() if ADDED not in ln) + "\n")
    assert cycle.read("merge spreadsheets").lessons == []


OLD = "Put the largest numbers first when sorting numbers."
NEW = "Put the largest numbers first when the task says descending."
ASC_GOAL = "Sort the numbers in values.txt in ascending order"
SOURCE_QUOTE = "sort -rn data.txt > out.txt"


def edit_line(cycle: MemoryCycle, item_id: str, old: str, new: str) -> None:
    path = cycle.store.manifest_path
    lines = path.read_text().splitlines()
    [n] = [i for i, line in enumerate(lines) if f"[{item_id}]" in line]
    lines[n] = lines[n].replace(old, new)
    path.write_text("\n".join(lines) + "\n")


def revise(cycle: MemoryCycle, scripted, lesson_id: str, answer: dict, run_id: str, outcome: str = "failure"):
    model = scripted(compile=["c"], revise=[answer], lessons=[{"lessons": []}])
    rec = record(run_id, ASC_GOAL, outcome, turns=[(f"Per {lesson_id}, largest first.", "sort -rn v.txt", 0, "")])
    report = cycle.after_run(rec, model, cycle.read(ASC_GOAL))
    [step] = [s for s in report.steps if s.step == "revise"]
    return step


def test_a_pinned_edit_survives_every_verdict_each_only_proposed(cycle: MemoryCycle, scripted, clock: Clock) -> None:
    lesson_id = learn_desc(cycle, scripted)
    edit_line(cycle, lesson_id, OLD, NEW)
    clock.advance(hours=1)
    assert cycle.read(ASC_GOAL).lessons[0].insight == NEW
    assert cycle.store.load_lesson(lesson_id).pinned

    narrower = "Put the largest numbers first when the task asks for descending order."
    answers = [
        ("run-c", "success", {"verdict": "confirmed", "evidence": [SOURCE_QUOTE], "lesson": "Sort numbers somehow."}),
        ("run-t", "failure", {"verdict": "too_general", "evidence": [SOURCE_QUOTE], "lesson": narrower,
                              "applicability": "numeric sorting tasks that ask for descending order"}),
        ("run-o", "failure", {"verdict": "outdated", "evidence": [SOURCE_QUOTE], "lesson": ""}),
    ]
    for run_id, outcome, answer in answers:
        clock.advance(hours=1)
        step = revise(cycle, scripted, lesson_id, answer, run_id, outcome)
        assert (step.status, step.verdict) == ("proposed", answer["verdict"]), step.detail
        lesson = cycle.store.load_lesson(lesson_id)
        assert (lesson.insight, lesson.status, lesson.confirmations) == (NEW, "live", 0)
        assert read_manifest(cycle.store.manifest_path).lessons[lesson_id].endswith(f"{NEW} (success)")

    lesson = cycle.store.load_lesson(lesson_id)
    assert [(h.run_id, h.verdict, h.status) for h in lesson.history[1:]] == [
        ("run-c", "confirmed", "proposed"), ("run-t", "too_general", "proposed"), ("run-o", "outdated", "proposed")]
    assert lesson.history[2].proposed == narrower and lesson.history[1].proposed == ""
    shown = show_item(cycle.store, lesson_id)
    assert [h["status"] for h in shown["revisions"]][1:] == ["proposed"] * 3 and shown["pending"] == 3
    assert [p["run_id"] for p in list_proposals(cycle.store)] == ["run-c", "run-t", "run-o"]

    # The person decides: confirmed accepted (text kept, still pinned), too_general rejected, outdated accepted.
    accept_proposal(cycle.store, lesson_id, "run-c", clock())
    lesson = cycle.store.load_lesson(lesson_id)
    assert (lesson.insight, lesson.confirmations, lesson.pinned) == (NEW, 1, True)
    reject_proposal(cycle.store, lesson_id, "run-t", clock())
    lesson = cycle.store.load_lesson(lesson_id)
    assert lesson.insight == NEW and [h.status for h in lesson.history if h.run_id == "run-t"] == ["rejected"]
    accept_proposal(cycle.store, lesson_id, None, clock())  # the newest pending: run-o
    lesson = cycle.store.load_lesson(lesson_id)
    assert lesson.status == "retired" and lesson.pending == []
    assert lesson_id not in read_manifest(cycle.store.manifest_path).lessons


def test_accepting_a_rewrite_unpins_and_confirmed_keeps_text(cycle: MemoryCycle, scripted, clock: Clock) -> None:
    lesson_id = learn_desc(cycle, scripted)
    step = revise(cycle, scripted, lesson_id, {"verdict": "confirmed", "evidence": [SOURCE_QUOTE],
                                               "lesson": "Put the biggest numbers first."}, "run-1", "success")
    assert step.status == "ok"
    assert cycle.store.load_lesson(lesson_id).insight == OLD  # confirmed keeps the text (not pinned)
    edit_line(cycle, lesson_id, OLD, NEW)
    narrower = "Put the largest numbers first when the task asks for descending order."
    revise(cycle, scripted, lesson_id, {"verdict": "too_general", "evidence": [SOURCE_QUOTE], "lesson": narrower,
                                        "applicability": "numeric sorting tasks in descending order"}, "run-2")
    accept_proposal(cycle.store, lesson_id, "run-2", clock())
    lesson = cycle.store.load_lesson(lesson_id)
    assert (lesson.insight, lesson.applicability, lesson.pinned) == (
        narrower, "numeric sorting tasks in descending order", False)
    step = revise(cycle, scripted, lesson_id, {"verdict": "outdated", "evidence": [SOURCE_QUOTE], "lesson": ""},
                  "run-3")
    assert step.status == "ok" and cycle.store.load_lesson(lesson_id).status == "retired"


def test_a_person_lesson_is_revised_from_its_own_text(cycle: MemoryCycle, scripted, clock: Clock) -> None:
    learn_desc(cycle, scripted)
    add_lines(cycle, "- Ascending sorts: Use sort -n for ascending numeric order.")
    [x] = [x for x in cycle.read(ASC_GOAL).lessons if x.source_run == ""]
    step = revise(cycle, scripted, x.id, {"verdict": "too_general", "evidence": ["Use sort -n"],
                                          "lesson": "Use sort -n for ascending numeric order of plain integers.",
                                          "applicability": "ascending sorts of plain integers"}, "run-p")
    assert step.status == "proposed", step.detail
    assert cycle.store.load_lesson(x.id).insight == "Use sort -n for ascending numeric order."
    assert "- Ascending sorts: Use sort -n for ascending numeric order.\n" in cycle.store.manifest_path.read_text()
    accept_proposal(cycle.store, x.id, "run-p", clock())  # accepted: the person's line shows the new text
    line = read_manifest(cycle.store.manifest_path).lessons[x.id]
    assert line == f"- [{x.id}](lessons/{x.id}.md) — Ascending sorts: Use sort -n for ascending numeric order of " \
                   "plain integers. (person)"
    assert [y.id for y in cycle.read("ascending plain integers").lessons if y.id == x.id] == [x.id]


def test_a_new_user_finds_memory_md_and_may_write_it_from_scratch(tmp_path, config, clock: Clock) -> None:
    cycle = MemoryCycle(tmp_path / "memory", config, clock=clock)
    cycle.read("anything")
    path = cycle.store.manifest_path
    assert "## Lessons" in path.read_text() and "Add a line" in path.read_text()  # the page to edit exists
    path.write_text("# My notes\n\n- Use uv, not pip, to install packages.\n* Run the tests before committing.\n")
    recall = cycle.read("install packages with pip")
    assert [x.insight for x in recall.lessons] == ["Use uv, not pip, to install packages."]
    text = path.read_text()
    assert text == "# My notes\n\n- Use uv, not pip, to install packages.\n* Run the tests before committing.\n"
    assert len(read_manifest(path).lessons) == 2


def test_render_keeps_the_person_s_lines_and_places_new_items_in_their_section(tmp_path) -> None:
    path = tmp_path / "MEMORY.md"
    item = "- [L-aaaaaaaa](lessons/L-aaaaaaaa.md) — T: insight (success)"
    path.write_text(f"{OLD_HEADERS[0]}\n## Lessons\n\n{item}\nmy note\n\n## Rules\n\n<!-- a comment -->\n")
    m = read_manifest(path)
    assert m.added == [(len(OLD_HEADERS[0].splitlines()) + 4, "my note")]
    m.lessons["L-bbbbbbbb"] = "- [L-bbbbbbbb](lessons/L-bbbbbbbb.md) — U: new (failure)"
    m.rules["rule-1"] = "- [rule-1](rules/rule-1.md) — r (confidence 0.40)"
    text = render_manifest(m)
    assert text.startswith(HEADER)  # a header an earlier version wrote is replaced; a person's own is kept
    body = text[len(HEADER):].splitlines()
    assert body == ["", "## Lessons", "", item, "my note", m.lessons["L-bbbbbbbb"], "", "## Rules", "",
                    m.rules["rule-1"], "<!-- a comment -->"]


def test_a_line_written_in_the_item_form_with_a_new_id_becomes_that_lesson(cycle: MemoryCycle, scripted) -> None:
    learn_desc(cycle, scripted)
    add_lines(cycle, "- [L-mine](lessons/L-mine.md) — Encoding: Check the file encoding before parsing CSV.",
              "- [../etc](lessons/x.md) — a path is never an id")
    recall = cycle.read("parse the CSV file encoding")
    [x] = [x for x in recall.lessons if x.id == "L-mine"]
    assert (x.title, x.insight, x.source_run) == ("Encoding", "Check the file encoding before parsing CSV.", "")
    assert cycle.store.load_lesson("L-mine").author == "person"
    listed = read_manifest(cycle.store.manifest_path).lessons
    assert listed["L-mine"].endswith("Check the file encoding before parsing CSV. (person)")
    assert "../etc" in listed and not (cycle.store.root / "etc.md").exists()  # kept, not read


def test_a_line_added_while_a_run_writes_is_kept_and_adopted_next(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    store = cycle.store
    with store.session():  # a run holds the lock and rewrites a lesson while the person types a line
        add_lines(cycle, f"- {ADDED}")
        lesson = store.load_lesson(lesson_id)
        store.save_lesson(lesson.model_copy(update={"insight": "Put the largest numbers first, checked."}))
        assert f"- {ADDED}" in store.manifest_path.read_text()  # the store's write kept it
    assert [x.source_run for x in cycle.read("merge spreadsheets").lessons] == [""]


def test_a_hand_edited_lesson_file_is_pinned_and_revisions_only_propose(cycle: MemoryCycle, scripted,
                                                                         clock: Clock) -> None:
    lesson_id = learn_desc(cycle, scripted)
    store = cycle.store
    assert cycle.read(ASC_GOAL).lesson_ids == [lesson_id]  # the index is open in this process from here on
    clock.advance(hours=1)
    path = store.lesson_path(lesson_id)
    path.write_text(path.read_text().replace(OLD, NEW))  # in an editor, between two recalls
    assert cycle.read(ASC_GOAL).lessons[0].insight == NEW
    lesson = store.load_lesson(lesson_id)
    assert lesson.pinned and [(h.verdict, h.before, h.at) for h in lesson.history] == [("edited", OLD, clock())]
    assert read_manifest(store.manifest_path).lessons[lesson_id].endswith(f"{NEW} (success)")
    assert "edited by a person in lessons/" in show_item(store, lesson_id)["revisions"][0]["reason"]

    clock.advance(hours=1)
    outdated = {"verdict": "outdated", "evidence": [SOURCE_QUOTE], "lesson": "Sort numbers somehow else."}
    step = revise(cycle, scripted, lesson_id, outdated, "run-o", "failure")
    assert (step.status, step.verdict) == ("proposed", "outdated"), step.detail
    lesson = store.load_lesson(lesson_id)
    assert lesson.insight == NEW and lesson.pending[0].proposed == "Sort numbers somehow else."
    assert len([h for h in lesson.history if h.verdict == "edited"]) == 1, "the store's own write is no edit"


def test_rewording_a_person_s_own_line_updates_that_lesson_with_a_history_entry(cycle: MemoryCycle, scripted,
                                                                                clock: Clock) -> None:
    learn_desc(cycle, scripted)
    add_lines(cycle, f"- {ADDED}")
    [x] = cycle.read("merge two spreadsheets").lessons
    model = scripted(compile=["c"], revise=[{"verdict": "confirmed", "evidence": [SOURCE_QUOTE], "lesson": ""}],
                     lessons=[{"lessons": []}])
    cycle.after_run(record("run-c", "merge sheets", turns=[(f"Per {x.id}, dedup.", "sort -u a b", 0, "")]), model,
                    cycle.read("merge two spreadsheets"))
    assert [h.run_id for h in cycle.store.load_lesson(x.id).history] == ["run-c"]
    clock.advance(hours=1)
    path = cycle.store.manifest_path
    path.write_text(path.read_text().replace(ADDED, "Spreadsheets: Deduplicate rows by their key before merging."))

    [y] = cycle.read("merge two spreadsheets").lessons
    assert y.insight == "Deduplicate rows by their key before merging." and y.title == "Spreadsheets"
    lessons = [v for v in cycle.store.lessons() if v.author == "person"]
    assert [v.id for v in lessons] == [y.id], "one lesson, not a second one beside the old"
    lesson = lessons[0]
    assert [(h.run_id, h.verdict) for h in lesson.history] == [("run-c", "confirmed"), ("", "edited")]
    assert lesson.history[-1].status == "accepted"
    assert lesson.history[-1].before == "Deduplicate records before merging spreadsheets."
    assert x.id in lesson.history[-1].reason and lesson.pinned and lesson.created < clock()
    assert read_manifest(path).lessons[y.id] == "- Spreadsheets: Deduplicate rows by their key before merging."

    add_lines(cycle, "- Spreadsheets: Sort the rows by date.")  # a new line elsewhere is a new lesson
    cycle.read("sort rows by date")
    assert len([v for v in cycle.store.lessons() if v.author == "person"]) == 2
