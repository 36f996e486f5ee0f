"""Perl, ruby, node, php, lua, R, tcl and awk code: the calls that run commands or touch files.

Parts:
    script_actions: code + language -> actions (see `code_actions.Effects`).

Per language, a table maps a callee's last name to what it does:
    shell   a command line run through a shell (perl/ruby `system "x"`,
            backticks, qx, %x, php system/exec/passthru/shell_exec/popen,
            node exec/execSync, lua os.execute/io.popen, R system/shell/pipe);
    auto    a shell line when given one string, an argv when given several or
            a list (perl/ruby system/exec/spawn, php proc_open, R system2);
    argv    program + argument list (node spawn/execFile, php pcntl_exec);
    rdelete / delete / rmdir / write / move / copy / chmod: file-system calls
            judged with the same path rules as rm, touch, mv and chmod;
    open    perl/ruby/php/lua/R open: a pipe mode runs a command, a write mode
            writes the path;
    read / kill: file reads (credential rules) and signals (`kill -SIG PID`);
    code    eval/loadstring/instance_eval/parse(text=) of a literal (or of a
            decoded literal: base64_decode, atob, Buffer.from, Base64.decode64)
            is read again as the same language.
Node's child_process and fs names count only where the code uses those modules.
Other languages (julia, elixir, erlang, groovy, octave, applescript, go, rust,
...) use `_GENERIC`, the common exec/delete names, and `Command::new(..).args`.
Tcl and awk are read by `code_patterns`.
"""

from __future__ import annotations

import re

from tether.guardian.code_actions import NONLIT, Action, Effects, literal
from tether.guardian.code_patterns import awk_actions as _awk
from tether.guardian.code_patterns import tcl_actions as _tcl
from tether.guardian.code_tokens import Call, calls

_EVAL = {"eval": "code", "instance_eval": "code", "class_eval": "code", "module_eval": "code",
         "Function": "code", "loadstring": "code", "load": "code", "assert": "code",
         "create_function": "code", "evalq": "code"}
"""Calls that run a string as code of the same language."""
_FS_COMMON = {"unlink": "delete", "rmdir": "rmdir", "rename": "move", "chmod": "chmod", "kill": "kill",
              "symlink": "copy", "link": "copy"}
_TABLE: dict[str, dict[str, str]] = {
    "perl": {"system": "auto", "exec": "auto", "open3": "open3", "open2": "open2", "run3": "auto",
             "`": "shell", "open": "open", "rmtree": "rdelete",
             "remove_tree": "rdelete", "copy": "copy", "move": "move", "symlink": "copy",
             **_FS_COMMON},
    "ruby": {"system": "auto", "exec": "auto", "spawn": "auto", "`": "shell", "popen": "auto",
             "capture2": "auto", "capture2e": "auto", "capture3": "auto", "popen2": "auto",
             "popen3": "auto", "popen2e": "auto", "pipeline": "auto", "pipeline_r": "auto",
             "rm_rf": "rdelete", "rm_r": "rdelete", "remove_dir": "rdelete", "rmtree": "rdelete",
             "remove_entry": "rdelete", "remove_entry_secure": "rdelete", "rm": "delete",
             "rm_f": "delete", "remove": "delete", "delete": "delete", "write": "write",
             "binwrite": "write", "open": "open", "mv": "move", "cp": "copy", "cp_r": "copy",
             "install": "copy", "ln_s": "copy", "read": "read", "readlines": "read",
             "binread": "read", "foreach": "read", **_FS_COMMON},
    "php": {"system": "shell", "exec": "shell", "passthru": "shell", "shell_exec": "shell",
            "popen": "shell", "proc_open": "auto", "pcntl_exec": "argv", "`": "shell",
            "file_put_contents": "write", "fopen": "open", "copy": "copy", "symlink": "copy",
            "touch": "write", "file_get_contents": "read", "readfile": "read", "file": "read",
            "posix_kill": "kill", **_FS_COMMON},
    "lua": {"execute": "shell", "popen": "shell", "remove": "delete", "rename": "move",
            "open": "open"},
    "R": {"system": "shell", "shell": "shell", "pipe": "shell", "system2": "auto",
          "unlink": "delete", "file.remove": "delete", "remove": "delete", "rename": "move",
          "file.rename": "move", "file.copy": "copy", "writeLines": "write", "write": "write",
          "saveRDS": "write", "Sys.chmod": "chmod", "sink": "write", "file": "open",
          "cat": "write", "parse": "code"},
    "node": {"kill": "kill"},
}
_HOME_CALLS = {"julia": re.compile(r"\bhomedir\(\s*\)"), "R": re.compile(r"\bpath\.expand\(\s*['\"]~['\"]\s*\)")}
"""Calls that return the home folder: the literal `"~"` for the path policy (`rm(homedir(); recursive=true)`)."""
_GENERIC = {"`": "shell", "system": "auto", "exec": "auto", "execute": "shell", "popen": "shell", "spawn": "auto",
            "cmd": "auto", "Command": "auto", "shell": "shell", "script": "shell", "unix": "shell", "dos": "shell",
            "command": "shell", "ProcessBuilder": "auto", "run": "auto", "pipeline": "auto",
            "rmtree": "rdelete", "rm_rf": "rdelete", "rm_r": "rdelete", "rm_rf!": "rdelete", "rm_r!": "rdelete",
            "rm!": "delete", "rm": "delete", "remove_dir_all": "rdelete", "removeItem": "rdelete",
            "deleteRecursively": "rdelete", "unlink": "delete", "delete_file": "delete",
            "rmdir": "rmdir", "remove": "delete", "delete": "delete"}
"""Any other language (julia, elixir, erlang, groovy/scala, octave, applescript ...):
the common names of exec and delete calls (`os:cmd`, `System.cmd`, `run(`cmd`)`,
`do shell script`, `Runtime.exec`, `ProcessBuilder`)."""
_TABLE["julia"] = {**_GENERIC, "rm": "rm", "mv": "move", "cp": "copy", "chmod": "chmod"}
_LISP_DELETE = re.compile(r'\((delete-directory|delete-file)\s+"((?:[^"\\]|\\.)*)"(\s+t\b)?')
"""elisp's deletes: `(delete-directory "DIR" t)` is recursive."""
_LISP_RUN = re.compile(r'\((?:async-)?shell-command(?:-to-string)?\s+"((?:[^"\\]|\\.)*)"|'
                       r'\((?:uiop:)?run-program\s+"((?:[^"\\]|\\.)*\s(?:[^"\\]|\\.)*)"|'
                       r'\((?:call|start)-process\s+((?:"(?:[^"\\]|\\.)*"\s*|nil\s*|t\s*)+)|'
                       r'\((?:[\w.-]+[:/])*(?:run-program|sh|process-run|system\*|process\*)\s+'
                       r'((?:(?:[\'`]|\(list\s+|\(|"(?:[^"\\]|\\.)*")\s*)+)')
_BUILDER = re.compile(r'Command::new\(\s*"([^"]*)"\s*\)((?:\s*\.\s*args?\(\s*&?(?:\[[^\]]*\]|"[^"]*")\s*\))*)')
_PROCESS_PROG = re.compile(r'(?:executableURL\s*=\s*URL\(\s*fileURLWithPath:\s*|launchPath\s*=\s*)"([^"]+)"')
_PROCESS_ARGS = re.compile(r'\.arguments\s*=\s*\[([^\]]*)\]')
"""swift/objc Foundation `Process`: a program path and an argument list set as properties."""
_NODE_CP = {"exec": "shell", "execSync": "shell", "spawn": "argv", "spawnSync": "argv",
            "execFile": "argv", "execFileSync": "argv", "fork": "argv"}
_NODE_FS = {"rmSync": "rm", "rm": "rm", "rmdirSync": "rm", "rmdir": "rm", "unlinkSync": "delete",
            "unlink": "delete", "writeFileSync": "write", "writeFile": "write",
            "appendFileSync": "write", "appendFile": "write", "createWriteStream": "write",
            "copyFileSync": "copy", "copyFile": "copy", "cpSync": "copy", "cp": "copy",
            "renameSync": "move", "rename": "move", "chmodSync": "chmod", "chmod": "chmod",
            "symlinkSync": "copy", "truncateSync": "write", "openSync": "open", "open": "open",
            "readFileSync": "read", "readFile": "read", "createReadStream": "read"}
_CONCAT = re.compile(r"""(["'])([^"'\\$#{}]*)\1\s*[.+]\s*(["'])([^"'\\$#{}]*)\3""")
"""Two string literals joined (`"sys"."tem"`, `'exe'+'cSync'`): one literal."""
_INDIRECT = [
    # php: call_user_func("system", ...), array_map("system", [...]), ("system")(...)
    (re.compile(r"""\b(?:call_user_func_array|array_map|array_walk)\(\s*(["'])(\w+)\1\s*,\s*\[([^\]]*)\]"""),
     r"\2(\3"),
    (re.compile(r"""\b(?:call_user_func|forward_static_call|register_shutdown_function|"""
                r"""register_tick_function)\(\s*(["'])(\w+)\1\s*,\s*"""), r"\2("),
    (re.compile(r"""\(\s*(["'])(\w+)\1\s*\)\s*\("""), r"\2("),
    # ruby: Kernel.send(:system, ...), public_send, __send__, method(:system).call(...)
    (re.compile(r"""(?:\b[A-Z]\w*\.|\bself\.)?\b(?:send|public_send|__send__)\(?\s*[:"'](\w+)["']?\s*,\s*"""),
     r"\1("),
    (re.compile(r"""\bmethod\(\s*[:"'](\w+)["']?\s*\)\s*(?:\.\s*(?:call|yield|===)\s*|\.|\[)\s*[(]?"""), r"\1("),
    # node: cp['exec'+'Sync'](...) (after the literals are joined), cp["execSync"](...)
    (re.compile(r"""\[\s*(["'`])(\w+)\1\s*\]\s*\("""), r".\2("),
]
"""Calls made through a callee's name as data, rewritten as the direct call they make."""
_NAME_VAR = re.compile(r"""\$(\w+)\s*=\s*(["'])(\w+)\2\s*;""")
"""php `$f = "system";`: a variable holding a function name, called later as `$f(...)`."""


def _direct(code: str, lang: str) -> str:
    """`code` with callees named by strings, symbols or joined literals written as direct calls."""
    for _ in range(8):
        joined = _CONCAT.sub(lambda m: m.group(1) + m.group(2) + m.group(4) + m.group(1), code)
        if joined == code:
            break
        code = joined
    for pattern, repl in _INDIRECT:
        code = pattern.sub(repl, code)
    if lang == "php":
        for m in _NAME_VAR.finditer(code):
            code = re.sub(rf"\${m.group(1)}\s*\(", m.group(3) + "(", code)
    return code


_R_CALLS = re.compile(r"\b(file\.remove|file\.rename|file\.copy|Sys\.chmod)\s*\(")
_RECURSIVE = re.compile(r"recursive\s*[:=]\s*(?:true|TRUE|T)\b")


def script_actions(code: str, lang: str) -> list[Action]:
    """What `code` in `lang` would run, delete or write."""
    fx = Effects(lang)
    if lang == "tcl":
        _tcl(code, fx)
    elif lang not in _TABLE and _BUILDER.search(code):
        for m in _BUILDER.finditer(code):  # rust Command::new("rm").args([...]) and friends
            fx.argv([m.group(1), *re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))], "Command::new")
        _generic(code, lang, fx)
    elif lang not in _TABLE and _PROCESS_PROG.search(code):
        args = _PROCESS_ARGS.search(code)
        fx.argv([_PROCESS_PROG.search(code).group(1),  # type: ignore[union-attr]
                 *re.findall(r'"((?:[^"\\]|\\.)*)"', args.group(1) if args else "")], "Process")
        _generic(code, lang, fx)
    elif lang in ("lisp", "elisp", "scheme", "clojure"):
        for m in _LISP_DELETE.finditer(code):
            verb = "delete" if m.group(1) == "delete-file" else "rdelete" if m.group(3) else "rmdir"
            fx.path(verb, m.group(2), m.group(1))
        for m in _LISP_RUN.finditer(code):
            if m.group(1) is not None or m.group(2) is not None:
                fx.shell(m.group(1) if m.group(1) is not None else m.group(2), "shell-command")
            else:  # sbcl run-program, clojure.java.shell/sh, racket system*, emacs call-process: an argv
                words = [w for w in re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(3) or m.group(4))]
                fx.argv(words or NONLIT, "run-program")
    elif lang == "awk":
        _awk(code, fx)
    else:
        _generic(code, lang, fx)
    if re.search(r"\bfork\b[^;\n]{0,20}\bwhile\b[^;\n]{0,20}\bfork\b|while\s*\(?\s*(?:1|true)\s*\)?\s*"
                 r"(?:\{|do)?\s*(?:[\w.:]+\.)?fork\b", code):
        fx.rule("RES-001", "fork in an endless loop")
    return fx.out


def _generic(code: str, lang: str, fx: Effects) -> None:
    """The call table of `lang` (or the common exec/delete names) over its tokenized calls."""
    table = {**_EVAL, **_TABLE.get(lang, _GENERIC)}
    if lang == "lua":
        table.pop("assert", None)
    if lang in ("python", "node"):
        table.pop("load", None)
    if lang == "node":
        if re.search(r"child_process|Deno\.(?:run|Command)|Bun\.spawn|Runtime|ProcessBuilder|"
                     r"\bjava\.|Packages\.|(?<![.\w])exec\s*\(\s*['\"`]", code):
            table.update(_NODE_CP)
            table.update({"run": "auto", "Command": "argv", "spawn": "auto"})
        if re.search(r"\bfs\b|fs/promises|fs-extra|Deno\.remove", code):
            table.update(_NODE_FS)
            table.update({"remove": "rm", "removeSync": "rm", "emptyDirSync": "rm"})
    if lang in _HOME_CALLS:
        code = _HOME_CALLS[lang].sub('"~"', code)
    if lang not in _TABLE:  # elixir/crystal bang and predicate names (`File.rm_rf!(p)`) read as the plain name
        code = re.sub(r"(\w)[!?](?=\s*\()", r"\1", code)
    if lang == "julia":  # keyword arguments after `;` (`rm(p; recursive=true)`) read as more arguments
        code = re.sub(r";\s*(?=\w+\s*=[^=])", ", ", code)
    if lang in ("php", "ruby", "node", "perl"):
        code = _direct(code, lang)
    code_r = _R_CALLS.sub(lambda m: m.group(1).replace(".", "_") + "(", code) if lang == "R" else code
    for call in calls(code_r, lang):
        name = call.short if lang != "R" else call.name.replace("_", ".")
        kind = table.get(name) or table.get(call.short)
        if kind:
            _judge(call, kind, lang, code, fx)


def _judge(call: Call, kind: str, lang: str, code: str, fx: Effects) -> None:
    args = [a for a in call.args if not (isinstance(a, list) and not a and lang == "ruby")]
    if kind == "code":  # eval of a string: read it again as the same language
        text = args[0] if args else NONLIT
        if isinstance(text, str) and literal(text) and len(fx.out) < 200 and code != text:
            fx.out.extend(script_actions(text, lang))
            fx.out.append(Action("guess", text))
        elif args:
            fx.rule("CODE-002", f"{call.name} of code computed at run time")
        return
    if not args and kind in ("shell", "auto", "argv"):
        return  # `x.execute()` on a receiver: the receiver was judged as its own call
    if kind in ("open3", "open2"):  # IPC::Open3 open3(IN, OUT, ERR, CMD...), IPC::Open2 open2(OUT, IN, CMD...)
        args, kind = args[3 if kind == "open3" else 2 :] or [NONLIT], "auto"
    first = args[0] if args else NONLIT
    api = call.name
    if lang == "ruby" and kind == "auto" and first is NONLIT and len(args) > 1:
        args, first = args[1:], args[1]  # an env hash or options first
    if kind == "shell":
        fx.shell(first, api)
    elif kind == "auto":
        if lang == "R" and len(args) > 1:
            rest = args[1] if isinstance(args[1], list) else [args[1]]
            fx.argv([first, *rest], api)
        elif len(args) > 1 and lang != "R":
            flat = [x for a in args for x in (a if isinstance(a, list) else [a])]
            fx.argv(flat, api)
        elif isinstance(first, list):
            fx.argv(first, api)
        else:
            fx.shell(first, api)
    elif kind == "argv":
        rest = args[1] if len(args) > 1 else []
        prog = first
        if lang == "node" and re.search(r"shell\s*:\s*(?:true|['\"])", code):
            fx.shell(" ".join([str(prog), *(rest if isinstance(rest, list) else [])]) if literal(
                prog) and literal(rest) else NONLIT, api)
            return
        fx.argv([prog, *(rest if isinstance(rest, list) else [NONLIT])], api)
    elif kind == "rm":
        fx.path("rdelete" if _RECURSIVE.search(code) else "delete", first, api)
    elif kind in ("rdelete", "delete", "rmdir", "write"):
        verb = "rdelete" if kind == "delete" and lang == "R" and _RECURSIVE.search(code) else kind
        targets = first if isinstance(first, list) else [first]
        if kind == "write" and lang == "R":
            named = _r_file_arg(call, code)
            if call.short == "cat" and named is None:
                return
            targets = [named or (args[1] if len(args) > 1 else NONLIT)]
        if lang == "perl" and kind in ("delete", "rmdir"):
            targets = [x for a in args for x in (a if isinstance(a, list) else [a])] or [NONLIT]
        for t in targets:
            fx.path(verb, t, api)
    elif kind in ("move", "copy"):
        fx.path(kind, first, api, args[1] if len(args) > 1 else NONLIT)
    elif kind == "chmod":
        if lang in ("perl", "ruby"):  # chmod(MODE, FILES)
            for t in args[1:] or [NONLIT]:
                fx.path("chmod", t, api, _octal(first))
        else:
            fx.path("chmod", first, api, _octal(args[1]) if len(args) > 1 else "644")
    elif kind == "open":
        _open(call, lang, args, fx)
    elif kind == "read":
        fx.read(first)
    elif kind == "kill":  # perl kill SIG, PIDS; ruby Process.kill(SIG, PID); php posix_kill(PID, SIG)
        sig, pids = (args[-1], args[:-1]) if lang == "php" else (first, args[1:])
        if lang in ("node",):
            sig, pids = (args[1] if len(args) > 1 else "TERM"), args[:1]
        fx.kill(pids, sig, api)


def _r_file_arg(call: Call, code: str) -> object:
    m = re.search(rf"{re.escape(call.name)}\s*\([^)]*\b(?:file|con)\s*=\s*(['\"])([^'\"]*)\1", code)
    return m.group(2) if m else None


def _octal(mode: object) -> str:
    if isinstance(mode, str) and re.fullmatch(r"0?[0-7]{3,4}", mode):
        return mode.lstrip("0").rjust(3, "0") if len(mode.lstrip("0")) >= 3 else mode
    return "644"


def _open(call: Call, lang: str, args: list[object], fx: Effects) -> None:
    """open(): a pipe mode runs a command, a write mode writes, a read mode reads."""
    if lang == "perl" and args:
        args = args[1:]  # the filehandle
    if lang == "perl" and len(args) == 1 and isinstance(args[0], str) and literal(args[0]):
        spec = args[0].strip()
        if spec.startswith("|") or spec.endswith("|"):
            fx.shell(spec.strip("|").strip(), "open |")
        elif spec.startswith(">") or spec.startswith("+"):
            fx.path("write", spec.lstrip("+<>").strip(), "open >")
        else:
            fx.read(spec.lstrip("<").strip())
        return
    if lang == "perl" and len(args) >= 2:
        mode = args[0]
        if mode in ("-|", "|-") and len(args) == 2 and not isinstance(args[1], list):
            fx.shell(args[1], "open |")  # one command string: perl runs it through the shell
        elif mode in ("-|", "|-"):
            fx.argv([x for a in args[1:] for x in (a if isinstance(a, list) else [a])], "open |")
        elif isinstance(mode, str) and literal(mode) and ">" in mode:
            fx.path("write", args[1], "open >")
        elif not literal(mode):
            fx.rule("CODE-002", "open with a mode computed at run time")
        else:
            fx.read(args[1])
        return
    path = args[0] if args else NONLIT
    mode = args[1] if len(args) > 1 else "r"
    if isinstance(path, str) and literal(path) and path.startswith("|"):  # ruby open("|cmd")
        fx.shell(path[1:], "open |")
    elif not literal(mode):
        fx.path("write", path, "open")
    elif any(c in str(mode) for c in "wax+c"):
        fx.path("write", path, "open")
    else:
        fx.read(path)
