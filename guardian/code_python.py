"""Python code given to `python -c`, a heredoc or a pipe, read with the `ast` module.

Parts:
    python_actions: code -> actions. Code that does not parse is an `ask`
        (CODE-001), never an allow.

What is judged (through `code_actions.Effects`):
    commands: os.system/popen, subprocess.* (a list is an argv; a string is a
        shell line with shell=True, else a program name), os.exec*/spawn*/
        posix_spawn*, pty.spawn, commands.getoutput, asyncio subprocesses;
    the file system: shutil.rmtree/move/copy*, os.remove/unlink/rmdir/
        removedirs/rename/replace/chmod/chown/truncate/symlink, open(path, w/a/x/+),
        pathlib's unlink/rmdir/write_text/write_bytes/chmod/rename/touch;
    code run as code: exec/eval/compile of a literal (analysed again as Python);
    a fork inside a loop (RES-001).

Values are followed where they are literal: string and bytes constants, `+`
and f-strings of literals, `" ".join([...])`, `os.path.join`, `Path(a) / b`,
`os.path.expanduser`, names assigned once, `getattr(os, "system")`,
`__import__("os")`, and base64/hex/rot13 decoding of a literal. Anything else is
NONLIT: a command or path computed at run time makes the call `ask`.
"""

from __future__ import annotations

import ast
import re

from tether.guardian.code_actions import NONLIT, Action, Choices, Effects, literal
from tether.guardian.code_values import PATH_TYPES, Values

_SHELL = {"os.system", "os.popen", "commands.getoutput", "commands.getstatusoutput",
          "subprocess.getoutput", "subprocess.getstatusoutput", "asyncio.create_subprocess_shell",
          "os.popen2", "os.popen3", "os.popen4", "platform.popen"}
_SUBPROCESS = {"subprocess.run", "subprocess.call", "subprocess.check_call",
               "subprocess.check_output", "subprocess.Popen"}
_EXEC_L = {"os.execl": 1, "os.execlp": 1, "os.execle": 1, "os.execlpe": 1,
           "os.spawnl": 2, "os.spawnlp": 2, "os.spawnle": 2, "os.spawnlpe": 2}
_EXEC_V = {"os.execv": 1, "os.execve": 1, "os.execvp": 1, "os.execvpe": 1, "os.spawnv": 2,
           "os.spawnve": 2, "os.spawnvp": 2, "os.spawnvpe": 2, "os.posix_spawn": 1,
           "os.posix_spawnp": 1}
_DELETE = {"shutil.rmtree": "rdelete", "os.remove": "delete", "os.unlink": "delete",
           "os.rmdir": "rmdir", "os.removedirs": "rmdir", "os.truncate": "write",
           "os.mkfifo": "write", "os.mknod": "write", "distutils.dir_util.remove_tree": "rdelete",
           "setuptools._distutils.dir_util.remove_tree": "rdelete"}
_MOVE = {"os.rename": "move", "os.replace": "move", "os.renames": "move", "shutil.move": "move",
         "shutil.copy": "copy", "shutil.copy2": "copy", "shutil.copyfile": "copy",
         "shutil.copytree": "copy", "os.symlink": "copy", "os.link": "copy"}
_PATHLIB = {"unlink": "delete", "rmdir": "rmdir", "write_text": "write", "write_bytes": "write",
            "touch": "write", "chmod": "chmod", "rename": "move", "replace": "move",
            "symlink_to": "write", "hardlink_to": "write", "open": "open"}
_PATH_ONLY = frozenset({"unlink", "rmdir", "write_text", "write_bytes", "symlink_to", "hardlink_to"})
_CODE_RUNNERS = {"timeit.timeit": 0, "timeit.repeat": 0, "timeit.Timer": 0, "pdb.run": 0, "pdb.runeval": 0,
                 "cProfile.run": 0, "profile.run": 0, "trace.Trace.run": 0}
"""Library calls that run a code string as Python (argument index of the code)."""
_CODE_METHODS = frozenset({"runsource", "runcode", "push", "runctx"})
"""Methods of code.InteractiveInterpreter/Console and profilers that run a code string."""
_PAGERS = {"pydoc.pipepager": 1, "pydoc.tempfilepager": 1}
"""pydoc pagers: the argument that is a shell command line."""
_DYNAMIC = {"eval", "exec", "compile", "getattr", "__import__", "importlib.import_module",
            "marshal.loads", "pickle.loads"}


_FETCH = re.compile(r"urlopen|urlretrieve|^requests\.|^httpx\.|^urllib|^http\.client|"
                    r"^aiohttp|^pycurl|^socket\.")
_CHILD = Choices(["{}"])
"""The entries of `files`/`dirs` from os.walk: names of children."""
_KNOWN = _SHELL | _SUBPROCESS | set(_EXEC_L) | set(_EXEC_V) | set(_DELETE) | set(_MOVE) | {
    "os.chmod", "os.chown", "pty.spawn", "os.fork", "pathlib.Path"}


def python_fragment(code: str) -> str:
    """Code appended to a Python file that is already there, made readable on its own.

    A method body or the tail of a class (`    return x`) is dedented, or read inside
    `if True:` when its first line is indented deeper than the rest; code that
    reads as it stands, and code no form makes readable (CODE-001 then), is
    returned unchanged."""
    import textwrap

    for form in (code, textwrap.dedent(code), "if True:\n" + textwrap.indent(textwrap.dedent(code), "    ")):
        try:
            ast.parse(form)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        return form
    return code


def python_actions(code: str) -> list[Action]:
    """What `code` would run, delete or write, as actions for the analyser."""
    fx = Effects("python")
    _Reader(fx, 0).read(code)
    return fx.out


class _Reader(Values):
    def __init__(self, fx: Effects, depth: int) -> None:
        self.fx, self.depth = fx, depth
        self.alias: dict[str, str] = {}
        self.values: dict[str, object] = {}
        self.star: list[str] = []

    def read(self, code: str) -> None:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            self.fx.rule("CODE-001", f"code does not parse ({type(e).__name__})")
            return
        nodes = list(ast.walk(tree))  # one walk, used twice
        self._bind(nodes)
        self._visit(nodes, "fork" in code)

    # -- names: imports and assignments -----------------------------------------------
    def _bind(self, nodes: list[ast.AST]) -> None:
        seen: dict[str, object] = {}
        self.values = seen  # bindings made so far are visible while binding
        for node in nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.alias[(a.asname or a.name).split(".")[0] if not a.asname else a.asname] = \
                        a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    if a.name != "*":
                        self.alias[a.asname or a.name] = f"{node.module}.{a.name}"
                    else:
                        self.star.append(node.module)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                value = self.value(node.value)
                seen[name] = value if name not in seen or seen[name] == value else NONLIT
                dotted = self.name(node.value)
                if dotted and (isinstance(node.value, ast.Call) or "." in dotted):
                    self.alias[name] = dotted
                elif isinstance(node.value, ast.Call) and self.name(node.value.func) in PATH_TYPES:
                    self.alias[name] = "pathlib.Path"
            elif isinstance(node, (ast.For, ast.comprehension)) and self._loop(node, seen):
                continue
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)):
                target = getattr(node, "target", None)
                for n in ast.walk(target) if target is not None else []:
                    if isinstance(n, ast.Name):
                        seen[n.id] = NONLIT
        self.values = seen

    def _loop(self, node: ast.For | ast.comprehension, seen: dict[str, object]) -> bool:
        """Bind a loop variable over something whose paths are known: literal lists,
        `os.walk(R)` (root is R, files/dirs entries are children), `glob.glob(P)`,
        `Path(R).rglob/glob/iterdir()`, `os.listdir(R)` (names relative to cwd)."""
        it, target = node.iter, node.target
        fn = self.name(it.func) if isinstance(it, ast.Call) else ""
        args = [self.value(a) for a in it.args] if isinstance(it, ast.Call) else []
        base = self.value(it.func.value) if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) \
            else NONLIT
        each: object = None
        if fn == "os.walk" and args and literal(args[0]) and isinstance(target, ast.Tuple) and \
                len(target.elts) == 3 and all(isinstance(e, ast.Name) for e in target.elts):
            root, dirs, files = (e.id for e in target.elts)  # type: ignore[attr-defined]
            seen[root], seen[dirs], seen[files] = args[0], _CHILD, _CHILD
            return True
        if fn in ("glob.glob", "glob.iglob") and args and literal(args[0]):
            each = args[0]
        elif isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and literal(base) and \
                it.func.attr in ("rglob", "glob", "iterdir") and self._is_path(it.func.value):
            pattern = args[0] if args and literal(args[0]) else "*"
            each = f"{base}/**/{pattern}" if it.func.attr == "rglob" else (
                f"{base}/{pattern}" if it.func.attr == "glob" else f"{base}/{{}}")
        elif fn in ("os.listdir", "os.scandir") and (not args or literal(args[0])):
            each = "{}"
        elif isinstance(it, (ast.List, ast.Tuple)):
            items = [self.value(e) for e in it.elts]
            each = Choices(items) if items and literal(items) and len(items) <= 8 else None
        elif isinstance(it, ast.Name) and seen.get(it.id) is _CHILD:
            each = "{}"
        if each is None or not isinstance(target, ast.Name):
            return False
        seen[target.id] = each
        return True

    def name(self, node: ast.AST) -> str:
        """Dotted name of a callee/attribute with imports resolved, or ""."""
        if isinstance(node, ast.Name):
            if node.id in self.alias:
                return self.alias[node.id]
            for module in self.star:
                if f"{module}.{node.id}" in _KNOWN:
                    return f"{module}.{node.id}"
            return node.id
        if isinstance(node, ast.Attribute):
            base = self.name(node.value)
            if node.attr in ("__call__", "__func__", "__dict__"):
                return base
            return f"{base}.{node.attr}" if base else ""
        if isinstance(node, ast.Subscript):
            key = self.value(node.slice)
            base = self.name(node.value)
            if not (isinstance(key, str) and literal(key)):
                return ""
            if base == "sys.modules":
                return key
            return f"{base}.{key}" if base and base not in ("dict", "list") else ""
        if isinstance(node, ast.Call):
            fn = self.name(node.func)
            args = node.args
            if fn in ("__import__", "importlib.import_module") and args:
                mod = self.value(args[0])
                return mod if literal(mod) else ""
            if fn in ("vars", "operator.attrgetter") and args:
                return self.name(args[0])
            if fn == "getattr" and len(args) >= 2:
                attr = self.value(args[1])
                base = self.name(args[0])
                return f"{base}.{attr}" if base and literal(attr) else ""
        return ""

    # -- calls ----------------------------------------------------------------------------
    def _visit(self, nodes: list[ast.AST], forks: bool) -> None:
        for node in nodes:
            if forks and isinstance(node, (ast.While, ast.For)):
                body = ast.Module(body=node.body, type_ignores=[])
                if any(isinstance(n, ast.Call) and self.name(n.func) in ("os.fork", "os.forkpty")
                       for n in ast.walk(body)):
                    self.fx.rule("RES-001", "os.fork() in a loop")
            if isinstance(node, ast.Call):
                self._call(node)
                self._references(node)

    def _call(self, node: ast.Call) -> None:
        fn = self.name(node.func)
        args = node.args
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        first = self.value(args[0] if args else next(iter(kw.values()), None))
        fx = self.fx
        if fn in _SHELL:
            fx.shell(first, fn)
        elif fn in _SUBPROCESS or fn == "asyncio.create_subprocess_exec":
            if fn == "asyncio.create_subprocess_exec":
                fx.argv([self.value(a) for a in args], fn)
            elif _truthy(kw.get("shell")):
                fx.shell(first, fn)
            else:
                fx.argv(first, fn)
        elif fn in _EXEC_L:
            fx.argv([self.value(a) for a in args[_EXEC_L[fn] :]], fn)
            self._program(args, _EXEC_L[fn] - 1, fn)
        elif fn in _EXEC_V:
            k = _EXEC_V[fn]
            fx.argv(self.value(args[k]) if len(args) > k else NONLIT, fn)
            self._program(args, k - 1, fn)
        elif fn == "pty.spawn":
            fx.argv(first, fn)
        elif fn in _DELETE:
            fx.path(_DELETE[fn], first, fn)
        elif fn in _MOVE and len(args) >= 2:
            fx.path(_MOVE[fn], first, fn, self.value(args[1]))
        elif fn in ("os.chmod", "os.lchmod") and len(args) >= 2:
            fx.path("chmod", first, fn, _mode(args[1]))
        elif fn in ("os.kill", "os.killpg") and args:
            fx.kill([self.value(args[0])], self.value(args[1]) if len(args) > 1 else "TERM", fn)
        elif fn.startswith("ctypes.") or (isinstance(node.func, ast.Attribute) and
                                           node.func.attr in ("system", "popen") and not fn):
            fx.rule("CODE-002", f"{fn or node.func.attr} calls native code")  # type: ignore[attr-defined]
            if isinstance(node.func, ast.Attribute) and node.func.attr == "system":
                fx.shell(first, "system")
        elif fn in _CODE_RUNNERS or (isinstance(node.func, ast.Attribute) and node.func.attr in _CODE_METHODS
                                     and (fn.startswith(("code.", "cProfile.", "profile.")) or not fn)):
            k = _CODE_RUNNERS.get(fn, 0)
            code = self.value(args[k]) if len(args) > k else self.value(kw.get("stmt") or kw.get("source"))
            if args or kw:
                self._code(code, fn or node.func.attr, args[k] if len(args) > k else None)  # type: ignore[attr-defined]
        elif fn in _PAGERS:
            k = _PAGERS[fn]
            fx.shell(self.value(args[k]) if len(args) > k else self.value(kw.get("cmd")), fn)
        elif fn in ("runpy.run_path", "imp.load_source") and args:
            path = self.value(args[-1] if fn == "imp.load_source" else args[0])
            fx.argv(["python3", path] if literal(path) else NONLIT, fn)
        elif fn in ("os.chown", "os.lchown", "shutil.chown"):
            fx.path("chmod", first, fn, "644")
        elif fn in ("open", "io.open", "os.open", "codecs.open"):
            self._open(node, fn, first)
        elif fn in ("exec", "eval", "compile", "builtins.exec", "builtins.eval"):
            self._code(first, fn, args[0] if args else None)
        elif fn in _DYNAMIC or fn.startswith(("ctypes.", "importlib.")):
            key = self.value(args[1]) if fn == "getattr" and len(args) > 1 else first
            if not literal(key):
                fx.rule("CODE-002", f"{fn} of a value computed at run time")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in _PATHLIB and (
                node.func.attr in _PATH_ONLY or self._is_path(node.func.value)):
            self._pathlib(node, node.func.attr)

    def _references(self, node: ast.Call) -> None:
        """A command-running or deleting callable handed to another call (map, partial,
        atexit.register, Thread/Process target=...) is judged as if it were called
        with each literal string among that call's other arguments."""
        refs = [a for a in [*node.args, *(k.value for k in node.keywords)]
                if isinstance(a, (ast.Name, ast.Attribute, ast.Subscript)) and self._dangerous(self.name(a))]
        if not refs:
            return
        strings = [n.value for a in [*node.args, *(k.value for k in node.keywords)] if a not in refs
                   for n in ast.walk(a) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        for ref in refs:
            fn = self.name(ref)
            for text in strings or [NONLIT]:
                self._call(ast.Call(func=ref, args=[ast.Constant(text)], keywords=[]))
            if fn not in _SHELL and not strings:
                self.fx.rule("CODE-002", f"{fn} handed to another call")

    @staticmethod
    def _dangerous(fn: str) -> bool:
        return bool(fn) and (fn in _SHELL or fn in _SUBPROCESS or fn in _EXEC_L or fn in _EXEC_V or
                             fn in _DELETE or fn in ("pty.spawn", "exec", "eval", "builtins.exec"))

    def _program(self, args: list[ast.expr], k: int, fn: str) -> None:
        """The program path argument of exec*/spawn*: run it when it differs from argv[0]."""
        if 0 <= k < len(args):
            prog = self.value(args[k])
            if not literal(prog):
                self.fx.rule("CODE-002", f"{fn} runs a program computed at run time")

    def _open(self, node: ast.Call, fn: str, path: object) -> None:
        mode_node = node.args[1] if len(node.args) > 1 else next(
            (k.value for k in node.keywords if k.arg in ("mode", "flags")), None)
        mode = "r" if mode_node is None else self.value(mode_node)
        if fn == "os.open":
            flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
            writes = any(f in flags for f in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"))
        else:
            writes = isinstance(mode, str) and (not literal(mode) or any(c in mode for c in "wax+"))
        if writes:
            self.fx.path("write", path, fn)
        else:
            self.fx.read(path)

    def _is_path(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return self.name(node.func) in PATH_TYPES
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self._is_path(node.left)
        return isinstance(node, ast.Name) and self.alias.get(node.id) in PATH_TYPES

    def _pathlib(self, node: ast.Call, attr: str) -> None:
        target = self.value(node.func.value)  # type: ignore[attr-defined]
        verb = _PATHLIB[attr]
        if verb == "open":
            self._open(ast.Call(func=ast.Name("open"), args=[node.func.value, *node.args],  # type: ignore[attr-defined]
                                keywords=node.keywords), "open", target)
        elif verb == "chmod":
            self.fx.path("chmod", target, f"Path.{attr}", _mode(node.args[0]) if node.args else NONLIT)
        elif verb == "move":
            self.fx.path("move", target, f"Path.{attr}", self.value(node.args[0]) if node.args else NONLIT)
        else:
            self.fx.path(verb, target, f"Path.{attr}")

    def _code(self, code: object, fn: str, node: ast.AST | None = None) -> None:
        if node is not None and any(isinstance(n, ast.Call) and _FETCH.search(self.name(n.func))
                                    for n in ast.walk(node)):
            self.fx.rule("NET-001", f"{fn} of code downloaded at run time")
            return
        if isinstance(code, str) and literal(code) and self.depth < 4:
            _Reader(self.fx, self.depth + 1).read(code)
        else:
            self.fx.rule("CODE-002", f"{fn} of code computed at run time")


def _truthy(node: ast.AST | None) -> bool:
    if node is None:
        return False
    return not (isinstance(node, ast.Constant) and not node.value)


def _mode(node: ast.AST) -> object:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        text = ast.unparse(node)
        return "4755" if any(b in text for b in ("S_ISUID", "S_ISGID")) else NONLIT
    return f"{value:04o}" if isinstance(value, int) else NONLIT
