"""Action kinds for the trust ledger: the rule that fired and a coarse shape of what it touched.

A kind is `category:program:RULE:shape`, e.g. `outside-workspace:rm:CONF-001:parent` or
`git-history:git:GIT-006:checkout-workspace`. `shape` is the subcommand (for programs that have
them), the flags that widen an action (`recursive`, `force`, `glob`) and the widest target class
of the command's words (see `TARGETS`). Approvals of `rm ../old.log` therefore teach
`...:rm:CONF-001:parent` and never `rm -rf ~/Documents` (`...:recursive-home`); approvals of
`git checkout -- f` teach GIT-006 and never GIT-001 (force push). `remote` (a URL) and the
`global` flag (`-g`, `--user`, `--system`, ...) make kinds of their own.

`destructive(kind)` is the never-promote rule, a pure function of the kind string so a hand edit
of `promoted = true` cannot lift it: a destructive category, a rule that discards work, a forced
action, a recursive action outside the workspace, a git action on a whole-tree pathspec, or a
delete of a glob, a variable target or anything outside the workspace but the sibling folders
(`parent`) and temp.

Plain Python (no pydantic): the hook path (`runtime.agents.hook`) and `tether run` (the ledger)
both call `kinds_of`, so there is one definition. Shapes are read from the command text with
`shlex` (every decoded form the guardian analysed); a command that does not split is `opaque`,
which never promotes.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any


DESTRUCTIVE_CATEGORY_EXTRA = frozenset({"cloud-destructive", "database-destructive"})
"""Categories never promoted on top of the guardian's DESTRUCTIVE_CATEGORIES."""
DESTRUCTIVE_RULES = frozenset({"GIT-001", "GIT-002", "GIT-003", "GIT-004", "GIT-005", "GIT-007", "GIT-008"})
"""Rules whose action discards work for good (force push, reset --hard, clean -f, history rewrites, ...)."""
TARGETS = ("workspace", "remote", "tmp", "parent", "outside", "home", "home-config", "system", "dynamic", "opaque")
"""Target classes, narrowest first; a command's shape names the widest of its words."""
SAFE_TARGETS = frozenset({"workspace", "remote", "tmp", "parent"})
DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "wipe", "truncate", "find", "rsync", "git"})
SUBCOMMANDS = frozenset({"git", "docker", "podman", "kubectl", "helm", "npm", "pnpm", "yarn", "bun", "pip", "pip3",
                         "pipx", "uv", "poetry", "cargo", "go", "apt", "apt-get", "brew", "systemctl", "gh",
                         "terraform", "aws", "gcloud", "az", "crontab", "launchctl", "service"})
_CONTROL = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", "\n"})
_REDIRECT = re.compile(r"^[0-9]*(?:>|>>|<|&>|>&|<>|>\||<<<?)$")
_GLOB = re.compile(r"[*?\[]")


def _target(word: str) -> str | None:
    """The class of one word that names a place (None for a word that does not look like a path)."""
    if "`" in word or "$(" in word:
        return "dynamic"
    for home in ("~", "$HOME", "${HOME}"):
        if word == home or word.startswith(home + "/"):
            rest = word[len(home):].lstrip("/")
            return "home-config" if rest.startswith(".") or "/." in "/" + rest else "home"
    if "$" in word:
        return "dynamic"
    if "://" in word or word.startswith("git@"):
        return "remote"
    if word.startswith("/"):
        norm = posixpath.normpath(word)
        return "tmp" if norm.startswith(("/tmp/", "/var/tmp/")) else "system"
    if word.startswith("~"):
        return "home"
    norm = posixpath.normpath(word)
    if norm == ".." or norm.startswith("../"):
        return "parent" if not norm.startswith("../..") else "outside"
    return "workspace" if ("/" in word or "." in word or _GLOB.search(word)) else None


def _segments(command: str) -> list[list[str]] | None:
    lex = shlex.shlex(command, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = ""
    try:
        tokens = list(lex)
    except ValueError:
        return None
    out: list[list[str]] = [[]]
    for t in tokens:
        if t in _CONTROL:
            out.append([])
        else:
            out[-1].append(t)
    return [s for s in out if s]


def _program_words(segment: list[str], program: str) -> list[str] | None:
    """The words after `program` in a segment that runs it (through env, sudo, command, ...), else None."""
    for i, word in enumerate(segment):
        if posixpath.basename(word) == program:
            return segment[i + 1:]
    return None


_RECURSIVE_SHORT = {"cp": "rRa", "rsync": "ra", "scp": "r"}
_GLOBAL = frozenset({"-g", "--global", "--system", "--user", "--break-system-packages", "--root", "--prefix"})
"""Flags that take an install or a setting out of the project (a kind of their own)."""
_FORCE_SHORT = frozenset({"git", "cp", "mv", "ln", "docker", "podman", "kubectl", "helm", "install"})
_SHORT_OPTS = re.compile(r"-[A-Za-z]+")
_PLAIN_SUB = re.compile(r"[A-Za-z0-9._-]+")


def _widens(program: str, word: str, index: int, flag: str) -> bool:
    """Whether `word` (the index-th after the program) makes the action recursive / forced."""
    short = word[1:] if _SHORT_OPTS.fullmatch(word) else ""
    if flag == "recursive":
        return (program == "find" or word in ("--recursive", "-delete", "--delete", "--archive")
                or any(c in short for c in _RECURSIVE_SHORT.get(program, "rR")))
    return (word in ("--force", "--force-with-lease", "--force-if-includes", "--hard", "--mirror", "--delete")
            or (program in _FORCE_SHORT and "f" in short) or (program == "git" and word.startswith("+") and index > 0))


def shape(program: str, commands: Iterable[str]) -> str:
    """The coarse shape of what `program` does in the commands (every decoded form)."""
    flags: set[str] = set()
    sub = ""
    widest = 0
    for command in commands:
        segments = _segments(command)
        if segments is None:
            return "opaque"
        chosen = [w for s in segments if (w := _program_words(s, program)) is not None] if program else []
        if not chosen:  # the program runs indirectly (xargs, a script): every word counts
            chosen = segments
        for words in chosen:
            if program in SUBCOMMANDS and not sub:
                sub = next((w for w in words if not w.startswith("-")), "")[:24]
            for i, w in enumerate(words):
                if _REDIRECT.match(w):
                    continue
                if _widens(program, w, i, "recursive"):
                    flags.add("recursive")
                if _widens(program, w, i, "force"):
                    flags.add("force")
                if w in _GLOBAL:
                    flags.add("global")
                if w.startswith("-") and "=" not in w:
                    continue
                value = w.split("=", 1)[1] if w.startswith("-") else w
                cls = _target(value)
                if cls is None:
                    continue
                if _GLOB.search(value) or value in (".", "./", ":/"):
                    flags.add("glob")
                widest = max(widest, TARGETS.index(cls))
    head = [sub] if sub and _PLAIN_SUB.fullmatch(sub) else []
    return "-".join([*head, *sorted(flags), TARGETS[widest]])


def kind_of(hit: Any, commands: Iterable[str]) -> str:
    """The trust kind of one rule hit (anything with id, category, program) in the commands it came from."""
    program = hit.program or ""
    return f"{hit.category}:{program or '-'}:{hit.id}:{shape(program, commands)}"


def kinds_of(hits: Iterable[Any], commands: Iterable[str]) -> list[str]:
    """The sorted trust kinds of a verdict's non-allow hits (`commands`: the decoded forms, raw first)."""
    forms = [c for c in commands if isinstance(c, str)]
    return sorted({kind_of(h, forms) for h in hits if h.decision != "allow"})


def verdict_kinds(verdict: Any) -> list[str]:
    """`kinds_of` for a `guardian.Verdict` (or a plain `decision.Result`)."""
    return kinds_of(verdict.hits, verdict.decoded)


def destructive(kind: str, never: Iterable[str] = ()) -> bool:
    """Whether a kind may never be promoted, however many approvals (see the module docstring).

    `never`: extra categories (the guardian's DESTRUCTIVE_CATEGORIES). A kind of the old
    `category:program` form (a ledger written before kinds had rules and shapes) is judged by its
    category alone; no verdict carries such a kind any more, so its promotion approves nothing.
    """
    parts = kind.split(":")
    category = parts[0]
    if category in DESTRUCTIVE_CATEGORY_EXTRA or category in set(never):
        return True
    if len(parts) != 4:
        return False
    _, program, rule, form = parts
    if rule in DESTRUCTIVE_RULES:
        return True
    words = set(form.split("-"))
    target = next((t for t in reversed(TARGETS) if form == t or form.endswith("-" + t)), "opaque")
    if "force" in words or target in ("dynamic", "opaque"):
        return True
    if "recursive" in words and target != "workspace":
        return True
    if program == "git" and "glob" in words:  # a whole-tree pathspec (`.`, `*`, `:/`) with a rule that asked
        return True
    return program in DELETERS and (target not in SAFE_TARGETS or ("glob" in words and target != "workspace"))
