"""Rules: writes to places in the workspace that run code on the person's machine after the run.

The places are common.hostexec's table (git config, hooks and attributes,
Python start-up hooks and environments, bytecode, direnv, editor and agent
config, package-manager and build-tool config): the same table the gate
and the after-run check read, so the guardian asks about exactly what they
would flag. What it sees:

    HOSTEXEC-001: a write, copy, move, link, chmod or unpack whose target is
        such a place, or a folder that holds them (`cp -r x .git/`, `tar -C
        .vscode`), by any route the analyser resolves (redirects, cp/mv/
        install/ln/rsync, tee, sed -i, dd, interpreter code it decodes).
    HOSTEXEC-002: `git config` setting (or unsetting) a key whose value git
        runs (core.fsmonitor, core.hooksPath, aliases, filters, textconv,
        credential helpers, includes, ...) or a key Tether does not know.
    HOSTEXEC-003: `git init`/`git clone` with `--template` (it copies hooks),
        `--separate-git-dir`, or `-c`/`--config` setting such a key.
    HOSTEXEC-004: hook installers (pre-commit, husky, lefthook, git lfs,
        overcommit, simple-git-hooks).

All `ask`: each has honest uses, and a person should see them. What the
guardian cannot see (a script the run wrote earlier, then runs) the gate
and the after-run check still find in the workspace.
"""

from __future__ import annotations

import re

from tether.common.gitconfig import exec_when
from tether.common.hostexec import PLACES, place_dirs
from tether.guardian.rules import Inv, rule, static_rule
from tether.guardian.rules_git import git_sub
from tether.guardian.rules_paths import PATH_RULES
from tether.guardian.words import UNKNOWN

WRITE = static_rule(
    "HOSTEXEC-001", "persistence", "ask",
    "write to a place that runs code on the person's machine later (git config or hooks, .gitattributes, .pth, "
    "bytecode, .envrc, editor tasks, agent config, package-manager config)",
    "cp tasks.json .vscode/tasks.json")
_SKIPPED = frozenset({"package install scripts", "env file", "python tool plugins", "JS tool config"})
"""Judged by content only (the gate reads install scripts, the variables a `.env` sets, the plugins a tool's config
names), or code a person reads as part of the project (a JS tool's config file): writing package.json, pyproject.toml,
a `.env` of settings or `vite.config.ts` is ordinary work. The after-run check still lists them when they run code."""
PLACE_PATHS = re.compile("|".join(f"(?:{p.pattern.pattern})" for p in PLACES if p.kind not in _SKIPPED))
PATH_RULES.append((WRITE, "write", PLACE_PATHS))
PATH_RULES.append((WRITE, "write", place_dirs()))

_VALUED = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "-t"})
_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
                    "--list", "-l", "--show-origin", "--show-scope", "--name-only"})
_SUBCOMMANDS = frozenset({"set", "unset", "get", "list", "edit", "rename-section", "remove-section"})


def _config_key(args: list[str]) -> tuple[str | None, bool]:
    """(the key `git config ARGS` writes or None when it only reads, whether it opens an editor)."""
    pos: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _READS:
            return None, False
        if a in ("-e", "--edit"):
            return None, True
        if a in _VALUED:
            i += 2
            continue
        if not a.startswith("-") or a == "-" or len(pos) == 1 and pos[0] not in _SUBCOMMANDS and not (
                a.startswith("--") or a in ("-z", "-l", "-e", "-f", "-t")):
            pos.append(a)  # after the key, `-c core.pager=x log` is the value (git takes it as one)
        i += 1
    if pos and pos[0] in _SUBCOMMANDS:
        sub, pos = pos[0], pos[1:]
        if sub in ("get", "list"):
            return None, False
        if sub == "edit":
            return None, True
        if sub in ("rename-section", "remove-section"):
            return (pos[0] + ".x") if pos else UNKNOWN, False
    if not pos:
        return None, False
    if len(pos) == 1 and not any(a in ("--unset", "--unset-all") for a in args):
        return None, False  # `git config KEY` reads it
    if len(pos) == 2 and _harmless_value(pos[0].lower(), pos[1]):
        return None, False
    return pos[0], False


_KNOWN_PROGRAMS = frozenset({"less", "more", "most", "cat", "bat", "delta", "vim", "vi", "nvim", "nano", "emacs",
                             "code", "code-insiders", "subl", "micro", "hx", "kak", "mate", "gedit", "true"})
_GIT_RUNS_OPTS = re.compile(r"^(?:-c|--config-env|--exec-path|--upload-pack|--receive-pack|--exec|-u$|--template)")


def _harmless_value(key: str, value: str) -> bool:
    """A program-valued key set to a well-known pager or editor (`core.pager less`, `core.editor "code --wait"`), or
    an alias that is git's own subcommand with plain options (`alias.co checkout`, not `!sh`, not `-c k=v`,
    `--upload-pack=..`): git runs nothing the person did not already have."""
    if UNKNOWN in value:
        return False
    if key.startswith("alias."):
        words = value.split()
        return bool(words) and not value.lstrip().startswith("!") and bool(re.fullmatch(r"[a-z][\w-]*", words[0])) \
            and not any(_GIT_RUNS_OPTS.match(w) for w in words)
    if key in ("core.pager", "core.editor", "sequence.editor") or key.startswith("pager."):
        words = value.split()
        return bool(words) and words[0] in _KNOWN_PROGRAMS and not re.search(r"[$`;|&<>()\\]", value)
    return False


def _runs(key: str) -> bool:
    return UNKNOWN in key or exec_when(key.lower()) is not None


@rule("HOSTEXEC-002", "persistence", "ask", "git",
      "git config sets a key whose value git runs later on the host (fsmonitor, hooksPath, alias, filter, "
      "textconv, credential helper, include, ...) or a key Tether does not know",
      "git config core.fsmonitor ./watch.sh")
def _git_config(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    if sub != "config":
        return False
    key, editor = _config_key(args)
    return editor or (key is not None and _runs(key))


def _config_values(args: list[str]) -> list[str]:
    out = []
    for i, a in enumerate(args):
        if a in ("-c", "--config") and i + 1 < len(args):
            out.append(args[i + 1])
        elif a.startswith("--config="):
            out.append(a.split("=", 1)[1])
    return out


@rule("HOSTEXEC-003", "persistence", "ask", "git",
      "git init/clone that brings hooks or config git runs later (--template, --separate-git-dir, -c KEY=...)",
      "git init --template=./tpl")
def _git_init(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    if sub not in ("init", "clone"):
        return False
    if any(a.split("=", 1)[0] in ("--template", "--separate-git-dir") for a in args):
        return True
    return any(_runs(v.split("=", 1)[0]) for v in _config_values(args))


_INSTALLERS = re.compile(r"^(?:pre-commit|husky|lefthook|overcommit|simple-git-hooks|git-lfs)$")


@rule("HOSTEXEC-004", "persistence", "ask", ("pre-commit", "husky", "lefthook", "overcommit", "simple-git-hooks",
                                             "git-lfs", "git", "npx", "pnpx", "bunx", "yarn", "pnpm"),
      "installs git hooks that run on the person's machine later (pre-commit, husky, lefthook, git lfs)",
      "pre-commit install")
def _hook_installer(inv: Inv) -> bool:
    argv = [a.rsplit("/", 1)[-1] for a in inv.argv]
    if inv.prog == "git":
        sub, args = git_sub(inv)
        return sub == "lfs" and args[:1] == ["install"]
    if inv.prog in ("npx", "pnpx", "bunx", "yarn", "pnpm"):
        return any(_INSTALLERS.match(a) for a in argv[1:3])
    if inv.prog in ("husky", "simple-git-hooks"):
        return True
    return any(a in ("install", "--install", "init") for a in argv[1:3])
