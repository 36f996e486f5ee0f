"""A revision that makes a lesson say what another says merges them; titles follow the text they describe."""

from __future__ import annotations

from memory_helpers import Clock, learn_desc, record

from tether.memory.cycle import MemoryCycle
from tether.memory.forget import forget_run
from tether.memory.manifest import read_manifest
from tether.memory.merge import derived_title, same_text

DESC_TEXT = "Put the largest numbers first when sorting numbers."
TOP_RUN = dict(run_id="run-top", goal="List the numbers in top.txt from largest to smallest",
               turns=[("Largest numbers must come first.", "sort -rn top.txt > out.txt", 0, ""),
                      ("Look at the head.", "head -3 out.txt", 0, "9\n5\n1")])
TOP_LESSON = {"lessons": [{"title": "Look at the head", "insight": "Look at the head of the output after sorting.",
                           "applicability": "sorting tasks"}]}


def learn_top(cycle: MemoryCycle, scripted, clock: Clock) -> str:
    clock.advance(hours=1)
    report = cycle.after_run(record(**TOP_RUN), scripted(compile=["c"], lessons=[TOP_LESSON]))
    [lesson_id] = report.new_lessons
    return lesson_id


def revise_top(cycle: MemoryCycle, scripted, clock: Clock, top: str, text: str, run_id: str = "run-top-2"):
    clock.advance(hours=1)
    verdict = {"verdict": "outdated", "evidence": ["Largest numbers must come first."], "lesson": text,
               "applicability": "numeric sorting tasks"}
    run = record(run_id, "Sort the numbers in top.txt from largest to smallest",
                 turns=[(f"Per {top}, sort.", "sort -rn top.txt", 0, "9")])
    return cycle.after_run(run, scripted(compile=["c"], revise=[verdict], lessons=[{"lessons": []}]),
                           cycle.read(run.goal))


def test_a_revision_that_repeats_another_lesson_merges_it_into_the_older(cycle: MemoryCycle, scripted,
                                                                          clock: Clock) -> None:
    desc = learn_desc(cycle, scripted)
    top = learn_top(cycle, scripted, clock)
    report = revise_top(cycle, scripted, clock, top, "Put the largest numbers first when sorting the numbers.")
    [step] = [s for s in report.steps if s.step == "revise"]
    assert step.status == "ok" and f"merged {top}" in step.detail
    older, newer = cycle.store.load_lesson(desc), cycle.store.load_lesson(top)
    assert (older.status, newer.status) == ("live", "retired")
    assert older.insight == DESC_TEXT
    assert newer.history[-1].verdict == "merged" and f"merged into {desc}" in newer.history[-1].reason
    assert [h.verdict for h in newer.history] == ["outdated", "merged"]  # its history is kept in its file
    assert older.history[-1].verdict == "merged" and top in older.history[-1].reason
    assert older.confirmations == 0 and older.revision_count == 0
    assert set(read_manifest(cycle.store.manifest_path).lessons) == {desc}
    assert cycle.read("Sort the numbers in top.txt from largest to smallest").lesson_ids == [desc]
    lessons = [x for x in cycle.store.lessons() if x.status == "live"]
    assert len({x.insight for x in lessons}) == len(lessons)

    forget_run(cycle.store, "run-top-2", clock())  # forgetting the run that merged them undoes the merge
    assert cycle.store.load_lesson(top).status == "live"
    assert set(read_manifest(cycle.store.manifest_path).lessons) == {desc, top}


def test_a_rewritten_text_gets_a_title_that_describes_it(cycle: MemoryCycle, scripted, clock: Clock) -> None:
    learn_desc(cycle, scripted)
    top = learn_top(cycle, scripted, clock)
    report = revise_top(cycle, scripted, clock, top, "Largest numbers must come first, so read the first lines "
                                                     "of the result once sorted.")
    assert [s.status for s in report.steps if s.step == "revise"] == ["ok"], report.steps
    lesson = cycle.store.load_lesson(top)
    assert lesson.status == "live"
    assert lesson.title == "Largest numbers must come first, so read the first lines of…"
    assert "Look at the head" not in cycle.store.manifest_path.read_text()  # a title cut from the text is not shown


def test_a_person_s_lesson_is_never_merged_automatically(cycle: MemoryCycle, scripted, clock: Clock) -> None:
    top = learn_top(cycle, scripted, clock)
    path = cycle.store.manifest_path
    text = path.read_text()
    path.write_text(text.replace("## Rules", f"- Order: {DESC_TEXT}\n\n## Rules", 1))
    cycle.read("sorting numbers")  # the person's line becomes a (pinned) lesson
    report = revise_top(cycle, scripted, clock, top, DESC_TEXT)
    [step] = [s for s in report.steps if s.step == "revise"]
    assert "not merged" in step.detail
    live = [x for x in cycle.store.lessons() if x.status == "live"]
    assert len(live) == 2 and {x.author for x in live} == {"agent", "person"}


def test_negations_and_small_words_keep_two_texts_apart() -> None:
    assert same_text("Use pip to install.", "use pip to install", 0.9)
    assert not same_text("Use pip to install.", "Do not use pip to install.", 0.9)
    assert derived_title("Short one. Then more.") == "Short one. Then more."
    assert derived_title("A first sentence. " + "Then a much longer one " * 3) == "A first sentence…"


def test_gc_merges_near_duplicates_an_old_home_already_holds(tmp_path, scripted, clock: Clock) -> None:
    """A home from before merging: three live lessons share a text (two agent's, one a person's elsewhere)."""
    from tether.memory.lesson import Lesson
    from tether.runtime.config import load_config
    from tether.runtime.run.gc import gc_home

    config = load_config(tmp_path / "home", environ={}, cwd=tmp_path)
    cycle = MemoryCycle(config.memory_dir, config.memory, clock=clock)
    desc = learn_desc(cycle, scripted)
    store = cycle.store
    same = "Put the largest numbers first when sorting the numbers."  # near-equal to the desc lesson's text
    person = "Check the encoding of the input file before reading it."
    with store.session():
        store.save_lesson(Lesson(id="L-dup00001", title="Largest first", source_run="run-desc", created=clock.now,
                                 source_outcome="success", insight=same), new=True)
        store.save_lesson(Lesson(id="L-enc00001", title="Encoding", source_run="run-desc", created=clock.now,
                                 source_outcome="success", insight=person), new=True)
        store.save_lesson(Lesson(id="P-enc00002", title="Encoding", source_run="", author="person",
                                 created=clock.now, insight=person), new=True)
    dry = gc_home(config, dry_run=True)
    assert dry.lessons_merged == {"L-dup00001": desc}
    assert dry.lessons_left == [["L-enc00001", "P-enc00002"]]
    assert store.load_lesson("L-dup00001").status == "live"  # a dry run writes nothing

    report = gc_home(config)
    assert report.lessons_merged == {"L-dup00001": desc} and report.lessons_left == [["L-enc00001", "P-enc00002"]]
    gone, kept = store.load_lesson("L-dup00001"), store.load_lesson(desc)
    assert gone.status == "retired" and gone.history[-1].verdict == "merged" and desc in gone.history[-1].reason
    assert kept.status == "live" and "L-dup00001" in kept.history[-1].reason
    assert "L-dup00001" not in read_manifest(store.manifest_path).lessons
    assert {store.load_lesson(i).status for i in ("L-enc00001", "P-enc00002")} == {"live"}
    assert gc_home(config).lessons_merged == {}, "a second gc finds nothing left to merge"
