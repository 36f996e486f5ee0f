"""What one value of each kind in the program table makes run (see `guardian.programs_table`).

Parts:
    emit: kind + value (+ the whole argv, for context) -> Acts: a shell line
        (prefixes stripped; a bare shell becomes EXEC-001), an argv, a file of
        a language, code, a rule, a directory; config keys, aliases, TeX, m4,
        sed, rpm macros, recipes, fzf bindings, socat addresses...

Pure: nothing here reads the table (that is `guardian.programs`) or the analyser.
"""

from __future__ import annotations

import re

from tether.common.record import replace
from tether.guardian import escapes
from tether.guardian.escapes import Act


def emit(kind: str, value: str, argv: list[str]) -> list[Act]:
    """Acts for one value of the given kind (see programs_table for the kinds)."""
    if kind in ("none", "") or value is None:
        return []
    if kind == "shell":
        body = escapes.strip_prefix(value)
        if escapes.bare_shell(body):
            return [Act("rule", "EXEC-001", detail=value[:60])]
        return [Act("shell", body)] if body.strip() else []
    if kind == "rshell":
        return [replace(a, remote=True, detail="host") for a in emit("shell", value, argv)]
    if kind == "shellpath":
        return _shellpath(value)
    if kind == "loadpath":  # PYTHONPATH=a:b, GIT_CONFIG_GLOBAL=f: a folder or file code is loaded from
        return [Act("file", p, lang="shell", how="outside") for p in value.split(":")
                if p and p != "/dev/null" and not p.startswith(_SYSTEM_LOAD)]
    if kind in ("script", "extfile", "sshconfig"):
        lang = "sshconfig" if kind == "sshconfig" else "shell"
        return [] if value in ("-", "/dev/stdin") else [
            Act("file", value, lang=lang, how="outside" if kind == "extfile" else "script")]
    if kind == "bindx":
        m = re.match(r"""^\s*["']?[^"':]*["']?\s*:\s*["']?(.*?)["']?\s*$""", value, re.S)
        return [Act("shell", m.group(1))] if m and m.group(1) else []
    if kind == "argv":
        return [Act("argv", argv=tuple(value.split()))]
    if kind in ("file", "file_text"):
        return [Act("file", value, lang="shell")]
    if kind.startswith(("file:", "script:")):
        how, _, lang = kind.partition(":")  # `-`/`/dev/stdin`: program_pass reads stdin instead
        return [Act("file", value, lang=lang, how="script" if how == "script" else "")]
    if kind == "ask":
        return [Act("rule", "EXEC-002", detail=f"{argv[0] if argv else ''} {value}"[:80])]
    if kind == "escape":
        return escapes.escape_lines(value)
    if kind.startswith("code:"):
        return [Act("code", value, lang=kind[5:])]
    if kind in ("gitcfg", "aptcfg", "sshcfg", "hgcfg"):
        return escapes.config_value(kind, value)
    if kind == "alias":
        name, eq, body = value.partition("=")
        ok = eq and body.strip() and re.fullmatch(r"[\w.:@%+,-]+", name)
        return [Act("shell", body, remote=True)] if ok else []
    if kind == "shell_each":
        return emit("shell", value, argv)
    if kind == "makefile":
        return escapes.recipes(value.replace("\\n", "\n").replace("; ", "\n\t"))
    if kind == "makefile_file":
        return [Act("file", value, lang="makefile", how="script")]
    if kind == "crontab":
        return [] if value.startswith("-") and value != "-" else [Act("file", value, lang="crontab")]
    if kind == "service":
        return [Act("file", value, lang="shell")] if "/" in value else []
    if kind == "dir":
        return [Act("dir", value)]
    if kind == "url":
        if value.startswith("ext::"):
            return [Act("shell", value[5:].replace("% ", " ").replace("%%", "%"))]
        return [Act("rule", "EXEC-002", detail=value[:60])] if value.startswith("fd::") else []
    if kind == "gccwrapper":
        return [Act("argv", argv=tuple(value.split(",")))]
    if kind == "cargocfg":
        return [Act("rule", "EXEC-002", detail=value[:60])] if any(
            k in value for k in ("runner", "linker", "rustc-wrapper", "rustc=")) else []
    if kind == "xdisplay":
        local = re.match(r"^(?:unix|localhost|127\.[\d.]+)?:\d", value)
        return [] if local else [Act("rule", "SHELL-006", detail=value)]
    if kind == "rforward":
        return [Act("rule", "SHELL-007", detail=f"ssh -R {value}")]
    if kind == "revshell":
        return [Act("rule", "SHELL-008", detail=f"{argv[0] if argv else ''} {value}"[:60])]
    if kind == "svcenable":
        return [Act("rule", "PERSIST-005", detail=value)] if value in (
            "defaults", "enable", "on", "add", "start") else []
    if kind == "npmcfg":
        key, eq, val = value.partition("=")
        if eq and key in ("script-shell", "shell", "editor", "git", "browser", "viewer"):
            return _shellpath(val)
        return []
    if kind == "tunnel":
        return [Act("rule", "SHELL-007", detail=f"{argv[0] if argv else ''} {value}"[:60])]
    if kind == "fzfbind":
        return [Act("shell", m.group(1)) for m in re.finditer(
            r"(?:execute(?:-silent)?|reload|become|preview)[(:\[{]([^)\]}]*)", value)]
    if kind == "rtorrentopt":
        return [Act("shell", m.group(1).replace(",", " ")) for m in re.finditer(
            r"execute(?:\.throw|\.nothrow)?(?:\.bg)?\s*=\s*(.*)$", value)]
    if kind == "prompt":
        return escapes.prompt_substs(value)
    if kind == "rpmeval":
        return escapes.rpm_macro(value)
    handler = {"tex": escapes.tex, "m4": escapes.m4, "sed": escapes.sed_script,
               "socat": escapes.socat_address, "gitconfig": _gitconfig(argv)}.get(kind)
    return handler(value) if handler else []


def _gitconfig(argv: list[str]):  # type: ignore[no-untyped-def]
    """`git config [--global] KEY VALUE`: the setting, judged like `git -c KEY=VALUE`."""
    pos = [a for a in argv[argv.index("config") + 1 :] if not a.startswith("-")] \
        if "config" in argv else []

    def one(word: str) -> list[Act]:
        if len(pos) >= 2 and word == pos[0]:
            return escapes.config_value("gitcfg", f"{pos[0]}={' '.join(pos[1:])}")
        return []

    return one


_SYSTEM_LOAD = ("/usr/", "/lib", "/opt/", "/nix/", "/etc/", "/snap/", "/gnu/")
"""Load-path entries owned by the system's package manager, not writable by the agent."""


def _shellpath(value: str) -> list[Act]:
    """A program path (maybe with arguments) that is executed directly."""
    if any(c.isspace() for c in value.strip()):
        return emit("shell", value, [])
    if escapes.bare_shell(value):
        return []
    if "/" in value:
        return [Act("file", value, lang="binary")]
    return [Act("argv", argv=(value,))]
