"""Read the command languages that programs embed: editor escapes, configs, recipes.

Parts:
    Act: one thing the analyser must do (analyse a shell line or an argv, scan
        code, read a file, inspect a directory, fire a rule, read a manifest).
    strip_prefix: `exec=`, `:!`, `!`, `system:`, `|` ... taken off a payload.
    escape_lines: `!cmd`, `:!cmd`, `shell cmd`, `.system cmd`, `\\! cmd`,
        `call system("cmd")`, `py ...` in editor/pager/debugger/REPL text.
    config_value: git/apt/ssh/hg `key=value` settings whose value runs.
    tex, m4, sed_script, recipes, crontab_lines, json_scripts, prompt_substs:
        the commands inside TeX, m4, sed, make, crontab, package.json, PS1.

Pure text functions: they never read files and never import the analyser.
"""

from __future__ import annotations

import re
import shlex

from tether.common.record import dataclass
from tether.guardian.programs_table import (
    APT_EXEC_KEYS,
    GIT_EXEC_KEYS,
    HG_EXEC_KEYS,
    SHELLS,
    SSH_EXEC_KEYS,
)

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Literal

    Kind = Literal["shell", "argv", "code", "file", "dir", "rule", "manifest"]
else:
    Kind = str  # what the annotations name at run time (they are strings; nothing validates against it)


@dataclass(frozen=True, slots=True)
class Act:
    """Something a program would execute, for the analyser to judge."""

    kind: Kind
    text: str = ""
    """Shell line, code, path, rule id or manifest name."""
    argv: tuple[str, ...] = ()
    lang: str = ""
    """Language of code or of a file's content (`shell`, `python`, `makefile`, `crontab`...)."""
    detail: str = ""
    remote: bool = False
    """Runs on another host, in a container or later (trap, alias): only its deny-level
    findings count (and, on another host (`detail="host"`), a bare shell)."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables the program sets for the command (`split --filter` sets FILE)."""
    how: Literal["", "script", "outside"] = ""
    """For files: `script` = the program's main input (allowed unless written in the line),
    `outside` = asked only outside the workspace; default: asked unless written in the line."""


_PREFIX = re.compile(r"^(?:\s+|[:!|=;]+|(?:exec|system|cmd|command)[=:](?!//))+", re.I)
_ANY_PREFIX = re.compile(r"^(?:\s+|[:!|=;]+|[A-Za-z_][\w.]*=(?=\S)|(?:exec|system|cmd|command)[=:](?!//)|"
                         r"-{1,2}[A-Za-z][\w.-]*=)+", re.I)
_REPLS = re.compile(r"^(?:python[0-9.]*|perl|ruby|irb|node|lua[0-9.]*|php|tclsh|wish|expect|"
                    r"pwsh|powershell|gdb|sqlite3|mysql|psql|bc|dc)$")
_STR = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")
_SHELL_ESC = re.compile(
    r"^(?:silent!?\s*)?(?:(?:\d+|[.$%'<>,;+-]|\\)*\s*(?:r(?:ead)?\s*|w(?:rite)?\s*)?!|\\!|"
    r"\.(?:shell|system)\b|(?:platform\s+)?shell\b|system\b(?!\s*\()|terminal\b|term\b|"
    r"pipe\b|\|(?!\|))\s*(.*)$", re.S)
_SHELL_NAME = re.compile(r"^(?:/\S*/)?(?:sh|bash|dash|zsh|ksh|csh|tcsh|fish|ash)\b")
_CODE_ESC = re.compile(r"^(py|python|py3|python3|pyx|pythonx|pydo|py3do|lua|luado|perl|perldo|"
                       r"ruby|rubydo|tcl|tcldo|script)\b\s*(.*)$", re.S)
_LANG = {"py": "python", "pyx": "python", "pythonx": "python", "pydo": "python", "py3": "python",
         "python3": "python", "py3do": "python", "script": "python", "luado": "lua",
         "perldo": "perl", "rubydo": "ruby", "tcldo": "tcl"}
_SYSTEM_CALL = re.compile(r"\b(?:system|systemlist|execute|exe|call\s+system|jobstart|termopen)\s*"
                          r"\(?\s*" + _STR.pattern)
_KAK_SH = re.compile(r"%sh\{(.*?)\}", re.S)


def strip_prefix(word: str, generic: bool = False) -> str:
    """The payload inside an option value: `exec=/bin/sh` -> `/bin/sh`, `:!id` -> `id`.

    `generic` also strips `--opt=` and `NAME=` (for words of unknown meaning).
    """
    return (_ANY_PREFIX if generic else _PREFIX).sub("", word, count=1) if word else word


def _string(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2) or ""


def escape_lines(text: str) -> list[Act]:
    """Commands in the command language of an editor, pager, debugger or REPL."""
    out: list[Act] = []
    for m in _KAK_SH.finditer(text):
        out.append(Act("shell", m.group(1)))
    for m in _SYSTEM_CALL.finditer(text):
        body = _string(m)
        out.extend(escape_lines(body) if body.lstrip(": ").startswith("!") else [Act("shell", body)])
    for raw in text.splitlines() or [text]:
        segments = raw.split(";")
        for k, seg in enumerate(segments):
            line = seg.strip().lstrip(":").strip()
            if line.startswith(("exe ", "execute ", "exec ")):
                out.extend(a for s in _STR.finditer(line) for a in escape_lines(_string(s)))
                continue
            m = _SHELL_NAME.match(line)
            if m:
                out.append(Act("rule", "EXEC-001", detail=line[:60]) if bare_shell(line)
                           else Act("shell", ";".join([line, *segments[k + 1 :]])))
                break
            m = _SHELL_ESC.match(line)
            if m:
                body = ";".join([m.group(1), *segments[k + 1 :]]).strip()
                out.append(Act("shell", body) if body and not bare_shell(body)
                           else Act("rule", "EXEC-001", detail=line[:60]))
                break
            m = _CODE_ESC.match(line)
            if m and m.group(2):
                lang = _LANG.get(m.group(1), m.group(1))
                out.append(Act("code", ";".join([m.group(2), *segments[k + 1 :]]), lang=lang))
                break
    return out


def bare_shell(text: str, depth: int = 0) -> bool:
    """Whether `text` only starts an interactive shell or REPL (`/bin/sh`, `bash -i`,
    `sh 0<&2 1>&2`, `sh -c 'exec sh'`, `python3`): nothing the guardian can see runs."""
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        return False
    while words and words[0] in ("exec", "env", "command", "nohup", "sudo", "setsid"):
        words = words[1:]
    if not words:
        return False
    name = words[0].rsplit("/", 1)[-1]
    if name not in SHELLS and not _REPLS.match(name):
        return False
    args = [w for w in words[1:] if w != "--" and not re.fullmatch(r"\d?[<>]&?\d?|[<>]&?/dev/tty", w)]
    if name in SHELLS and len(args) >= 2 and args[0] == "-c" and depth < 4:
        return bare_shell(args[1], depth + 1)
    return all((w.startswith("--") and w not in ("--command", "--eval")) or
               (w.startswith(("-", "+")) and (name not in SHELLS or "c" not in w[1:])
                and w not in ("-c", "-e", "-m", "-r")) for w in args)


def _kv(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq:
        key, _, value = text.strip().partition(" ")
    return key.strip(), value.strip()


def config_value(kind: str, text: str) -> list[Act]:
    """A `key=value` setting of git, apt, ssh or hg: the commands it makes run."""
    key, value = _kv(text)
    low = key.lower()
    if kind == "gitcfg":
        if not re.fullmatch(GIT_EXEC_KEYS, low):
            return []
        if low == "core.hookspath":
            return [Act("dir", value, detail=key)]
        if low.startswith(("include.", "includeif.")):
            return [Act("file", value, lang="gitconfig")]
        if low.startswith("protocol."):
            return [Act("rule", "EXEC-002", detail=text)] if value == "always" else []
        if low.startswith("credential") and not value.startswith("!"):
            return [Act("argv", argv=tuple(value.split()))] if value.startswith("/") else []
        if low.startswith("alias."):
            if value.startswith("!"):
                return [Act("shell", value[1:])]
            return [Act("argv", argv=("git", *value.split()))]
        return [Act("shell", value)] if value else []
    pattern = {"aptcfg": APT_EXEC_KEYS, "sshcfg": SSH_EXEC_KEYS, "hgcfg": HG_EXEC_KEYS}[kind]
    if not re.fullmatch(pattern, low) or low == "permitlocalcommand":
        return []
    if kind == "hgcfg" and low.startswith("alias."):
        return [Act("shell", value[1:])] if value.startswith("!") else []
    return [Act("shell", value)] if value else []


def tex(text: str) -> list[Act]:
    """`\\write18{cmd}` and `\\input|"cmd"` in TeX source given on the command line."""
    out = [Act("shell", m.group(1)) for m in re.finditer(r"\\write18\s*\{(.*?)\}", text, re.S)]
    out += [Act("shell", m.group(1)) for m in re.finditer(r"\\input\s*\|\s*\"([^\"]*)\"", text)]
    out += [Act("code", m.group(1), lang="lua") for m in re.finditer(r"\\directlua\s*\{(.*)\}", text, re.S)]
    return out


def m4(text: str) -> list[Act]:
    """`syscmd(cmd)` / `esyscmd(cmd)` in m4 input."""
    return [Act("shell", m.group(1).strip("`'"))
            for m in re.finditer(r"\b(?:e?syscmd)\s*\(\s*([^)]*)\)", text)]


_SED_E = re.compile(r"(?:^|[;\n{}])\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/)?(?:,(?:\d+|\$))?\s*e\s+([^;\n}]+)")
_ADDR = r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/)"
_SED_S = re.compile(rf"((?:^|[;\n{{}}])\s*(?:{_ADDR}(?:,{_ADDR})?!?\s*)?)"
                    r"s(.)((?:\\.|(?!\2)[^\\])*)\2((?:\\.|(?!\2)[^\\])*)\2([gpIiMmew0-9]*)")
"""An `s` command at a command position (after an optional address), its delimiter, pattern,
replacement and flags; a backslash escapes the delimiter (`s/a\\/b/c/`)."""
_SED_TEXT = re.compile(rf"((?:^|[;\n{{}}])\s*(?:{_ADDR}(?:,{_ADDR})?!?\s*)?)([aic])(?:\\\n|\\?[ \t]*)"
                       r"(?:[^\n]*\\\n)*[^\n]*")
"""The text of an `a`, `i` or `c` command (GNU one-liner or `a\\` with continued lines): data."""
_SED_BARE_E = re.compile(rf"(?:^|[;\n{{}}])\s*(?:{_ADDR}(?:,{_ADDR})?!?\s*)?e\s*(?:$|[;\n}}])")
"""`e` without a command: runs the pattern space."""


def sed_script(text: str) -> list[Act]:
    """GNU sed's `e command` (and the `e` flag of `s///`, whose command is computed).

    The pattern and replacement of every `s` command and the text of `a`/`i`/`c`
    are data: they are cut out before looking for `e` (`s/x/{e y}/` runs nothing)."""
    out: list[Act] = []
    flagged = False

    def cut_s(m: re.Match[str]) -> str:
        nonlocal flagged
        flagged = flagged or "e" in m.group(5)
        return m.group(1) + "s" + m.group(5).replace("e", "")

    rest = _SED_S.sub(cut_s, text)
    rest = _SED_TEXT.sub(lambda m: m.group(1) + m.group(2), rest)
    out += [Act("shell", m.group(1).strip()) for m in _SED_E.finditer(rest)]
    if flagged or _SED_BARE_E.search(rest):
        out.append(Act("rule", "EXEC-002", detail="sed s///e runs the pattern space"))
    return out


def recipes(text: str) -> list[Act]:
    """Recipe lines of a makefile text (tab-indented, or after `;` on a rule line)."""
    out = []
    for line in text.splitlines():
        if line.startswith("\t"):
            out.append(Act("shell", line.strip().lstrip("@-+")))
        elif ":" in line and ";" in line.split(":", 1)[1] and not line.lstrip().startswith("#"):
            out.append(Act("shell", line.split(":", 1)[1].split(";", 1)[1].strip()))
        m = re.search(r"\$\(shell\s+([^)]*)\)", line)
        if m:
            out.append(Act("shell", m.group(1)))
    return out


def justfile_recipes(text: str) -> list[Act]:
    """Recipe lines of a justfile (indented by tabs or spaces under a `name:` line), and backtick values."""
    out = []
    for line in text.splitlines():
        body = line.strip()
        if line[:1] in (" ", "\t") and body and not body.startswith("#"):
            out.append(Act("shell", body.lstrip("@-")))
        for m in re.finditer(r"`([^`]+)`", line if line[:1] not in (" ", "\t") else ""):
            out.append(Act("shell", m.group(1)))
    return out


def yaml_cmds(text: str) -> list[Act]:
    """Commands of a task runner's YAML (Taskfile `cmds:` items, `cmd:` and `sh:` values)."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\s*(?:-\s+(?:cmd:\s*)?|(?:cmd|sh|run):\s*)(.+)$", line)
        if m and not re.match(r"^[\w.-]+:\s*$", m.group(1).strip()):
            out.append(Act("shell", m.group(1).strip().strip("'\"")))
    return out


def crontab_lines(text: str) -> list[Act]:
    """The commands of crontab lines (five time fields or an @keyword, then a command)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or re.match(r"^[A-Z_]+=", line):
            continue
        m = re.match(r"^(?:@\w+|(?:\S+\s+){5})(.+)$", line)
        out.append(Act("shell", m.group(1) if m else line))
    return out


def json_scripts(text: str) -> list[Act]:
    """The `scripts` of a package.json / composer.json (lifecycle hooks run on install)."""
    import json  # a manifest written in the line is rare: `tether guard` starts without json

    try:
        data = json.loads(text)
    except ValueError:
        return [Act("rule", "EXEC-002", detail="manifest that cannot be read")]
    scripts = data.get("scripts", {}) if isinstance(data, dict) else {}
    out = []
    for value in scripts.values() if isinstance(scripts, dict) else []:
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str):
                out.append(Act("shell", v))
    return out


def prompt_substs(text: str) -> list[Act]:
    """`$(cmd)` and backticks in a prompt string (run each time the prompt is shown)."""
    out = [Act("shell", m.group(1)) for m in re.finditer(r"\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)", text)]
    return out + [Act("shell", m.group(1)) for m in re.finditer(r"`([^`]*)`", text)]


def rpm_macro(text: str) -> list[Act]:
    """`%(cmd)` shell expansion and `%{lua: ...}` in an rpm macro."""
    out = [Act("shell", m.group(1)) for m in re.finditer(r"%\(([^)]*)\)", text)]
    return out + [Act("code", m.group(1), lang="lua") for m in re.finditer(r"%\{lua:(.*)\}", text, re.S)]


def socat_address(text: str) -> list[Act]:
    """The program of a socat `EXEC:`/`SYSTEM:` address."""
    m = re.match(r"(?i)^(exec|system):(.*)$", text)
    if not m:
        return []
    body = m.group(2)
    if m.group(1).lower() == "exec":
        body = body.split(",", 1)[0]
    return [Act("rule", "EXEC-001", detail=text)] if bare_shell(body) else [Act("shell", body)]
