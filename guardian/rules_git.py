"""Argv rules: git history destruction and discarding of uncommitted work.

All `ask`: each has legitimate uses, none can be undone without a person.
`git_sub` skips git's global options (-C, -c, --git-dir, ...) to find the
subcommand, so `git -C repo reset --hard` is seen as `reset --hard`.
"""

from __future__ import annotations

import re

from tether.guardian.rules import Inv, rule

_VALUED = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
           "--super-prefix"}


def git_sub(inv: Inv) -> tuple[str, list[str]]:
    """(subcommand, its arguments) of a git invocation."""
    args, i = inv.args, 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            continue
        if a in _VALUED:
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return a.lower(), args[i + 1 :]
    return "", []


_ATTACHED = frozenset("bBcCUm")
_OPTIONAL = {"--recurse-submodules": {"checkout", "on-demand"}, "--track": {"direct", "inherit"}}


def _flags(args: list[str]) -> tuple[set[str], set[str]]:
    """Short letters and long names; `-bname` stops at the valued letter."""
    short: set[str] = set()
    long: set[str] = set()
    for a in args:
        if a == "--":
            break
        if a.startswith("--"):
            long.add(a.split("=", 1)[0])
        elif a.startswith("-") and len(a) > 1:
            for ch in a[1:]:
                short.add(ch)
                if ch in _ATTACHED:
                    break
    return short, long


def _positional(args: list[str], valued: frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
    """(positional before `--`, everything after `--`)."""
    before, after, i = [], [], 0
    while i < len(args):
        a = args[i]
        if a == "--":
            after = args[i + 1 :]
            break
        if a in valued:
            i += 2
            continue
        if a in _OPTIONAL and i + 1 < len(args) and args[i + 1] in _OPTIONAL[a]:
            i += 2
            continue
        if not a.startswith("-"):
            before.append(a)
        i += 1
    return before, after


@rule("GIT-001", "git-history", "ask", "git", "force push rewrites remote history",
      "git push --force origin main")
def _force_push(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    if sub != "push":
        return False
    short, long = _flags(args)
    if long & {"--force-with-lease", "--force-if-includes"}:
        return False
    pos, _ = _positional(args)
    return "f" in short or bool(long & {"--force", "--mirror", "--delete", "--prune"}) or \
        any(p.startswith("+") or p.startswith(":") for p in pos[1:]) or "d" in short


@rule("GIT-002", "git-history", "ask", "git", "reset --hard/--merge/--keep discards work",
      "git reset --hard HEAD~1")
def _reset(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    return sub == "reset" and bool(_flags(args)[1] & {"--hard", "--merge", "--keep"})


@rule("GIT-003", "git-history", "ask", "git", "git clean -f deletes untracked files",
      "git clean -fdx")
def _clean(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    if sub != "clean":
        return False
    short, long = _flags(args)
    if not ("f" in short or "--force" in long):
        return False
    if sum(a.count("f") for a in args if a.startswith("-") and not a.startswith("--")) > 1:
        return True  # -ff also removes nested repositories
    if _elsewhere(inv):
        return True  # -C/--git-dir/--work-tree: the pathspecs are not relative to the cwd
    return not (_clean_limited(args) or "e" in short or "--exclude" in long)


def _globals(inv: Inv) -> list[str]:
    return inv.args[: len(inv.args) - len(git_sub(inv)[1]) - 1]


def _elsewhere(inv: Inv) -> bool:
    return any(a in ("--git-dir", "--work-tree") or a.startswith(("--git-dir=", "--work-tree="))
               for a in _globals(inv))


def clean_targets(inv: Inv) -> list[str]:
    """What `git clean -f` may delete, for the path policy: each pathspec, or the cwd
    (both below `-C DIR` when given)."""
    sub, args = git_sub(inv)
    if sub != "clean" or _elsewhere(inv):
        return []
    g, base = _globals(inv), ""
    for i, a in enumerate(g[:-1]):
        if a == "-C":
            base = g[i + 1] if g[i + 1].startswith("/") or not base else f"{base}/{g[i + 1]}"
    paths = _pathspecs(args) or ["."]
    return [f"{base}/{p}" if base else p for p in paths]


def _pathspecs(args: list[str]) -> list[str]:
    paths, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "--exclude"):
            i += 2
            continue
        if a == "--":
            paths += args[i + 1 :]
            break
        if not a.startswith("-"):
            paths.append(a)
        i += 1
    return paths


def _clean_limited(args: list[str]) -> bool:
    """Every pathspec names a folder or file below the current one (`build/`, `docs/_build`),
    never `.`, a glob, a parent, an absolute or an unknown path."""
    paths = _pathspecs(args)
    for p in paths:
        parts = [c for c in p.split("/") if c not in ("", ".")]
        if (not parts or p.startswith(("/", "~", ":")) or ".." in parts
                or any(c in p for c in "*?[\\\x00")):
            return False
    return bool(paths)


@rule("GIT-004", "git-history", "ask", "git", "force-deletes a branch",
      "git branch -D feature")
def _branch_delete(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    short, long = _flags(args)
    if sub != "branch":
        return False
    return "D" in short or ("--delete" in long or "d" in short) and ("--force" in long or "f" in short)


@rule("GIT-005", "git-history", "ask", "git",
      "rewrites or expires history (filter-branch, reflog expire, gc --prune, update-ref -d)",
      "git filter-branch --tree-filter 'rm -f secrets' HEAD")
def _rewrite(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    if sub in ("filter-branch", "filter-repo", "replace"):
        return True
    if sub == "reflog":
        return args[:1] in (["expire"], ["delete"])
    if sub == "gc":
        return any(a.startswith("--prune") for a in args)
    if sub == "update-ref":
        return "-d" in args
    return sub == "prune" or (sub == "rebase" and "--root" in args)


@rule("GIT-006", "git-history", "ask", "git",
      "checkout/restore/switch that overwrites uncommitted changes", "git checkout -- .")
def _discard(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    short, long = _flags(args)
    if sub == "switch":
        return "f" in short or bool(long & {"--force", "--discard-changes"})
    if sub == "restore":
        if long & {"--help"}:
            return False
        staged_only = ("--staged" in long or "S" in short) and not ("--worktree" in long or "W" in short)
        return not staged_only and bool(_positional(args, frozenset({"-s", "--source"}))[0]
                                        + _positional(args)[1] or "--pathspec-from-file" in long)
    if sub != "checkout":
        return False
    if "f" in short or "--force" in long:
        return True
    if short & {"b", "B"} or "--orphan" in long:
        return False
    before, after = _positional(args, frozenset({"--conflict", "--unified", "--inter-hunk-context",
                                                 "-U"}))
    return bool(after) or len(before) >= 2 or "--pathspec-from-file" in long or any(map(_pathlike, before))


def discarded_paths(inv: Inv) -> list[str] | None:
    """The pathspecs whose uncommitted edits a GIT-006 checkout/restore discards, as written; None when it is not
    a list of paths seen from the working folder (`-f`, `--pathspec-from-file`, `switch`, `git -C`/`--work-tree`)."""
    sub, args = git_sub(inv)
    head = inv.args[: len(inv.args) - len(args)]
    if any(a.split("=", 1)[0] in ("-C", "--git-dir", "--work-tree") for a in head):
        return None
    short, long = _flags(args)
    if "--pathspec-from-file" in long:
        return None
    if sub == "restore":
        before, after = _positional(args, frozenset({"-s", "--source"}))
        return before + after
    if sub != "checkout" or "f" in short or "--force" in long:
        return None
    before, after = _positional(args, frozenset({"--conflict", "--unified", "--inter-hunk-context", "-U"}))
    return after or (before[1:] if len(before) >= 2 else before)


_SOURCE_EXT = re.compile(r"\.(?:py|pyi|js|jsx|ts|tsx|mjs|cjs|c|h|cc|cpp|hpp|go|rs|java|kt|rb|php|cs|swift|sh|md|rst|"
                         r"txt|json|ya?ml|toml|cfg|ini|lock|html|css|scss|sql|xml|csv)$")


def _pathlike(word: str) -> bool:
    """A lone `git checkout WORD` that can only be a pathspec (its files' changes are discarded), never a branch:
    `.`, `./x`, `../x`, `:/x`, a glob, or a name with a source-file extension (`setup.py`)."""
    return (word in (".", "..") or word.startswith(("./", "../", ":")) or any(c in word for c in "*?[")
            or bool(_SOURCE_EXT.search(word)))


@rule("GIT-007", "git-history", "ask", "git", "drops stashed work", "git stash drop")
def _stash(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    return sub == "stash" and args[:1] in (["drop"], ["clear"])


@rule("GIT-008", "git-history", "ask", "git", "force-removes a worktree or deletes a remote branch",
      "git worktree remove --force ../wt")
def _worktree(inv: Inv) -> bool:
    sub, args = git_sub(inv)
    if sub == "worktree" and args[:1] == ["remove"]:
        short, long = _flags(args)
        return "f" in short or "--force" in long
    return False
