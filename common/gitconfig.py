"""Reading git config and attributes files as data, to say which entries make git run a program.

Parts: `parse_config()` (a git-config file -> `(key, value)` pairs, keys as
git prints them: `section.subsection.name`, section and name lower-cased),
`exec_items()` (the pairs git would run, or that Tether cannot rule out),
`config_paths()` (`core.hooksPath` and `include.path` values), and
`attribute_drivers()` (the filter/diff/merge drivers a `.gitattributes`
names). Nothing here runs git: the file comes from a workspace the model
controlled, so it is read as text, bounded, and anything unparsable counts
against it.
"""

from __future__ import annotations

import re

MAX_CONFIG_BYTES = 1 << 20
"""A config or attributes file larger than this is not parsed (it counts as a change to review)."""

EXEC_KEYS: tuple[tuple[str, str], ...] = (
    (r"core\.fsmonitor", "`git status`, `git add`, `git diff` (every index refresh)"),
    (r"core\.hookspath", "every git hook (`git commit`, `git checkout`, `git push`, ...)"),
    (r"core\.sshcommand|core\.gitproxy|core\.askpass|core\.alternaterefscommand|ssh\.variant",
     "`git fetch`, `git push`, `git pull`, `git clone`"),
    (r"core\.pager|pager\..+", "any git command whose output is paged (`git log`, `git diff`, `git show`)"),
    (r"core\.editor|sequence\.editor|gui\.editor", "`git commit`, `git rebase -i`, `git tag -a`"),
    (r"alias\..+", "the alias, when typed (`!` runs a shell; `-c` sets config)"),
    (r"filter\..+\.(?:clean|smudge|process)", "`git add`, `git status`, `git checkout` on matching files"),
    (r"diff\..+\.(?:textconv|command)|diff\.external|interactive\.difffilter",
     "`git diff`, `git log -p`, `git add -p`"),
    (r"merge\..+\.driver|(?:merge|diff)tool\..+\.(?:cmd|path)", "`git merge`, `git mergetool`, `git difftool`"),
    (r"credential\.(?:.+\.)?helper", "`git fetch`, `git push` (credential lookups)"),
    (r"include\.path|includeif\..+\.path", "every git command (the included file is config too)"),
    (r"gpg\.(?:.+\.)?program|gpg\.ssh\.defaultkeycommand", "`git commit`, `git tag`, `git log --show-signature`"),
    (r"remote\..+\.(?:uploadpack|receivepack|vcs)|protocol\.(?:.+\.)?allow", "`git fetch`, `git push`"),
    (r"submodule\..+\.update", "`git submodule update`"),
    (r"init\.templatedir", "`git init`, `git clone` (they copy hooks from the template)"),
    (r"web\.browser|browser\..+\.(?:cmd|path)|man\.viewer|man\..+\.(?:cmd|path)|instaweb\..+|guitool\..+",
     "`git help`, `git web--browse`, `git gui`"),
    (r"sendemail\..*(?:cmd|smtpserver)", "`git send-email`"),
    (r"lfs\.customtransfer\..+|lfs\.standalonetransferagent|lfs\.extension\..+", "`git lfs` transfers"),
    (r"uploadpack\.packobjectshook", "`git fetch` from this repository"),
)
"""Keys whose value git runs (regex over the key, when it runs)."""
_EXEC = [(re.compile(k), when) for k, when in EXEC_KEYS]

SAFE_KEYS = re.compile(
    r"core\.(?:repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|"
    r"autocrlf|eol|safecrlf|quotepath|compression|loosecompression|checkstat|trustctime|untrackedcache|splitindex|"
    r"abbrev|commentchar|commentstring|whitespace|excludesfile|preloadindex|multipackindex|commitgraph|longpaths|"
    r"fscache|sparsecheckout|sparsecheckoutcone|sharedrepository|warnambiguousrefs|bigfilethreshold|"
    r"deltabasecachelimit|packedgitlimit|packedgitwindowsize|checkroundtripencoding)"
    r"|(?:user|author|committer|color|advice|column|i18n|gc|pack|index|feature|rerere|blame|grep|status|log|format|"
    r"pull|push|fetch|rebase|checkout|clone|am|apply|notes|extensions|help|http|tag|commit|branch|reset|stash|"
    r"diff|merge|submodule|remote|mergetool|difftool|transfer|receive|versionsort|fsck|fetch|maintenance|"
    r"safe|trace2|worktree|add|blame|lfs)\.[^.]+"
    r"|init\.defaultbranch"
    r"|branch\..+\.(?:remote|merge|rebase|pushremote|description|mergeoptions)"
    r"|remote\..+\.(?:url|pushurl|fetch|push|tagopt|prune|prunetags|mirror|skipdefaultupdate|skipfetchall|"
    r"promisor|partialclonefilter|followremotehead)"
    r"|submodule\..+\.(?:url|active|path|branch|fetchrecursesubmodules|ignore|shallow)"
    r"|color\..+|lfs\..+\.(?:access|locksverify)"
)
"""Keys known not to run anything (anything neither here nor in EXEC_KEYS counts as unknown, to review)."""


class ConfigSyntaxError(ValueError):
    """The file is not git-config text Tether can read."""


_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\]')
_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*(=?)")
_UNQUOTE = re.compile(r"\\(.)")


def parse_config(data: bytes) -> list[tuple[str, str]]:
    """`(key, value)` of every variable, in order; a bare `name` is `true`.

    Raises:
        ConfigSyntaxError: over MAX_CONFIG_BYTES, not text, or a line git itself would refuse.
    """
    if len(data) > MAX_CONFIG_BYTES:
        msg = f"larger than {MAX_CONFIG_BYTES} bytes"
        raise ConfigSyntaxError(msg)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        msg = "not UTF-8"
        raise ConfigSyntaxError(msg) from e
    out: list[tuple[str, str]] = []
    section = None
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        while line.startswith("["):
            m = _SECTION.match(line)
            if m is None:
                msg = f"bad section header at line {i}"
                raise ConfigSyntaxError(msg)
            name, sub = m.group(1), m.group(2)
            if sub is not None:
                section = name.lower() + "." + _UNQUOTE.sub(r"\1", sub)
            elif "." in name:  # [section.sub]: the deprecated form, subsection lower-cased
                head, _, rest = name.partition(".")
                section = f"{head.lower()}.{rest.lower()}"
            else:
                section = name.lower()
            line = line[m.end():].strip()
        if not line or line[0] in "#;":
            continue
        m = _NAME.match(line)
        if m is None or section is None:
            msg = f"bad line {i}"
            raise ConfigSyntaxError(msg)
        key = f"{section}.{m.group(1).lower()}"
        if not m.group(2):
            if line[m.end():].strip()[:1] not in ("", "#", ";"):
                msg = f"bad line {i}"
                raise ConfigSyntaxError(msg)
            out.append((key, "true"))
            continue
        value, i = _value(line[m.end():], lines, i)
        out.append((key, value))
    return out


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def _value(rest: str, lines: list[str], i: int) -> tuple[str, int]:
    """A value from `rest` (continued on later lines by a trailing `\\`), and the next line's index."""
    out: list[str] = []
    quoted = False
    pos = 0
    while True:
        if pos >= len(rest):
            if quoted:
                msg = f"unterminated quote at line {i}"
                raise ConfigSyntaxError(msg)
            break
        c = rest[pos]
        pos += 1
        if c == "\\":
            if pos >= len(rest):  # a line continuation
                if i >= len(lines):
                    break
                rest, pos, i = lines[i], 0, i + 1
                continue
            nxt = rest[pos]
            pos += 1
            if nxt not in _ESCAPES:
                msg = f"bad escape \\{nxt} at line {i}"
                raise ConfigSyntaxError(msg)
            out.append(_ESCAPES[nxt])
        elif c == '"':
            quoted = not quoted
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
    return "".join(out).strip(), i


def exec_when(key: str) -> str | None:
    """When git runs the value of `key`; "" for an unknown key; None for a key known to run nothing."""
    for rx, when in _EXEC:
        if rx.fullmatch(key):
            return when
    return None if SAFE_KEYS.fullmatch(key) else ""


def exec_items(items: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """`(key, value, when)` of every entry that runs something or that Tether does not know ("" when)."""
    out = []
    for key, value in items:
        when = exec_when(key)
        if when is not None:
            out.append((key, value, when))
    return out


def config_paths(items: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """(`core.hooksPath` values, `include.path`/`includeIf.*.path` values) as written."""
    hooks = [v for k, v in items if k == "core.hookspath"]
    includes = [v for k, v in items if k == "include.path" or re.fullmatch(r"includeif\..+\.path", k)]
    return hooks, includes


_BUILTIN_DIFF = frozenset(
    "ada bash bibtex cpp csharp css dts elixir fortran fountain golang html java kotlin markdown matlab objc pascal "
    "perl php python ruby rust scheme tex".split()
)
_BUILTIN_MERGE = frozenset({"text", "binary", "union"})


def attribute_drivers(data: bytes) -> set[str]:
    """`pattern attr=driver` items that make git run a configured program (filters, custom diff and merge drivers).

    Raises:
        ConfigSyntaxError: over MAX_CONFIG_BYTES or not text.
    """
    if len(data) > MAX_CONFIG_BYTES:
        msg = f"larger than {MAX_CONFIG_BYTES} bytes"
        raise ConfigSyntaxError(msg)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        msg = "not UTF-8"
        raise ConfigSyntaxError(msg) from e
    out = set()
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        for attr in words[1:]:
            name, eq, value = attr.partition("=")
            if not eq:
                continue
            if name == "filter" or (name == "diff" and value not in _BUILTIN_DIFF) or (
                    name == "merge" and value not in _BUILTIN_MERGE):
                out.add(f"{words[0]} {attr}")
    return out
