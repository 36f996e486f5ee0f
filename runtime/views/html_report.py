"""`tether report`: one self-contained HTML page of a run, safe to open on any run.

Sections: header (status, goal, cost, what to do next, warnings), the plan as
an SVG DAG (runtime.views.dag_svg), the steps, a timeline of commands (verdict,
approval, exit code; output in a collapsible <details>), the R01–R18 gate
table, the workspace changes and their content diff (views.changes_html),
the model's summary, lessons used with a word diff of each revision,
the shadow audit. No script, no external asset; a Content-Security-Policy
forbids any. Every text from the run passes `html_text()` (control
characters made visible, then HTML-escaped with quotes), and no run text is
put in a URL, an event handler, <script> or <style>.
"""

from __future__ import annotations

import difflib
import re
import time
from typing import Any

from tether.runtime.views.changes_html import CSS as CHANGES_CSS
from tether.runtime.views.changes_html import changes_html
from tether.runtime.views.console import PROOF
from tether.runtime.views.dag_svg import FILL, dag_svg
from tether.runtime.views.run_view import CommandView, RunView
from tether.runtime.views.text import html_text as h

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
OUTPUT_CHARS = 20_000
"""Characters of one command's output put in the page (head and tail beyond that)."""
STATUS_COLOR = {**FILL, "success": "#2e7d32", "interrupted": "#ef6c00", "pass": "#2e7d32", "fail": "#c62828",
                "n/a": "#9e9e9e", "allow": "#2e7d32", "ask": "#f9a825", "deny": "#c62828", "needs-review": "#f9a825",
                "self-verified": "#f9a825"}

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2327;background:#f6f7f9}
main{max-width:1200px;margin:0 auto;padding:18px 24px 60px}
h1{font-size:20px;margin:0 0 6px}
h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #d0d5db;padding-bottom:4px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;
color:#fff;font-size:12px;font-weight:600;vertical-align:middle}
.meta{color:#51606d}
.warn{background:#fff4e5;border:1px solid #f0b46c;padding:6px 10px;border-radius:4px;margin:6px 0}
.next code{background:#e8f0fe;padding:2px 6px;border-radius:4px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid #dde1e6;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
td.mono,code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;word-break:break-all;background:#1e2329;color:#e6e6e6;
padding:8px;border-radius:4px;max-height:420px;overflow:auto;margin:6px 0}
details{background:#fff;border:1px solid #dde1e6;border-radius:4px;margin:4px 0}
details>summary{cursor:pointer;padding:5px 8px;list-style-position:inside}
details>div{padding:4px 10px 8px}
summary code{white-space:pre-wrap;word-break:break-all}
.svgbox{background:#fff;border:1px solid #dde1e6;border-radius:4px;overflow:auto;padding:4px}
svg.dag text{fill:#fff;font:12px system-ui,sans-serif;text-anchor:middle}
svg.dag text.id{font-weight:600}
svg.dag .edge{fill:none;stroke-width:1.6}
svg.dag .edge.dep{stroke:#607d8b}
svg.dag .head.dep{fill:#607d8b}
svg.dag .edge.cascade{stroke:#c62828;stroke-dasharray:5 4}
svg.dag .head.cascade{fill:#c62828}
svg.dag .edge.repair{stroke:#8e24aa;stroke-dasharray:2 3}
svg.dag .head.repair{fill:#8e24aa}
svg.dag .was-blocked rect{stroke:#c62828;stroke-width:3;stroke-dasharray:6 3}
.legend span{display:inline-block;margin-right:12px}
.legend i{display:inline-block;width:12px;height:12px;border-radius:3px;margin-right:4px;vertical-align:-1px}
del{background:#ffd7d5;text-decoration:line-through}
ins{background:#ccf2d1;text-decoration:none}
.diff{background:#fff;border:1px solid #dde1e6;padding:6px 8px;
white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12.5px}
"""


def _badge(status: object) -> str:
    color = STATUS_COLOR.get(str(status), "#455a64")
    return f'<span class="badge" style="background:{color}">{h(status)}</span>'


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "?"


def _clip(text: str) -> str:
    if len(text) <= OUTPUT_CHARS:
        return text
    half = OUTPUT_CHARS // 2
    return f"{text[:half]}\n… {len(text) - OUTPUT_CHARS} characters left out …\n{text[-half:]}"


def word_diff(before: str, after: str) -> str:
    """`before` → `after` word by word: removed words in <del>, added in <ins>, all escaped."""
    a, b = re.split(r"(\s+)", before), re.split(r"(\s+)", after)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(h("".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(f"<del>{h(''.join(a[i1:i2]))}</del>")
        if j2 > j1:
            out.append(f"<ins>{h(''.join(b[j1:j2]))}</ins>")
    return "".join(out)


def _header(v: RunView) -> str:
    c = v.cost
    cost = (
        f"{h(c.get('model_calls') if c.get('model_calls') is not None else '?')} model call(s), "
        f"{h(c.get('tokens') if c.get('tokens') is not None else '?')} token(s), {h(c.get('commands'))} command(s) "
        f"({h(c.get('exec_s'))} s in the sandbox), wall "
        f"{h(round(v.duration_s, 1) if v.duration_s is not None else '?')} s"
        + (f", {h(c['memory_calls'])} memory call(s)" if c.get("memory_calls") else "")
    )
    parts = [f"<h1>Run {h(v.run_id)} {_badge(v.status)}</h1>",
             f"<p><b>Goal:</b> {h(v.goal)}</p>",
             f'<p class="meta">{"<b>Reason:</b> " + h(v.reason) + "<br>" if v.reason else ""}'
             f"workspace {h(v.workspace)} · model {h(v.model)} · started {h(_when(v.started_at))}"
             f"{' · shadow run' if v.shadow else ''}<br>cost: {cost}</p>"]
    parts += [f'<div class="warn">warning: {h(w)}</div>' for w in v.warnings]
    if v.next:
        parts.append('<p class="next"><b>Next:</b> ' + " or ".join(f"<code>{h(n)}</code>" for n in v.next) + "</p>")
    return "".join(parts)


def _plan(v: RunView) -> str:
    legend = "".join(f'<span><i style="background:{c}"></i>{s}</span>' for s, c in FILL.items())
    legend += ('<span>red dashed edge/outline: blocked by a failed step</span>'
               '<span>purple dotted edge: replaced by a repair step</span>')
    rows = "".join(
        f"<tr><td class=mono>{h(s.id)}</td><td>{_badge(s.status)}</td><td class=mono>{h(', '.join(s.depends_on))}</td>"
        f"<td>{h(' → '.join(s.history))}{' (blocked by ' + h(s.blocked_by) + ')' if s.blocked_by else ''}"
        f"{' (replaced by ' + h(s.replaced_by) + ')' if s.replaced_by else ''}</td>"
        f"<td>{h(s.description)}</td><td class=mono>{h(s.verify)}</td><td>{h(s.reason or s.summary)}</td></tr>"
        for s in v.steps)
    rejected = "".join(f'<div class="warn">plan rejected: {h(e)}</div>' for e in v.plan_rejections)
    rejected += "".join(f'<details><summary>model answer not used ({h(a["site"])} {h(a.get("step") or "")}): '
                        f'{h(a["problem"])}</summary><div><pre>{h(a.get("raw", ""))}</pre></div></details>'
                        for a in v.answers)
    return (f'<h2>Plan</h2><div class="svgbox">{dag_svg(v.steps)}</div><p class="legend">{legend}</p>{rejected}'
            "<table><tr><th>step</th><th>status</th><th>depends on</th><th>history</th><th>description</th>"
            f"<th>verify</th><th>reason / summary</th></tr>{rows}</table>")


def _command(c: CommandView, t0: float | None) -> str:
    at = f"+{c.ts - t0:.1f}s" if c.ts and t0 else ""
    verdict = _badge(c.decision or "-") + (
        f" enforced {_badge(c.enforced)}" if c.enforced and c.enforced != c.decision else ""
    )
    color = STATUS_COLOR["pass" if c.exit_code == 0 else "fail"]
    exit_code = (
        "" if c.exit_code is None else f' · exit <span class="badge" style="background:{color}">{h(c.exit_code)}</span>'
    )
    body = [
        f"<p>step <code>{h(c.step)}</code> · {h(c.tool)} · cwd <code>{h(c.cwd)}</code> · state {h(c.state)}"
        f"{' · timed out' if c.timed_out else ''}"
        f"{' · ' + h(round(c.duration_s, 2)) + ' s' if c.duration_s is not None else ''}</p>",
        f"<pre>{h(c.command)}</pre>",
    ]
    if c.verdict_reason or c.rules:
        body.append(f"<p>guardian: {h(c.verdict_reason)}{' · rules ' + h(', '.join(c.rules)) if c.rules else ''}</p>")
    if c.changed:
        body.append(f"<p>changed: <code>{h(', '.join(c.changed))}</code></p>")
    if c.network:
        body.append(f"<p>network: {h('; '.join(c.network[:20]))}</p>")
    if c.state == "ran":
        body.append(f"<p>output:</p><pre>{h(_clip(c.output)) or '(none)'}</pre>")
    return (
        f"<details><summary>{h(at)} <code>{h(c.id)}</code> "
        f"{verdict}{' · ' + h(c.approval) if c.approval else ''}{exit_code} "
        f"<code>{h(c.command[:160])}</code></summary><div>{''.join(body)}</div></details>"
    )


def _gate(v: RunView) -> str:
    if not v.gate:
        return "<h2>Completion gate</h2><p>The gate was not reached.</p>"
    rows = "".join(
        f"<tr><td class=mono>{h(r.get('id'))}</td><td>{h(r.get('title', ''))}</td><td>{_badge(r.get('status'))}</td>"
        f"<td>{h(r.get('evidence', ''))}</td></tr>"
        for r in v.gate.get("results", [])
    )
    review = "".join(f'<div class="warn">needs review: {h(item)}</div>' for item in v.gate.get("review") or []
                     if not str(item).startswith("code that runs on your machine: "))
    checks = "".join(
        f"<tr><td class=mono>{h(c.get('command', ''))}</td><td>{h(c.get('source', ''))}</td>"
        f"<td>{h(c.get('kind', ''))}</td>"
        f"<td>{h('-' if c.get('before_exit') is None else c['before_exit'])}</td>"
        f"<td>{h('-' if c.get('after_exit') is None else c['after_exit'])}</td>"
        f"<td>{h(c.get('skipped') or c.get('reason') or '')}</td></tr>"
        for c in v.gate.get("checks") or []
        if isinstance(c, dict)
    )
    if checks:
        checks = (
            "<h3>Checks the gate re-ran itself</h3><p class=meta>in a fresh shell on the final workspace (after) "
            "and on a copy of the workspace before the run (before)</p><table><tr><th>command</th><th>asked by</th>"
            f"<th>kind</th><th>before</th><th>after</th><th>note</th></tr>{checks}</table>"
        )
    proof = PROOF.get(str(v.gate.get("proof") or "none"), "nothing")
    detail = str(v.gate.get("proof_detail") or "")
    review = f"<p class=meta>proof: {h(proof)}" + (f" ({h(detail)})" if detail else "") + "</p>" + review
    project = "".join(
        f"<tr><td class=mono>{h(t.get('id', ''))}</td><td>{h(t.get('before') or '-')}</td>"
        f"<td>{h(t.get('after') or '-')}</td></tr>"
        for t in (v.gate.get("project") or [])[:200]
        if isinstance(t, dict)
    )
    if project:
        checks += ("<h3>The project's own tests</h3><p class=meta>tests that existed before the run, per test id</p>"
                   f"<table><tr><th>test</th><th>before</th><th>after</th></tr>{project}</table>")
    if v.tests_diff:
        review += (
            "<details><summary>changes to test files "
            f"(tests.diff)</summary><div><pre>{h(v.tests_diff)}</pre></div></details>"
        )
    return (f"<h2>Completion gate {_badge('pass' if v.gate.get('passed') else 'fail')}</h2>{review}"
            f"<table><tr><th>id</th><th>requirement</th><th>status</th><th>evidence</th></tr>{rows}</table>{checks}")


def _summary(v: RunView) -> str:
    if not v.summary:
        return ""
    s = v.summary
    claims = "".join(
        f"<li>{h(c.get('text', ''))} — <code>{h(c.get('command', ''))}</code></li>"
        for c in s.get("claims", [])
        if isinstance(c, dict)
    )
    return (
        f"<h2>Summary (the model's)</h2><p>{h(s.get('text', ''))}</p>"
        "<p class=meta>files: "
        f"<code>{h(', '.join(map(str, s.get('files', []))))}</code></p>{'<ul>' + claims + '</ul>' if claims else ''}"
    )


def _lessons(v: RunView) -> str:
    if not v.lessons and not v.lessons_written and not v.memory_error:
        return "<h2>Lessons</h2><p>No lesson was used or written.</p>"
    parts = ["<h2>Lessons</h2>"]
    for x in v.lessons:
        parts.append(
            f"<h3><code>{h(x['id'])}</code> "
            f"{h(x.get('title') or '(lesson file missing)')}</h3><p>{h(x.get('insight', ''))}</p>"
        )
        for r in x["revisions"]:
            parts.append(
                f"<p>revision: verdict {h(r['verdict'] or '?')} · "
                f"{_badge(r['status'])}{' · ' + h(r['reason']) if r['reason'] else ''}</p>"
                f'<div class="diff">{word_diff(r["before"], r["after"])}</div>'
            )
            parts += [f"<blockquote>{h(q)}</blockquote>" for q in r.get("evidence", [])]
        if not x["revisions"]:
            parts.append("<p class=meta>not revised by this run</p>")
    if v.lessons_written:
        parts.append(f"<p>written by this run: <code>{h(', '.join(v.lessons_written))}</code></p>")
    if v.memory_error:
        parts.append(f'<div class="warn">memory cycle failed: {h(v.memory_error)}</div>')
    return "".join(parts)


def _shadow(audit: dict[str, Any] | None) -> str:
    if not audit:
        return ""
    rows = "".join(
        f"<tr><td class=mono>{h(k)}</td><td>{h(a.get('denies'))}</td><td>{h(a.get('asks'))}</td>"
        f"<td>{h(a.get('auto_approvals'))}</td>"
        f"<td>{h(a.get('compared'))}</td><td>{h(a.get('agreement'))}</td></tr>"
        for k, a in audit.get("kinds", {}).items()
    )
    return (
        f"<h2>Shadow audit</h2><p>{h(audit.get('commands'))} command(s): {h(audit.get('allows'))} allow, "
        f"{h(audit.get('denies'))} deny, "
        f"{h(audit.get('asks'))} ask, {h(audit.get('auto_approvals'))} the ledger would auto-approve; agreement with "
        "the person "
        f"{h(audit.get('agreement'))} over {h(audit.get('compared'))} answered ask(s)</p>"
        f"<table><tr><th>kind</th><th>denies</th><th>asks</th><th>auto-approvals</th><th>answered</th><th>agreement</th></tr>{rows}</table>"
    )


def render_html(v: RunView) -> str:
    """The whole page."""
    t0 = v.started_at
    timeline = "".join(_command(c, t0) for c in v.commands) or "<p>No command was proposed.</p>"
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>tether run {h(v.run_id)}</title><style>{CSS}{CHANGES_CSS}</style></head><body><main>"
        f"{_header(v)}{_plan(v)}<h2>Commands "
        f"({len(v.commands)})</h2>{timeline}{_gate(v)}{changes_html(v.changes, v.status)}{_summary(v)}{_lessons(v)}"
        f"{_shadow(v.shadow_audit)}"
        "</main></body></html>\n"
    )
