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
import base64
import binascii
import codecs

from guardian.code_actions import NONLIT, Action, Effects, literal

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
           "os.mkfifo": "write", "os.mknod": "write"}
_MOVE = {"os.rename": "move", "os.replace": "move", "os.renames": "move", "shutil.move": "move",
         "shutil.copy": "copy", "shutil.copy2": "copy", "shutil.copyfile": "copy",
         "shutil.copytree": "copy", "os.symlink": "copy", "os.link": "copy"}
_PATHLIB = {"unlink": "delete", "rmdir": "rmdir", "write_text": "write", "write_bytes": "write",
            "touch": "write", "chmod": "chmod", "rename": "move", "replace": "move",
            "symlink_to": "write", "hardlink_to": "write", "open": "open"}
_PATH_ONLY = frozenset({"unlink", "rmdir", "write_text", "write_bytes", "symlink_to", "hardlink_to"})
_PATH_TYPES = frozenset({"pathlib.Path", "Path", "pathlib.PosixPath", "pathlib.PurePath"})
_DECODERS = {"base64.b64decode", "base64.decodebytes", "base64.standard_b64decode",
             "base64.urlsafe_b64decode", "base64.b32decode", "base64.b16decode",
             "binascii.unhexlify", "binascii.a2b_hex", "bytes.fromhex", "binascii.a2b_base64",
             "codecs.decode"}
_DYNAMIC = {"eval", "exec", "compile", "getattr", "__import__", "importlib.import_module",
            "ctypes.CDLL", "marshal.loads", "pickle.loads"}


_KNOWN = _SHELL | _SUBPROCESS | set(_EXEC_L) | set(_EXEC_V) | set(_DELETE) | set(_MOVE) | {
    "os.chmod", "os.chown", "pty.spawn", "os.fork", "pathlib.Path"}


def python_actions(code: str) -> list[Action]:
    """What `code` would run, delete or write, as actions for the analyser."""
    fx = Effects("python")
    _Reader(fx, 0).read(code)
    return fx.out


class _Reader:
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
        self._bind(tree)
        self._visit(tree)

    # -- names: imports and assignments -----------------------------------------------
    def _bind(self, tree: ast.AST) -> None:
        seen: dict[str, object] = {}
        for node in ast.walk(tree):
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
                elif isinstance(node.value, ast.Call) and self.name(node.value.func) in _PATH_TYPES:
                    self.alias[name] = "pathlib.Path"
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)):
                target = getattr(node, "target", None)
                for n in ast.walk(target) if target is not None else []:
                    if isinstance(n, ast.Name):
                        seen[n.id] = NONLIT
        self.values = seen

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
            return f"{base}.{node.attr}" if base else ""
        if isinstance(node, ast.Call):
            fn = self.name(node.func)
            args = node.args
            if fn in ("__import__", "importlib.import_module") and args:
                mod = self.value(args[0])
                return mod if literal(mod) else ""
            if fn == "getattr" and len(args) >= 2:
                attr = self.value(args[1])
                base = self.name(args[0])
                return f"{base}.{attr}" if base and literal(attr) else ""
        return ""

    # -- values -------------------------------------------------------------------------
    def value(self, node: ast.AST | None) -> object:
        """The literal value of an expression (str, or list of str), or NONLIT."""
        if node is None:
            return NONLIT
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bytes):
                return v.decode("latin-1")
            return v if isinstance(v, str) else str(v) if isinstance(v, (int, float)) else NONLIT
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.value(e) for e in node.elts]
        if isinstance(node, ast.Name):
            return self.values.get(node.id, NONLIT)
        if isinstance(node, ast.JoinedStr):
            parts = [self.value(v.value if isinstance(v, ast.FormattedValue) else v)
                     for v in node.values]
            return "".join(parts) if all(isinstance(p, str) and literal(p) for p in parts) else NONLIT
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
            a, b = self.value(node.left), self.value(node.right)
            if isinstance(a, str) and isinstance(b, str) and literal(a) and literal(b):
                return a + b if isinstance(node.op, ast.Add) else a.rstrip("/") + "/" + b
            if isinstance(a, list) and isinstance(b, list):
                return a + b
            return NONLIT
        if isinstance(node, ast.Subscript) and self.name(node.value) == "os.environ":
            return "~" if self.value(node.slice) == "HOME" else NONLIT
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            v = self.value(node.value)
            step = node.slice.step
            if isinstance(v, str) and literal(v) and isinstance(step, ast.UnaryOp) and \
                    node.slice.lower is None and node.slice.upper is None:
                return v[::-1]
            return NONLIT
        if isinstance(node, ast.Call):
            return self._call_value(node)
        return NONLIT

    def _call_value(self, node: ast.Call) -> object:
        fn = self.name(node.func)
        args = [self.value(a) for a in node.args]
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("join", "decode", "encode",
                                                                       "strip", "format"):
            base = self.value(node.func.value)
            if node.func.attr == "join" and isinstance(base, str) and args and isinstance(args[0], list):
                return base.join(args[0]) if literal(args[0]) and literal(base) else NONLIT
            if node.func.attr in ("decode", "encode", "strip"):
                return base
            return NONLIT
        if fn in ("os.path.join", "posixpath.join", "pathlib.Path", "pathlib.PurePath",
                  "pathlib.PosixPath", "Path", "str", "os.path.expanduser", "os.fsencode",
                  "os.fsdecode", "bytes", "bytearray"):
            if args and all(isinstance(a, str) and literal(a) for a in args):
                return "/".join(a.rstrip("/") if k < len(args) - 1 else a for k, a in enumerate(args))
            return NONLIT
        if fn in ("pathlib.Path.home", "os.path.expanduser", "os.getenv", "os.environ.get") and (
                not args or args[0] in ("~", "HOME")):
            return "~"
        if fn in _DECODERS and args and isinstance(args[0], str) and literal(args[0]):
            return _decode(fn, args[0], args[1:])
        if fn == "chr" and args and isinstance(args[0], str) and args[0].isdigit():
            return chr(int(args[0]) % 0x110000)
        return NONLIT

    # -- calls ----------------------------------------------------------------------------
    def _visit(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.While, ast.For)):
                body = ast.Module(body=node.body, type_ignores=[])
                if any(isinstance(n, ast.Call) and self.name(n.func) in ("os.fork", "os.forkpty")
                       for n in ast.walk(body)):
                    self.fx.rule("RES-001", "os.fork() in a loop")
            if isinstance(node, ast.Call):
                self._call(node)

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
        elif fn in ("os.chown", "os.lchown", "shutil.chown"):
            fx.path("chmod", first, fn, "644")
        elif fn in ("open", "io.open", "os.open", "codecs.open"):
            self._open(node, fn, first)
        elif fn in ("exec", "eval", "compile", "builtins.exec", "builtins.eval"):
            self._code(first, fn)
        elif fn in _DYNAMIC or fn.startswith(("ctypes.", "importlib.")):
            key = self.value(args[1]) if fn == "getattr" and len(args) > 1 else first
            if not literal(key):
                fx.rule("CODE-002", f"{fn} of a value computed at run time")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in _PATHLIB and (
                node.func.attr in _PATH_ONLY or self._is_path(node.func.value)):
            self._pathlib(node, node.func.attr)

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
            return self.name(node.func) in _PATH_TYPES
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self._is_path(node.left)
        return isinstance(node, ast.Name) and self.alias.get(node.id) in _PATH_TYPES

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

    def _code(self, code: object, fn: str) -> None:
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


def _decode(fn: str, data: str, rest: list[object]) -> object:
    try:
        raw = data.encode("latin-1")
        if fn in ("bytes.fromhex", "binascii.unhexlify", "binascii.a2b_hex"):
            return bytes.fromhex(data).decode("latin-1")
        if fn == "codecs.decode":
            enc = rest[0] if rest and isinstance(rest[0], str) else "utf-8"
            if enc.replace("_", "").lower() in ("rot13", "rot_13"):
                return codecs.decode(data, "rot13")
            return codecs.decode(raw, enc).decode("latin-1") if enc in ("base64", "hex") else NONLIT
        if fn == "base64.b32decode":
            return base64.b32decode(raw + b"=" * (-len(raw) % 8), casefold=True).decode("latin-1")
        if fn == "base64.b16decode":
            return base64.b16decode(raw, casefold=True).decode("latin-1")
        if fn == "base64.urlsafe_b64decode":
            return base64.urlsafe_b64decode(raw + b"=" * (-len(raw) % 4)).decode("latin-1")
        return base64.b64decode(raw + b"=" * (-len(raw) % 4)).decode("latin-1")
    except (binascii.Error, ValueError, LookupError, TypeError):
        return NONLIT
