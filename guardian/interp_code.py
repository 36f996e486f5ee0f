"""Which code an interpreter invocation runs, and in which language.

Parts:
    language: program name -> "python", "perl", "ruby", "node", "php", "lua",
        "R", "tcl", "awk" or "".
    scan_code: code + language -> actions (Python through `ast`, the others
        through `code_script`), plus SHELL-004 where a socket meets a process.
    code_payloads: Inv -> actions for the code given by `-c`/`-e`/`-r`/
        `--eval`/`-E` (also at the end of a flag cluster: `perl -lne`,
        `python3 -Ic`; several `-e` are all read), a script file written
        earlier in the same line, or stdin (heredoc, here-string, pipe).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tether.guardian.code_actions import Action
from tether.guardian.rules import Inv

_CODE_LETTER = {"python": "c", "perl": "eE", "ruby": "e", "node": "ep", "php": "r", "lua": "e",
                "R": "e", "tcl": "c", "awk": ""}
_LONG = {"node": ("--eval", "--print"), "R": ("--expr",), "awk": ("--source",)}
_VALUED = {"python": "mWXQ", "perl": "IMmx", "ruby": "IrCEx", "node": "r", "php": "cdz",
           "lua": "l", "R": "f", "tcl": "", "awk": "Fvf"}
_LANG = [(re.compile(r"^(?:python|pypy)[0-9.]*$"), "python"), (re.compile(r"^perl[0-9.]*$"), "perl"),
         (re.compile(r"^(?:ruby|jruby)[0-9.]*$"), "ruby"),
         (re.compile(r"^(?:node|nodejs|bun|deno)$"), "node"), (re.compile(r"^php[0-9.]*(?:-cli)?$"), "php"),
         (re.compile(r"^(?:lua|luajit)[0-9.]*$"), "lua"), (re.compile(r"^(?:rscript|r)$"), "R"),
         (re.compile(r"^(?:tclsh|wish|expect)[0-9.]*$"), "tcl"),
         (re.compile(r"^(?:g|m|n)?awk$"), "awk")]
_SOCKET = re.compile(r"socket|Socket\(|fsockopen|TCPSocket|IO::Socket|net\.connect|net\.Socket|Net::|"
                     r"createConnection|/dev/tcp/|net\.Dial|TcpStream|gen_tcp|:ssl\.connect")
_SPAWN = re.compile(r"subprocess|pty\.spawn|os\.dup2|dup2\(|/bin/(?:ba|z|da)?sh\b|\bexec|spawn\(|"
                    r"child_process|popen|\bsystem\b|proc_open|shell_exec|passthru|`|\bsh\b|cmd\.exe|"
                    r"\bpipe\(|exec\.Command|ProcessBuilder|Process\.|os:cmd")
_UPLOAD = re.compile(r"requests\.(?:post|put|patch)|urlopen\([^)]*data\s*=|\.request\(|fetch\(|"
                     r"Net::HTTP|HTTP::Request|LWP|curl_setopt|http\.(?:post|put)|httr::(?:POST|PUT)|"
                     r"\.sendall\(|\.send\(|ftplib|smtplib|paramiko")
_READS = re.compile(r"\bopen\(|readFileSync|readFile\(|File\.(?:read|open)|file_get_contents|io\.open|"
                    r"slurp|read_file|readLines|Path\([^)]*\)\.read")
_REMOTE = re.compile(r"https?://(?!localhost|127\.|\[::1\]|0\.0\.0\.0)[\w.-]+|[\"'](?:\d{1,3}\.){3}\d{1,3}[\"']|"
                     r"host\s*[:=]\s*[\"'](?!localhost|127\.)[\w.-]+\.[a-z]{2,}")
_BUILD_EXT = {".py": "python", ".pl": "perl", ".rb": "ruby", ".js": "node", ".mjs": "node",
              ".ts": "node", ".php": "php", ".lua": "lua", ".r": "R", ".tcl": "tcl", ".awk": "awk"}

_FED_SHELL = re.compile(r"\s*(?:\S*/)?(?:ba|z|da|k|mk|a|r)?sh(?:\s+-[a-z]+)*\s*$")
_LITERAL = re.compile(r"'((?:[^'\\\n]|\\.){0,400})'|\"((?:[^\"\\\n]|\\.){0,400})\"")
StdinActions = Callable[[Inv], list[Action]]


def language(prog: str) -> str:
    """The interpreter language of a program name, or ""."""
    return next((lang for rx, lang in _LANG if rx.match(prog)), "")


def scan_code(code: str, lang: str) -> list[Action]:
    """Shell commands, file-system calls and sockets that a snippet of `lang` code performs."""
    from tether.guardian.code_python import python_actions  # imported only for code (ast is ~1 ms of a start)
    from tether.guardian.code_script import script_actions
    from tether.guardian.secrets_model import code_flow

    out = python_actions(code) if lang == "python" else script_actions(code, lang)
    if any(a.kind == "shell" and _FED_SHELL.match(a.text) for a in out):
        # the code writes into a shell's stdin (`open(F, "| sh")`, `print x | "sh"`,
        # Popen(["sh"], stdin=PIPE)): every string in it may be a command line
        out += [Action("guess", m.group(1) or m.group(2) or "") for m in _LITERAL.finditer(code)]
    if lang != "awk" and _SOCKET.search(code) and _SPAWN.search(code):
        out.append(Action("rule", "SHELL-004", f"{lang}: socket wired to a process"))
    if _UPLOAD.search(code) and _READS.search(code) and _REMOTE.search(code):
        out.append(Action("rule", "EXFIL-001", f"{lang}: reads a file and sends data to a remote host"))
    sends = bool(_UPLOAD.search(code) or _SOCKET.search(code))
    out += [Action("rule", rid, detail) for rid, detail in code_flow(code, lang, sends)]
    if lang not in ("python", "awk"):
        out.append(Action("guess", code))
    return out


def written_code(inv: Inv, files: dict[str, str | None], resolve: Callable[[str], str]) -> list[Action]:
    """Source files written earlier in the same line and handed to a compiler or runner
    (`go run t.go`, `gcc x.c && ./a.out`, `javac X.java`): their code is read too."""
    out: list[Action] = []
    for arg in inv.args:
        if arg.startswith("-") or "/" not in arg and "." not in arg:
            continue
        content = files.get(resolve(arg))
        if content:
            ext = "." + arg.rsplit(".", 1)[-1].lower() if "." in arg else ""
            out += scan_code(content, _BUILD_EXT.get(ext, "generic"))
    return out


def code_payloads(inv: Inv, lang: str, files: dict[str, str | None],
                  resolve: Callable[[str], str], stdin: StdinActions) -> list[Action]:
    """Actions for the code `inv` runs (command line, script written earlier, or stdin)."""
    codes, operands = _code_args(inv, lang)
    if codes:
        return [x for code in codes for x in scan_code(code, lang)]
    if lang == "awk":
        return scan_code(operands[0], lang) if operands else []
    script = operands[0] if operands else None
    if script is not None and script != "-":
        content = files.get(resolve(script), "")
        if content is None:
            return [Action("rule", "NET-002", script)]
        return scan_code(content, lang) if content else []
    return [x for a in stdin(inv) for x in (scan_code(a.text, lang) if a.kind == "shell" else [a])]


def _code_args(inv: Inv, lang: str) -> tuple[list[str], list[str]]:
    """(code given by options, the operands after the options)."""
    letters, longs, valued = _CODE_LETTER[lang], _LONG.get(lang, ()), _VALUED[lang]
    args, codes, i = inv.args, [], 0
    if inv.prog == "deno":  # `deno eval CODE`; `deno run FILE` is a script
        return (args[-1:] if args[:1] == ["eval"] else []), [a for a in args[1:] if not a.startswith("-")]
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if a == "--":
            return codes, args[i + 1 :]
        if not a.startswith("-") or a == "-":
            break
        if a in longs:
            codes += [nxt] if nxt is not None else []
            i += 2
            continue
        if a.startswith(tuple(o + "=" for o in longs)):
            codes.append(a.split("=", 1)[1])
        elif lang == "node" and a in ("-e", "-p") or (lang == "awk" and a == "-e"):
            codes += [nxt] if nxt is not None else []
            i += 1
        elif not a.startswith("--"):
            for k, ch in enumerate(a[1:], 1):
                if ch in letters and letters:
                    rest = a[k + 1 :]
                    if rest:
                        codes.append(rest)
                    elif nxt is not None:
                        codes.append(nxt)
                        i += 1
                    if lang == "python":
                        return codes, []
                    break
                if ch in valued:
                    if lang == "python" and ch == "m":  # `python -m MODULE`: stdin is its data
                        return codes, [a[k + 1 :] or (nxt or "-m")]
                    i += 0 if a[k + 1 :] else 1
                    break
        elif lang == "awk" and a in ("--file", "--include") and nxt is not None:
            return [], []
        i += 1
    if lang == "awk" and any(a in ("-f",) or a.startswith("-f") for a in args[:i]):
        return codes, []
    return codes, args[i:]
