"""Valid bash the parser cannot read: judged in parts, and at least `ask`.

Parts:
    PARSE_ERRORS: the failures that mean "bashlex (or a rewrite) cannot read
        this text", as opposed to a budget, depth or internal error.
    bash_accepts: whether `bash -n` accepts the text (nothing is run).
    parts: the pieces worth reading on their own (below).
    judge_parts: the verdict for such a line: every part that can be read
        (each line and `;`/`&&`/`||` item, each run of words between
        `; & | ( )` and its tail from a known program name, every `$(..)` or
        backtick body) is analysed as usual; GUARD-002 (ask, registered in
        `rules_fs`) names what could not be read. A deny in any part stays a
        deny; nothing here can return `allow`.

A line bash itself rejects stays GUARD-FAIL (deny): bash would not run it.
"""

from __future__ import annotations

import re

from tether.guardian.bashlex_load import bashlex

PARSE_ERRORS = (bashlex.errors.ParsingError, NotImplementedError)

_SPLIT = re.compile(r"\n|;|&&|\|\|")
_DANGER = frozenset({"rm", "dd", "mv", "cp", "chmod", "chown", "shred", "truncate", "tee", "sh", "bash",
                     "zsh", "dash", "eval", "source", ".", "exec", "curl", "wget", "nc", "python",
                     "python3", "perl", "ruby", "node", "find", "xargs", "mkfs", "ln", "install"})
_SUBST = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")


def bash_accepts(text: str) -> bool:
    """`bash -n` (parse only, no startup files, empty environment) accepts `text` silently."""
    import os
    import shutil
    import subprocess  # only on this rare path: the hook's start-up does not pay for it

    bash = shutil.which("bash") or ("/bin/bash" if os.path.exists("/bin/bash") else None)
    if bash is None or "\x00" in text or len(text) > 100_000:
        return False
    try:
        done = subprocess.run([bash, "--norc", "--noprofile", "-n", "-c", text], env={"PATH": "/usr/bin:/bin"},
                              capture_output=True, timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and not done.stderr.strip()  # `[[ a | b ]]`: an error, yet status 0


def parts(text: str) -> list[str]:
    """Pieces of the text worth reading on their own: every line and list item, every
    run of words between `; & | ( )` (and its tail from each program name the rules
    know: `b) rm -rf /` -> `rm -rf /`), and every `$(..)` or backtick body."""
    import shlex

    from tether.guardian import program_pass
    from tether.guardian.rules import has_rules

    out = [p.strip() for p in _SPLIT.split(text)]
    out += [a or b for a, b in _SUBST.findall(text)]
    lexer = shlex.shlex(text, posix=False, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = text.split()
    names = program_pass.table_names()
    run: list[str] = []
    for tok in [*tokens, ";"]:
        if tok and set(tok) <= set(";&|()"):
            out.append(" ".join(run))
            out += [" ".join(run[k:]) for k in range(1, len(run))
                    if (w := run[k].rsplit("/", 1)[-1]) in _DANGER or has_rules(w) or w in names]
            run = []
        else:
            run.append(tok)
    seen: list[str] = []
    for p in out:
        if p and p not in seen and p != text:
            seen.append(p)
    return seen[:64]


def judge_parts(analyser: object, text: str, cause: str) -> None:
    """Analyse every readable part of `text` with `analyser`, then add GUARD-002."""
    for part in parts(text):
        try:
            analyser.run(part, 0)  # type: ignore[attr-defined]
        except PARSE_ERRORS:
            continue
    analyser._hit("GUARD-002", "", cause)  # type: ignore[attr-defined]
