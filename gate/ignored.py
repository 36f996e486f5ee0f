"""Files the run wrote that its own ignore rules hide from a commit (a .gitignore line added for the feature file).

The working tree passes every check, but after `git add -A`, a commit and a
clone the file is gone. `hidden_by_ignores()` reads the ignore files the run
added or changed (`.gitignore` at any depth, `.git/info/exclude`), takes the
lines it added, and matches them, git's way, against the new files the run
wrote: a pattern without a slash matches a name at any depth, one with a
slash is anchored to its file's folder, a trailing slash matches folders
only, `*`/`?`/`[...]` stay within one name and `**` spans folders. Negations
(`!x`) are left out, which errs towards review. Without git on the host (the
workspace's git config could run code), tracked files are not told apart:
only files that did not exist before are judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import read_rel
from tether.gate.evidence import is_generated

IGNORE_CAP = 262_144
MAX_NAMED = 5


def _regex(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out, i = out + "/.*", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif ch == "*":
            out, i = out + "[^/]*", i + 1
        elif ch == "?":
            out, i = out + "[^/]", i + 1
        elif ch == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1:end].replace("\\", "\\\\")
            out, i = out + "[" + ("^" + body[1:] if body.startswith("!") else body) + "]", end + 1
        elif ch == "\\" and i + 1 < len(pattern):
            out, i = out + re.escape(pattern[i + 1]), i + 2
        else:
            out, i = out + re.escape(ch), i + 1
    return re.compile(out + r"\Z")


def _patterns(text: str) -> list[tuple[re.Pattern[str], bool, bool]]:
    """(regex, anchored, folders only) per ignore line; comments, blanks and negations left out."""
    out = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line or line.startswith(("#", "!")):
            continue
        folders = line.endswith("/")
        line = line.rstrip("/")
        anchored = "/" in line
        if line:
            out.append((_regex(line.lstrip("/")), anchored, folders))
    return out


def _ignored(rel: str, patterns: list[tuple[re.Pattern[str], bool, bool]]) -> bool:
    parts = rel.split("/")
    for n in range(1, len(parts) + 1):
        here, is_dir = "/".join(parts[:n]), n < len(parts)
        for regex, anchored, folders in patterns:
            if folders and not is_dir:
                continue
            if regex.match(here if anchored else parts[n - 1]):
                return True
    return False


def _text(root: Path | None, rel: str) -> str:
    return (read_rel(root, rel, IGNORE_CAP) or b"").decode("utf-8", "replace") if root is not None else ""


def hidden_by_ignores(start: dict[str, FileState], end: dict[str, FileState], workspace: Path,
                      snapshot: Path | None, written: Iterable[str], named: Iterable[str]) -> list[str]:
    """Review lines for new files that ignore lines the run added hide from a commit. When the goal names an ignore
    file (`add build/ to .gitignore`), only the files the goal names are judged."""
    named = list(named)
    written = sorted(set(written))
    ignores = [r for r in written if r.rsplit("/", 1)[-1] == ".gitignore" or r == ".git/info/exclude"]
    asked = any(n.rsplit("/", 1)[-1] in (".gitignore", "exclude") for n in named)
    out = []
    for ign in ignores:
        old = set(_text(snapshot, ign).splitlines()) if ign in start else set()
        added = "\n".join(line for line in _text(workspace, ign).splitlines() if line not in old)
        patterns = _patterns(added)
        base = "" if ign == ".git/info/exclude" else ign.rpartition("/")[0]
        hidden = []
        for rel in written:
            if rel in start or rel not in end or is_generated(rel) or rel.startswith(".git/") or rel == ign:
                continue
            if base and not rel.startswith(base + "/"):
                continue
            if asked and not any(rel == n or rel.rsplit("/", 1)[-1] == n for n in named):
                continue
            if _ignored(rel[len(base) + 1:] if base else rel, patterns):
                hidden.append(rel)
        if hidden:
            more = f" and {len(hidden) - MAX_NAMED} more" if len(hidden) > MAX_NAMED else ""
            out.append(f"the run's lines in {ign} hide {', '.join(hidden[:MAX_NAMED])}{more} from a commit: "
                       "the work would be missing from a clone")
    return out
