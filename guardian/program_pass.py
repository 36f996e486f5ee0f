"""What programs run through their options, arguments and environment, for the analyser.

Parts:
    on_invocation: the program table's actions for one invocation (analysed
        as shell lines, argvs, code, files, hook directories, lifecycle
        manifests), the payload pass over its other arguments, the files it
        downloads and the downloaded files it runs.
    on_simple: environment variables set in the line that a program runs
        (`PROMPT_COMMAND`, `PAGER`, `GIT_SSH_COMMAND`, `BASH_ENV`...).

    table_names: every program name the table knows (globbed program names).

The payload pass is `guardian.payload_pass`, downloads `guardian.downloads`,
sockets/served folders/sensitive destinations `guardian.exposure`.

The analyser is passed in (duck-typed: run, _inv, _hit, _guess, files, ...):
this module adds what the table knows without growing `guardian.analyse`.
"""

from __future__ import annotations

import re
import shlex

from tether.common.record import replace
from tether.guardian import downloads, escapes, exposure, management, payload_pass, programs, script_defs
from tether.guardian.bashlex_load import bashlex
from tether.guardian.escapes import Act
from tether.guardian.lazy_re import Lazy as _Lazy
from tether.guardian.parse import DepthError
from tether.guardian.paths import normalise, under
from tether.guardian.programs_table import DATA_PROGRAMS, MANIFEST_NAMES, MANIFESTS, SHELLS
from tether.guardian.rules import Inv, has_rules
from tether.guardian.unwrap import unwrap
from tether.guardian.words import UNKNOWN

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser

_PARSE_ERRORS = (bashlex.errors.ParsingError, NotImplementedError, IndexError, AttributeError,
                 TypeError, ValueError, KeyError)


def table_names() -> list[str]:
    """Every program name the table knows (for globbed program names such as `/usr/bin/vi?`)."""
    return sorted(programs.ENTRIES)


_CARGO_RUNNER = re.compile(r"^CARGO_TARGET_[A-Z0-9_]+_(?:RUNNER|LINKER)$")
"""cargo's per-target runner and linker variables: a program cargo runs."""
_DECLARES = frozenset({"export", "declare", "typeset", "readonly", "local", "setenv"})


def on_simple(an: Analyser, s: object, depth: int) -> None:
    """Environment variables some program runs, set in this line (also by `export X=..`)."""
    env = dict(s.env)  # type: ignore[attr-defined]
    argv = s.argv  # type: ignore[attr-defined]
    if argv and argv[0] in _DECLARES:
        for a in argv[1:]:
            name, eq, value = a.partition("=")
            if eq and name in programs.CODE_VARS:
                env[name] = value
    for name in programs.CODE_VARS:
        value = env.get(name)
        if value is None or value == an.env.get(name) or (name, value) in an.seen_vars:
            continue
        an.seen_vars.add((name, value))
        for act in programs.env_actions(name, value):
            _do(an, act, None, s, depth)
    for name, value in env.items():  # names that are patterns: GIT_CONFIG_KEY_<n>, CARGO_TARGET_<triple>_RUNNER
        if not value or (name, value) in an.seen_vars or value == an.env.get(name):
            continue
        if name.startswith("GIT_CONFIG_KEY_"):
            setting = f"{value}={env.get('GIT_CONFIG_VALUE_' + name[15:], '')}"
            acts = escapes.config_value("gitcfg", setting)
        elif _CARGO_RUNNER.match(name):
            acts = programs.env_actions("RUSTC_WRAPPER", value)
        else:
            continue
        an.seen_vars.add((name, value))
        for act in acts:
            _do(an, act, None, s, depth)


def on_invocation(an: Analyser, inv: Inv, depth: int) -> None:
    """Table actions, payload pass, downloads and downloaded files run by `inv`."""
    e = programs.entry(inv.prog)
    stdin = an._stdin(inv.simple) if e is not None and (e.get("stdin") or e.get("rest") == "crontab") \
        else None
    acts, used = programs.actions(inv.argv, stdin)
    for act in acts:
        _do(an, act, inv, inv.simple, depth)
    if inv.prog not in DATA_PROGRAMS and not (e and e.get("by") == "unwrap"):
        payload_pass.scan_arguments(an, inv, used | (payload_pass.code_args(inv) if e and e.get("by")
                                                      else set()), depth, _isolated)
        if e is None and not getattr(an, "in_tails", False) and depth + 1 <= an.config.max_depth \
                and not has_rules(inv.prog):
            payload_pass.argv_tails(an, inv, used, depth, _isolated)
    if inv.prog in SHELLS and not an._stdin(inv.simple) and _interactive(inv, depth):
        an._hit("EXEC-001", inv.via[-1] if inv.via else "", f"starts an interactive {inv.prog}")
    head = _ESCAPE_LINE.sub("", inv.argv[0])
    if head != inv.argv[0]:
        if head in ("", "sh", "shell", "terminal", "term"):
            an._hit("EXEC-001", "", inv.argv[0])
        else:
            _run(an, shlex.join([head, *inv.args]), depth, inv.simple)
    downloads.mark_downloads(an, inv)
    downloads.runs_download(an, inv)
    exposure.check(an, inv)
    management.on_invocation(an, inv)
    script_defs.on_invocation(an, inv, depth)
    if inv.prog in ("npm", "yarn", "pnpm", "bun"):
        from tether.guardian import package_scripts  # read only for a script run: the hook path skips it

        package_scripts.on_invocation(an, inv, depth, _isolated)


_ESCAPE_LINE = re.compile(r"^(?:\^[A-Z@\[\]])*(?::?!|:(?=(?:sh|shell|terminal|term)$))")


def _interactive(inv: Inv, depth: int) -> bool:
    """A shell with nothing to run (`/bin/sh`, `bash -p`, `sh -i`, `sh 0<&2 1>&2`), started
    by the line, a wrapper or another program: it reads a terminal the guardian cannot see."""
    if not escapes.bare_shell(shlex.join(inv.argv)):
        return False
    return not inv.simple.upstream


def _run(an: Analyser, text: str, depth: int, s: object) -> None:
    """Analyse a command a program runs; unparseable text asks."""
    body = escapes.strip_prefix(text)
    if not body.strip():
        return
    if escapes.bare_shell(body):
        an._hit("EXEC-001", "", body[:60])
        return
    if depth + 1 > an.config.max_depth:
        msg = f"payload nesting deeper than max_depth={an.config.max_depth}"
        raise DepthError(msg)
    try:
        an.run(body, depth + 1, s.env, s.cwd)  # type: ignore[attr-defined]
    except _PARSE_ERRORS as err:
        an._hit("EXEC-004", "", f"{type(err).__name__}: {body[:60]}")


def _do(an: Analyser, act: Act, inv: Inv | None, s: object, depth: int) -> None:
    prog = inv.prog if inv is not None else ""
    if act.env:
        s = replace(s, env={**s.env, **dict(act.env)})  # type: ignore[type-var, attr-defined]
    if act.remote:
        an.elsewhere = getattr(an, "elsewhere", 0) + 1  # type: ignore[attr-defined]
        try:  # `localhost` there is another machine (`management`: no local-server scope)
            found = _isolated(an, replace(act, remote=False), inv, s, depth)
        finally:
            an.elsewhere -= 1  # type: ignore[attr-defined]
        fed = bool(an._stdin(s) or s.upstream or any(r.op == "<" for r in s.redirects))  # type: ignore[attr-defined]
        for h in found:  # a database reset or cloud delete is one wherever it is run from
            if h.decision == "deny" or (h.id == "EXEC-001" and act.detail == "host" and not fed) or \
                    h.category in ("cloud-destructive", "database-destructive"):
                an.hits.setdefault((h.id, h.program), h)
        return
    if act.kind == "shell":
        _run(an, act.text, depth, s)
    elif act.kind == "rule":
        an._hit(act.text, prog, act.detail)
    elif act.kind == "argv":
        _argv(an, list(act.argv), inv, s, depth)
    elif act.kind == "code":
        _code(an, act.text, act.lang, s, depth)
    elif act.kind == "file":
        _file(an, act.text, act.lang, prog, s, depth, act.how)
    elif act.kind == "dir":
        path = normalise(act.text, s.cwd, an.home) if UNKNOWN not in act.text else UNKNOWN  # type: ignore[attr-defined]
        written = [p for p in an.files if path != UNKNOWN and under(p, path)]
        for p in written:
            _file(an, p, "shell", prog, s, depth)
        if not written and (path == UNKNOWN or not under(path, an.ws)):
            an._hit("EXEC-002", prog, f"{act.detail or 'directory'} {act.text}"[:80])
    elif act.kind == "manifest":
        _manifest(an, act.text, prog, s, depth)


def _argv(an: Analyser, argv: list[str], inv: Inv | None, s: object, depth: int) -> None:
    if not argv:
        return
    if depth + 1 > an.config.max_depth:
        msg = f"payload nesting deeper than max_depth={an.config.max_depth}"
        raise DepthError(msg)
    outer = [inv.prog] if inv is not None else []
    for inner, sudo, via in unwrap(argv, lambda: an._stdin(s)):
        if not inner:
            continue
        if UNKNOWN in inner[0]:
            an._hit("NET-004", "", "program name unknown until run time")
            continue
        if len(inner) == 1 and escapes.bare_shell(inner[0]) and not an._stdin(s):
            an._hit("EXEC-001", outer[0] if outer else "", inner[0])
        an._inv(Inv(inner, s, sudo or bool(inv and inv.sudo), [*outer, *via]), depth + 1)  # type: ignore[arg-type]


_LANGS = {"r": "R", "expect": "tcl"}
_OWN_LANGS = frozenset({"python", "perl", "ruby", "node", "php", "lua", "R", "tcl", "awk"})
_STRING = r"""(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`([^`]*)`)"""
_FOREIGN_EXEC = _Lazy(
    r"(?:shell-command|async-shell-command|call-process(?:-shell-command)?|start-process(?:-shell-command)?|"
    r"ansi-term|\bterm|callCommand|spawnCommand|\bsystem|\brun|os:cmd|run-program|do shell script|"
    r"\bexec|\bexecute|popen|spawn|getRuntime\(\)\.exec|ProcessBuilder|Process\.Start|"
    r"sh\.exec|shell_exec|passthru)\s*[\(\s]\s*(?:[\w.-]+\s+)?\{?\s*" + _STRING)
_FOREIGN_SHELL = _Lazy(r"\((?:shell|eshell|term|ansi-term)\b|\bexec\s*\{\s*" + _STRING)


def _code(an: Analyser, code: str, lang: str, s: object, depth: int) -> None:
    from tether.guardian.interp_code import scan_code

    if lang in ("tcl", "expect"):
        for m in re.finditer(r"\b(?:spawn|exec)\s+([^;\]\n}]+)", code):
            _run(an, m.group(1), depth, s)
    lang = _LANGS.get(lang, lang)
    if lang not in _OWN_LANGS:
        for m in _FOREIGN_EXEC.finditer(code):
            _run(an, next(g for g in m.groups() if g is not None), depth, s)
        for m in _FOREIGN_SHELL.finditer(code):
            body = next((g for g in m.groups() if g is not None), None)
            if body is None:
                an._hit("EXEC-001", "", m.group(0))
            else:
                _run(an, body, depth, s)
    for action in scan_code(code, lang):
        if action.kind == "shell":
            _run(an, action.text, depth, s)
        elif action.kind == "guess":
            an._guess(action.text, depth, s.env, s.cwd)  # type: ignore[attr-defined]
        else:
            an._hit(action.text, "", action.detail)


STDIN_PATHS = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
"""File names that make a program read its script from standard input."""


def _file(an: Analyser, raw: str, lang: str, prog: str, s: object, depth: int,
          how: str = "") -> None:
    """A file a program runs or loads: analysed when written in this line, else ask
    (a program's main script only when downloaded; `outside` only outside the workspace)."""
    if UNKNOWN in raw or not raw:
        if how != "script":
            an._hit("EXEC-002", prog, "script path unknown until run time")
        return
    if raw in STDIN_PATHS:
        content = an._stdin(s)  # type: ignore[arg-type]
        if content is None:
            an._hit("EXEC-002", prog, f"{lang} read from a stdin the guardian cannot see")
            return
        _content(an, content, lang, prog, s, depth)
        return
    path = normalise(raw, s.cwd, an.home)  # type: ignore[attr-defined]
    if path.startswith(("/dev/fd/", "/proc/self/fd/")):  # `make -f <(printf ...)`: a process substitution's output
        an._hit("EXEC-002", prog, f"{lang} read from a process substitution the guardian does not read")
        return
    if path not in an.files:
        if lang == "binary" and path.startswith(("/usr/", "/bin/", "/sbin/", "/opt/")):
            _argv(an, [path], None, s, depth)
        elif how == "" or (how == "outside" and not under(path, an.ws)):
            an._hit("EXEC-002", prog, raw[:80])
        return
    content = an.files[path]
    if content is None:
        an._hit("NET-002", prog, raw)
    else:
        _content(an, content, lang, prog, s, depth)


def _content(an: Analyser, content: str, lang: str, prog: str, s: object, depth: int) -> None:
    """The text of a file (or of stdin) a program runs, read as its language."""
    if lang == "makefile":
        for act in escapes.recipes(content):
            _run(an, act.text, depth, s)
    elif lang == "crontab":
        for act in escapes.crontab_lines(content):
            _run(an, act.text, depth, s)
    elif lang in ("escape", "sed"):
        for act in (escapes.escape_lines(content) if lang == "escape" else escapes.sed_script(content)):
            _do(an, act, None, s, depth)
    elif lang == "sshconfig":
        for line in content.splitlines():
            for act in escapes.config_value("sshcfg", line.strip()):
                _do(an, act, None, s, depth)
    elif lang.startswith("code:") or lang not in ("shell", "binary", "gitconfig"):
        _code(an, content, lang.removeprefix("code:"), s, depth)
    elif content:
        _run(an, content, depth, s)


def _manifest(an: Analyser, name: str, prog: str, s: object, depth: int) -> None:
    """A lifecycle file (package.json, setup.py, Makefile, .git/hooks) written in this line."""
    cwd = s.cwd  # type: ignore[attr-defined]
    for fname in MANIFEST_NAMES.get(name, (name,)):
        path = normalise(fname, cwd, an.home)
        hits = [p for p in an.files if p == path or (name == ".git/hooks" and under(p, path))]
        for p in hits:
            content = an.files[p]
            if content is None:
                an._hit("NET-002", prog, p)
                continue
            if p in an.opaque:
                an._hit("EXEC-002", prog, f"{p} (written in this line; its content cannot be read)")
                continue
            how = MANIFESTS.get(name, "shell")
            if how == "json-scripts":
                for act in escapes.json_scripts(content):
                    _do(an, act, None, s, depth)
            elif how in ("makefile", "justfile", "yaml-cmds"):
                read = {"makefile": escapes.recipes, "justfile": escapes.justfile_recipes,
                        "yaml-cmds": escapes.yaml_cmds}[how]
                for act in read(content):
                    _run(an, act.text, depth, s)
            elif how.startswith("code:"):
                _code(an, content, how[5:], s, depth)
                for body in script_defs.runner_calls(content):
                    _run(an, body, depth, s)
            else:
                _run(an, content, depth, s)


def _isolated(an: Analyser, act: Act, inv: Inv | None, s: object, depth: int) -> list:
    """Hits of `act` analysed on its own, leaving the analyser's state as it was."""
    saved = an.hits, an.decoded, dict(an.files)
    an.hits, an.decoded = {}, []
    try:
        if act.kind == "shell":
            an.run(escapes.strip_prefix(act.text), depth + 1, s.env, s.cwd)  # type: ignore[attr-defined]
        else:
            _do(an, act, inv, s, depth)
    except (*_PARSE_ERRORS, DepthError):
        pass
    finally:
        found = list(an.hits.values())
        an.hits, an.decoded, an.files = saved
    return found
