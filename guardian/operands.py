"""Which arguments of a command name files it opens, and which are only data.

Parts:
    path_operands: Inv -> the arguments that may be paths the program reads.
        Text a program only prints or matches against (echo/printf arguments,
        a grep/rg/ag pattern, a sed script, an awk or jq program, a `test`
        operand) is data: `grep -rn '/etc/shadow' tests/` searches for the
        text, it does not open /etc/shadow.

The data arguments are still analysed as payloads where a program runs them
(`awk 'BEGIN{system(..)}'`, `sed e`); this module only keeps them out of the
read-path rules (CRED-*, SHELL-001).
"""

from __future__ import annotations

import re

from tether.guardian.rules import Inv
from tether.guardian.words import UNKNOWN

_PRINTERS = frozenset({"echo", "printf", "test", "[", "[[", "logger", "banner", "figlet", "((", ":"})
_KEY_USERS = frozenset({"ssh", "scp", "sftp", "ssh-copy-id", "autossh", "mosh", "sshfs"})
"""`-i KEY` (and `-F CONFIG`) authenticate with a key: it is not read out."""
_SSH_WITH_KEY = re.compile(r"\bssh\b[^;|&]*\s-i\s")
"""An ssh command line given as one argument (it is read on its own, where `-i KEY` is a key in use)."""
_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "ack-grep", "pcregrep",
                    "ugrep", "git-grep"})
_GREP_VALUED = frozenset({"-A", "-B", "-C", "-m", "-d", "-D", "--max-count", "--context",
                          "--after-context", "--before-context", "--label", "-g", "--glob",
                          "-t", "--type", "-T", "--type-not", "-M", "--max-columns", "-j",
                          "--threads", "--color", "--colour", "-E", "--encoding"})
_SCRIPTED = {"sed": ("-e", "--expression"), "awk": ("-e",), "gawk": ("-e", "--source"),
             "mawk": (), "nawk": (), "jq": (), "yq": (), "gojq": ()}


def _after_pattern(inv: Inv, pattern_opts: tuple[str, ...], valued: frozenset[str]) -> list[str]:
    """Arguments other than the pattern/script: the explicit `-e X` values, or the first operand."""
    args, out, explicit, i = inv.args, [], False, 0
    operands: list[str] = []
    while i < len(args):
        a = args[i]
        if a == "--":
            operands += args[i + 1 :]
            break
        if a in pattern_opts:
            explicit, i = True, i + 2
            continue
        if any(a.startswith(o + "=") for o in pattern_opts if o.startswith("--")) or (
                any(a.startswith(o) and len(a) > len(o) for o in pattern_opts if not o.startswith("--"))):
            explicit = True
        elif a in valued:
            i += 2
            continue
        elif a.startswith("-") and a != "-":
            out.append(a)
        else:
            operands.append(a)
        i += 1
    return out + (operands if explicit else operands[1:])


def path_operands(inv: Inv) -> list[str]:
    """The arguments of `inv` that may name files it opens (everything but known data)."""
    prog = inv.prog
    if prog in _PRINTERS or prog == "ssh-add":
        return []  # ssh-add loads a key into the agent: it prints nothing of it
    if prog in _KEY_USERS:
        return [a for i, a in enumerate(inv.args) if not (i and inv.args[i - 1] in ("-i", "-F"))]
    if any(_SSH_WITH_KEY.search(a) for a in inv.args):  # rsync -e 'ssh -i K', git -c core.sshCommand=..
        return [a for a in inv.args if not _SSH_WITH_KEY.search(a)]
    if prog == "git" and inv.positional[:1] == ["grep"]:
        return _after_pattern(Inv(inv.argv[1:], inv.simple), ("-e",), _GREP_VALUED)
    if prog in _GREPS:
        if inv.has("f", "--file"):
            return inv.args
        return _after_pattern(inv, ("-e", "--regexp"), _GREP_VALUED)
    if prog in _SCRIPTED:
        if inv.has("f", "--file", "--from-file"):
            return inv.args
        return _after_pattern(inv, _SCRIPTED[prog], frozenset({"-F", "-v", "--arg", "--argjson"}))
    return inv.args


def find_matches(args: list[str], roots: list[str]) -> list[str]:
    """What `{}` stands for in `find ROOTS EXPR -exec CMD {}`: the roots, or entries below them.

    A root itself is a match unless the expression rules it out: `-mindepth 1`
    or more, or `-type` without `d` (`{}` is then `ROOT/*`, every entry: judged like `rm -rf ROOT/*`),
    or a `-name`/`-iname` pattern (not negated, no `-o`) that the root's own
    name cannot match (`{}` is then `ROOT/PATTERN`, a path inside the root).
    """
    import fnmatch
    import posixpath

    expr = []
    for a in args:
        if a in ("-exec", "-execdir", "-ok", "-okdir"):
            break
        expr.append(a)
    if any(a in ("-o", "-or", ",") for a in expr):
        return roots
    names, mindepth = [], 0
    for k, a in enumerate(expr[:-1]):
        negated = k > 0 and expr[k - 1] in ("!", "-not")
        if a in ("-name", "-iname") and not negated and "/" not in expr[k + 1]:
            names.append(expr[k + 1])
        elif a == "-mindepth" and expr[k + 1].isdigit():
            mindepth = max(mindepth, int(expr[k + 1]))
        elif a in ("-type", "-xtype") and not negated and "d" not in expr[k + 1]:
            mindepth = max(mindepth, 1)  # files only: never the root folder itself
    out = []
    for root in roots:
        base = posixpath.basename(posixpath.normpath(root)) if root not in ("/", "") else "/"
        own = [n for n in names if not fnmatch.fnmatchcase(base, n)]
        if own:
            out.append(root.rstrip("/") + "/" + own[0])
        elif mindepth >= 1:
            out.append(root.rstrip("/") + "/*" * min(mindepth, 4))
        else:
            out.append(root)
    return out


_FIND_OFF = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
                       "-printf", "-L", "-follow", "-H"})
_LINE_FILTERS = frozenset({"sort", "uniq", "head", "tail", "grep", "egrep", "fgrep", "rg"})


def listed_paths(stage: object) -> str | None:
    """The paths a pipeline stage prints, one per line, as patterns the path policy can judge
    (`ROOT/PATTERN`, `ROOT/*/*`: entries below ROOT), or None when they are not only paths
    below known roots. Listers: `find` (as `find_matches`), `grep -l`/`-L` and `rg -l`
    (below their operands, or `.` when recursive), `git ls-files` and `git diff --name-only`
    (below the cwd); line filters in between (`grep -v`, `sort`, `uniq`, `head`, `tail`
    reading stdin, never `grep -o`) keep a subset of the lines."""
    argv: list[str] = stage.argv  # type: ignore[attr-defined]
    if not argv or any(UNKNOWN in a for a in argv):
        return None
    prog = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    if prog == "find":
        if any(a in _FIND_OFF for a in args):
            return None
        roots = []
        for a in args:
            if a.startswith("-") or a in ("(", "!"):
                break
            roots.append(a)
        return "\n".join(find_matches(args, roots or ["."]))
    if prog == "git":
        pos = [a for a in args if not a.startswith("-")]
        flags = [a for a in args if a.startswith("-")]
        if pos[:1] == ["ls-files"] or (pos[:1] == ["diff"] and "--name-only" in flags):
            if any(a.startswith(("-C", "--git-dir", "--work-tree", "--full-name")) for a in flags) \
                    or any(".." in a.split("/") or a.startswith("/") for a in pos[1:]):
                return None
            return "./*/*"
        return None
    if prog not in _LINE_FILTERS:
        return None
    short = {c for a in args if a.startswith("-") and not a.startswith("--") for c in a[1:]}
    long = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    if prog in _GREPS and ("o" in short or "--only-matching" in long):
        return None
    files = _after_pattern_plain(args) if prog in _GREPS else [a for a in args if not a.startswith("-")]
    if prog in _GREPS and ({"l", "L"} & short or {"--files-with-matches", "--files-without-match"} & long):
        recursive = prog == "rg" or bool({"r", "R"} & short or {"--recursive", "--dereference-recursive"} & long)
        roots = files or (["."] if recursive else [])
        return "\n".join(r.rstrip("/") + "/*/*" for r in roots) if roots else None
    if files or not getattr(stage, "upstream", None) or len(stage.upstream) != 1:  # type: ignore[attr-defined]
        return None
    return listed_paths(stage.upstream[0])  # type: ignore[attr-defined]


def substituted_paths(stage: object) -> str | None:
    """What a `$(..)` that names paths yields, as patterns the path policy can judge, or None
    (unknown): a lister's paths (`listed_paths`: `$(find build -name '*.o')`, `$(git ls-files)`),
    one name with no `/` (`basename "$f" [SUFFIX]`: `*`, so `out/$(basename "$f")` is an entry
    of out/). `pwd` stays unknown: the substitution does not see a `cd` earlier in the line."""
    argv: list[str] = stage.argv  # type: ignore[attr-defined]
    prog = argv[0].rsplit("/", 1)[-1] if argv else ""
    if prog == "basename" and 2 <= len(argv) <= 3 and not argv[1].startswith("-") and (
            len(argv) == 2 or UNKNOWN not in argv[2]):
        return "*"
    return listed_paths(stage)


def _after_pattern_plain(args: list[str]) -> list[str]:
    """grep's file operands: the positionals after the pattern (all of them with -e/-f)."""
    valued = {"-e", "-f", "-m", "-A", "-B", "-C", "--include", "--exclude", "--exclude-dir", "-d", "-D"}
    pos, skip, given = [], False, False
    for a in args:
        if skip:
            skip = False
        elif a in valued:
            skip, given = True, given or a in ("-e", "-f")
        elif not a.startswith("-") or a == "-":
            pos.append(a)
    return pos if given else pos[1:]


_SENSITIVE = (
    "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d/x", "/etc/master.passwd",
    "/etc/security/opasswd", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/sshd_config", "/etc/crontab", "/etc/cron.d/x", "/etc/rc.local", "/etc/ld.so.preload",
    "/etc/profile", "/etc/bash.bashrc", "/etc/systemd/system/x.service", "/var/spool/cron/crontabs/root",
    "/var/log/auth.log", "/var/log/syslog", "/proc/1/environ", "/proc/self/environ", "/dev/sda",
    "/dev/nvme0n1", "/root/.ssh/id_rsa", "/root/.ssh/authorized_keys", "/root/.bashrc",
    "/root/.bash_history", "{h}/.ssh/id_rsa", "{h}/.ssh/id_ed25519", "{h}/.ssh/id_ecdsa",
    "{h}/.ssh/id_dsa", "{h}/.ssh/authorized_keys", "{h}/.aws/credentials", "{h}/.kube/config",
    "{h}/.docker/config.json", "{h}/.netrc", "{h}/.git-credentials", "{h}/.npmrc", "{h}/.pypirc",
    "{h}/.config/gcloud/credentials.db", "{h}/.gnupg/private-keys-v1.d/x.key", "{h}/.bashrc",
    "{h}/.bash_profile", "{h}/.profile", "{h}/.zshrc", "{h}/.bash_history",
    "{h}/.config/autostart/x.desktop", "{h}/.config/systemd/user/x.service",
)
"""Concrete paths the path rules care about, for judging a glob (`cat /???/s?ad??`)."""


_LISTERS = frozenset({"ls", "stat", "du", "find", "tree", "exa", "eza", "lsattr", "getfacl", "namei",
                      "realpath", "readlink", "file", "test", "[", "[[", "echo", "printf"})
"""Programs that list or describe files without reading them: a glob is not expanded for them."""


def glob_targets(pattern: str, home: str, prog: str = "") -> list[str]:
    """The sensitive paths an absolute glob pattern could name: component by component
    (`*` does not cross `/`), and only when its last component has a literal part
    (`/e??/sh*`, `~/.ssh/id_*`, not `/etc/*`). Empty for a plain path or a lister."""
    import fnmatch
    import re

    if prog in _LISTERS or not any(c in pattern for c in "*?[") or not pattern.startswith("/"):
        return []
    parts = pattern.rstrip("/").split("/")
    if not re.sub(r"[*?.]|\[[^\]]*\]", "", parts[-1]):
        return []
    out = []
    for sensitive in (s.replace("{h}", home) for s in _SENSITIVE):
        names = sensitive.split("/")
        if len(names) == len(parts) and all(fnmatch.fnmatchcase(n, p) for n, p in zip(names, parts, strict=True)):
            out.append(sensitive)
    return out
