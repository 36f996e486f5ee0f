"""Literal values of Python expressions, for `code_python` (a mixin of its reader).

Parts:
    Values.value: expression -> str, list of str, or NONLIT. Followed where
        literal: str/bytes constants, `+` / `%` / f-strings / `.format()` of
        literals, `.join`, `.split`, `[::-1]`, `os.path.join`, `Path(a) / b`,
        `~` from `Path.home()`/`expanduser`/`$HOME`, names assigned once,
        `chr(n)`, and base64/base32/base16/hex/rot13 decoding of a literal.
    PATH_TYPES: the pathlib constructors.
Anything else is NONLIT (known only at run time).
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import re

from tether.guardian.code_actions import NONLIT, literal

PATH_TYPES = frozenset({"pathlib.Path", "Path", "pathlib.PosixPath", "pathlib.PurePath"})
_DECODERS = {"base64.b64decode", "base64.decodebytes", "base64.standard_b64decode",
             "base64.urlsafe_b64decode", "base64.b32decode", "base64.b16decode",
             "binascii.unhexlify", "binascii.a2b_hex", "bytes.fromhex", "binascii.a2b_base64",
             "codecs.decode", "zlib.decompress", "gzip.decompress", "bz2.decompress",
             "lzma.decompress"}
_STR_METHODS = frozenset({"join", "decode", "encode", "strip", "format", "split"})
_FIELD = re.compile(r"\{(\d*)\}|%[sdr]")


class Values:
    """Needs `name(node)` (dotted callee names) and `values` (names assigned once)."""

    values: dict[str, object]

    def name(self, node: ast.AST) -> str:  # pragma: no cover - provided by the reader
        raise NotImplementedError

    def value(self, node: ast.AST | None) -> object:
        """The literal value of an expression (str, or list of str), or NONLIT."""
        if node is None:
            return NONLIT
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bytes):
                return v.decode("latin-1")
            return v if isinstance(v, str) else str(v) if isinstance(v, (int, float)) else NONLIT
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, int):
            return str(-node.operand.value)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.value(e) for e in node.elts]
        if isinstance(node, ast.Name):
            return self.values.get(node.id, NONLIT)
        if isinstance(node, ast.Attribute) and self.name(node) == "sys.executable":
            return "python3"
        if isinstance(node, ast.JoinedStr):
            parts = [self.value(v.value if isinstance(v, ast.FormattedValue) else v)
                     for v in node.values]
            return "".join(parts) if all(isinstance(p, str) and literal(p) for p in parts) else NONLIT
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            a, b = self.value(node.left), self.value(node.right)
            return _fill(a, b if isinstance(b, list) else [b]) if isinstance(a, str) and literal(a) else NONLIT
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
        if fn in _DECODERS and args and isinstance(args[0], str) and args[0] is not NONLIT and (
                literal(args[0]) or fn.endswith(".decompress")):  # compressed bytes may hold NULs
            return _decode(fn, args[0], args[1:])
        if fn in ("os.path.join", "posixpath.join", "pathlib.Path", "pathlib.PurePath",
                  "pathlib.PosixPath", "Path", "str", "os.path.expanduser", "os.fsencode",
                  "os.fsdecode", "bytes", "bytearray"):
            if args and all(isinstance(a, str) and literal(a) for a in args):
                return "/".join(a.rstrip("/") if k < len(args) - 1 else a for k, a in enumerate(args))
            return NONLIT
        if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS:
            base = self.value(node.func.value)
            attr = node.func.attr
            if not isinstance(base, str) or not literal(base):
                return NONLIT
            if attr == "join":
                return base.join(args[0]) if args and isinstance(args[0], list) and literal(args[0]) else NONLIT
            if attr == "split":
                sep = args[0] if args and isinstance(args[0], str) and literal(args[0]) else None
                return base.split(sep) if not args or sep is not None else NONLIT
            if attr == "format":
                return _fill(base, args) if not node.keywords else NONLIT
            if attr == "decode" and args and isinstance(args[0], str) and args[0] in ("base64", "hex", "rot13",
                                                                                    "zlib", "rot_13"):
                return _decode("codecs.decode", base, args)  # python 2 `"..".decode("base64")`
            return base  # decode, encode, strip: the same text for our purposes
        if fn in ("pathlib.Path.home", "os.path.expanduser", "os.getenv", "os.environ.get") and (
                not args or args[0] in ("~", "HOME")):
            return "~"
        if fn in ("tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.TemporaryDirectory"):
            where = next((self.value(k.value) for k in node.keywords if k.arg == "dir"), "/tmp")
            return f"{where}/tmp.XXXXXXXX" if isinstance(where, str) and literal(where) else NONLIT
        if fn == "tempfile.gettempdir":
            return "/tmp"
        if fn == "chr" and args and isinstance(args[0], str) and args[0].isdigit():
            return chr(int(args[0]) % 0x110000)
        return NONLIT


def _fill(template: str, args: list[object]) -> object:
    """`"a {} b".format(x)` / `"a %s" % x` with plain fields only; NONLIT otherwise."""
    if not literal(args) or re.search(r"\{[^}]*[:!.\[]|%[^sdr%]", template):
        return NONLIT
    queue = [str(a) for a in args]

    def one(m: re.Match[str]) -> str:
        if m.group(1):
            k = int(m.group(1))
            return queue[k] if k < len(queue) else "\x00"
        return queue.pop(0) if queue else "\x00"

    out = _FIELD.sub(one, template.replace("%%", "\x01")).replace("\x01", "%")
    return NONLIT if "\x00" in out else out


def _decode(fn: str, data: str, rest: list[object]) -> object:
    try:
        raw = data.encode("latin-1")
        if fn.endswith(".decompress"):
            import bz2
            import lzma
            import zlib

            if fn == "zlib.decompress":
                out = zlib.decompressobj().decompress(raw, 1 << 20)
            elif fn == "gzip.decompress":
                out = zlib.decompressobj(47).decompress(raw, 1 << 20)
            else:
                out = (bz2.BZ2Decompressor() if fn.startswith("bz2") else lzma.LZMADecompressor()
                       ).decompress(raw, 1 << 20)
            return out.decode("latin-1")
        if fn in ("bytes.fromhex", "binascii.unhexlify", "binascii.a2b_hex"):
            return bytes.fromhex(data).decode("latin-1")
        if fn == "codecs.decode":
            enc = rest[0] if rest and isinstance(rest[0], str) else "utf-8"
            if enc.replace("_", "").lower() in ("rot13", "rot_13"):
                return codecs.decode(data, "rot13")
            if enc == "zlib":
                return _decode("zlib.decompress", data, [])
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

