"""Tampering read from the code itself (`ast`): what the run wrote that changes how checks run or report.

Applied to every Python file the run wrote or changed, tests included.
Findings, each a reason for a person's review with file, line and what:
implementation that refers to a test framework (imports unittest, pytest,
doctest, nose; looks the framework up in `sys.modules`; reaches its objects
by computed names, assigns on its classes), code that hooks every call
(`sys.settrace`, `sys.setprofile`, `threading.settrace`, `sys.monitoring`),
implementation defining pytest hooks, code that changes how the process reports (`os._exit`,
an exiting `atexit` hook, `os.dup2` onto fd 0-2, `sys.stdout`/`sys.exit`/
builtins replaced at import), tests or conftest that patch other modules or
test classes at import time or define pytest hooks that rewrite reports or
collection, and objects that compare equal to anything (`__eq__` returning
a constant true). A written file that does not parse, or is too big to
read, is a finding too: what the gate cannot read it cannot clear.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from tether.common.walk import read_rel
from tether.gate.evidence import is_generated
from tether.gate.rerun import is_test_path

CODE_CAP = 1_048_576
"""The most bytes of one file read; a bigger written module is a finding (fail closed)."""
FRAMEWORKS = frozenset({"unittest", "pytest", "_pytest", "doctest", "nose", "nose2", "pluggy"})
REPORT_HOOKS = frozenset({
    "pytest_runtest_makereport", "pytest_report_teststatus", "pytest_collection_modifyitems",
    "pytest_runtest_protocol", "pytest_terminal_summary", "pytest_runtest_call", "pytest_pyfunc_call",
    "pytest_runtest_logreport", "pytest_runtest_logfinish", "pytest_sessionfinish", "pytest_collection_finish",
    "pytest_collect_file", "pytest_pycollect_makeitem", "pytest_ignore_collect", "pytest_deselected",
    "pytest_collectreport", "pytest_make_collect_report", "pytest_exception_interact", "pytest_unconfigure",
    "pytest_runtest_setup", "pytest_runtest_teardown", "pytest_itemcollected", "pytest_generate_tests",
})
"""pytest hooks that can rewrite outcomes, reports or what is collected."""
TRACERS = frozenset({"sys.settrace", "sys.setprofile", "threading.settrace", "threading.setprofile",
                     "threading.settrace_all_threads", "threading.setprofile_all_threads",
                     "sys.monitoring.register_callback", "sys.monitoring.use_tool_id", "sys.monitoring.set_events"})
"""Calls that hook every function call or line the process runs (a test's included)."""
FRAMEWORK_CLASSES = ("TestCase", "TestResult", "TextTestRunner", "TextTestResult", "TestProgram", "TestLoader",
                     "TestSuite")
STREAMS = frozenset({"stdout", "stderr", "__stdout__", "__stderr__", "exit", "excepthook", "displayhook", "exitfunc",
                     "unraisablehook"})
EXITS = frozenset({"_exit", "exit", "kill", "abort", "quit"})
NATIVE = frozenset({"ctypes", "_ctypes", "cffi", "_cffi_backend"})
"""Foreign-function interfaces: libc's `_exit`, `execv` or `write` reached past every Python-level check."""
PROCESS_MODULES = frozenset({"os", "posix", "nt", "sys", "signal", "subprocess", "_posixsubprocess", "builtins"})
"""Modules whose callables, registered to run at exit or reached by a computed name, can end or replace the process."""
REPLACING = re.compile(r"^(_exit|exit|abort|kill|killpg|quit|exec[lv]p?e?|spawn\w*|posix_spawnp?|fork\w*|dup2?|close)$")
"""Process-level callables that end or replace the interpreter (so the runner's report and exit status are not its)."""
IMPORTERS = frozenset({"__import__", "importlib.import_module", "import_module", "builtins.__import__"})
"""Calls that load a module by its name as a string."""
HARNESS_NAMES = frozenset({
    "setup_module", "teardown_module", "setUpModule", "tearDownModule", "setup_function", "teardown_function",
    "load_tests", "setup_package", "teardown_package", "setUpClass", "tearDownClass", "setup_method",
    "teardown_method", "setup_class", "teardown_class", "conftest", "pytest_plugins", "pytestmark",
    "__unittest", "failureException",
})
"""Names the test frameworks look up in a test module: defined by implementation, a `from impl import *` in the
test hands them to the framework, which runs them with the tests (unittest, pytest, nose)."""
VALUE_TYPES = frozenset({"int", "float", "complex", "str", "bytes", "bytearray", "bool", "tuple", "list", "dict",
                         "set", "frozenset", "Decimal", "Fraction", "decimal.Decimal", "fractions.Fraction",
                         "numbers.Number", "UserString", "UserList", "UserDict", "collections.UserString",
                         "collections.UserList", "collections.UserDict", "IntEnum", "enum.IntEnum", "StrEnum",
                         "enum.StrEnum"})
"""Builtin value types: a subclass that redefines comparing passes for the value a test expects."""
COMPARING = frozenset({"__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__"})
"""What a test's assertion asks of a value: redefined on a value type, the answer is the run's, not the value's."""
HANDLER_REGISTERS = {"signal.signal": 1, "threading.Thread": None, "Thread": None, "threading.Timer": 1,
                     "Timer": 1, "sys.set_asyncgen_hooks": None}
"""Calls that run a callable later on the process's own terms (a signal, a thread past the main one), and where the
callable sits (None: the `target` keyword)."""
EXIT_REGISTERS = {"atexit.register": 0, "weakref.finalize": 1, "finalize": 1, "register": 0}
"""Calls that register a callable to run at shutdown, and the position of that callable."""


def _dotted(node: ast.AST) -> str:
    """`a.b.c` for a Name/Attribute chain, else ''. A module or member reached by a constant name through
    `__import__("os")`, `importlib.import_module("os")` or `getattr(os, "_exit")` reads as the plain name
    (`'o' 's'` is one constant to the parser), so `getattr(__import__('os'), '_exit')` is `os._exit`."""
    parts = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif (isinstance(node, ast.Call) and _dotted(node.func) in ("getattr", "builtins.getattr")
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str)):
            parts.append(node.args[1].value)
            node = node.args[0]
        else:
            break
    if isinstance(node, ast.Call) and _dotted(node.func) in IMPORTERS and node.args and isinstance(
            node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        parts.append(node.args[0].value)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _const_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and bool(node.value) is True


def _const_false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and bool(node.value) is False


def _module_level(tree: ast.Module) -> Iterable[ast.AST]:
    """Statements that run at import: the module body, into if/try/with/for blocks, never into defs or classes."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop(0)
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        todo.extend(ast.iter_child_nodes(node))


def _main_block(node: ast.AST) -> bool:
    """`if __name__ == "__main__":`: code that runs only as a script (a doctest run there is fine)."""
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and _dotted(node.test.left) == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in node.test.comparators))


class _Scan:
    """One file's findings."""

    def __init__(self, rel: str, tree: ast.Module, test: bool) -> None:
        self.rel, self.tree, self.test = rel, tree, test
        self.out: list[str] = []
        self.imported: set[str] = set()
        self.framework_names: set[str] = set(FRAMEWORKS)
        self.classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        self.exiting = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                        and any(isinstance(c, ast.Call) and self._ends_process(c.func) for c in ast.walk(n))}
        self.local_defs = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}

    @staticmethod
    def _ends_process(func: ast.AST) -> bool:
        """A callable that ends or replaces the process: `os._exit`, `posix.execv`, `exit`, a native call."""
        name = _dotted(func)
        last = name.rsplit(".", 1)[-1]
        if name and "." not in name:
            return last in EXITS
        root = name.split(".")[0]
        return bool(name) and (last in EXITS and root not in ("self", "cls") or root in NATIVE
                               or root in PROCESS_MODULES and REPLACING.match(last) is not None)

    def _shutdown_target(self, target: ast.AST) -> str:
        """Why a callable registered to run at shutdown is suspect ('' when it is a plain local or harmless one)."""
        if isinstance(target, ast.Lambda):
            return "a lambda"
        name = _dotted(target)
        if not name:
            return "a computed callable"  # getattr(os, "_" + "exit"), ctypes.CDLL(None)._exit, table[0]
        if name in self.exiting or self._ends_process(target):
            return f"`{name}`"
        root = name.split(".")[0]
        if root in NATIVE or root in PROCESS_MODULES and REPLACING.match(name.rsplit(".", 1)[-1]):
            return f"`{name}`"
        return ""

    def _ends_in(self, target: ast.AST) -> bool:
        """A callable (a name of this file, a lambda) whose body ends or replaces the process."""
        if isinstance(target, ast.Lambda):
            return any(isinstance(c, ast.Call) and self._ends_process(c.func) for c in ast.walk(target.body))
        name = _dotted(target)
        return bool(name) and (name.rsplit(".", 1)[-1] in self.exiting or self._ends_process(target))

    def _value_class(self, node: ast.ClassDef) -> None:
        """A class derived from a builtin value type that redefines what comparing it answers, or any `__eq__`
        whose answer does not read the object itself."""
        value_base = next((_dotted(b) for b in node.bases if _dotted(b) in VALUE_TYPES), "")
        for fn in node.body:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if value_base and fn.name in COMPARING and not self.test:
                self.add(fn, f"implementation code redefines {fn.name} on a subclass of {value_base} (the value "
                             "answers comparisons on its own terms)")
            elif fn.name in ("__eq__", "__ne__") and fn.args.args:
                me = fn.args.args[0].arg
                if not any(isinstance(n, ast.Name) and n.id == me for s in fn.body for n in ast.walk(s)):
                    self.add(fn, f"{fn.name} never reads `{me}`: its answer does not depend on the object")
        for t in node.body:
            if value_base and not self.test and isinstance(t, ast.Assign) and any(
                    isinstance(x, ast.Name) and x.id in COMPARING for x in t.targets):
                self.add(t, f"implementation code redefines comparing on a subclass of {value_base}")

    def add(self, node: ast.AST, what: str) -> None:
        self.out.append(f"{self.rel}:{getattr(node, 'lineno', 0)}: {what}")

    def run(self) -> list[str]:
        main_nodes = {id(n) for m in ast.walk(self.tree) if _main_block(m) for n in ast.walk(m)}
        for node in ast.walk(self.tree):
            if id(node) in main_nodes:
                continue
            self._imports(node)
            self._calls(node)
            self._compares(node)
            self._defs(node)
        for node in _module_level(self.tree):
            self._import_time(node)
        self._harness()
        return self.out

    def _imports(self, node: ast.AST) -> None:
        names: list[tuple[str, str]] = []
        if isinstance(node, ast.Import):
            names = [(a.name, a.asname or a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [(f"{node.module}.{a.name}", a.asname or a.name) for a in node.names]
        for full, bound in names:
            self.imported.add(bound)
            if full.split(".")[0] in NATIVE and not self.test:
                self.add(node, f"implementation loads native code through `{full}` (can end the process past "
                               "every report and exit hook)")
            if full.split(".")[0] in FRAMEWORKS:
                self.framework_names.add(bound)
                if not self.test:
                    self.add(node, f"implementation imports the test framework `{full}`")

    def _calls(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Call):
            return
        func = _dotted(node.func)
        last = func.rsplit(".", 1)[-1]
        args = node.args
        if func in ("__import__", "importlib.import_module", "import_module") and args:
            if isinstance(args[0], ast.Constant) and str(args[0].value).split(".")[0] in FRAMEWORKS and not self.test:
                self.add(node, f"implementation imports the test framework `{args[0].value}`")
            if isinstance(args[0], ast.Constant) and str(args[0].value).split(".")[0] in NATIVE and not self.test:
                self.add(node, f"implementation loads native code through `{args[0].value}`")
        if func in IMPORTERS and args and not isinstance(args[0], ast.Constant) and not self.test:
            self.add(node, "implementation imports a module by a name built at run time (what it reaches is unseen)")
        if func in HANDLER_REGISTERS:
            position = HANDLER_REGISTERS[func]
            target = (args[position] if position is not None and len(args) > position
                      else next((k.value for k in node.keywords if k.arg in ("target", "handler")), None))
            if target is not None and self._ends_in(target):
                self.add(node, f"{func} runs a callable that ends the process (it sets the process's exit status "
                               "on its own terms)")
        if func in TRACERS:
            self.add(node, f"calls {func} (hooks every call the process makes, the tests' included)")
        root = func.split(".")[0]
        if root in ("os", "posix", "nt") and re.match(r"^(_exit|abort|exec[lv]p?e?|posix_spawnp?|spawn\w*)$", last):
            self.add(node, f"calls {func} (ends or replaces the process past every report and exit hook)")
        position = EXIT_REGISTERS.get(func)
        bare = func in ("register", "finalize")
        if position is not None and (not bare or func in self.imported) and len(args) > position:
            why = self._shutdown_target(args[position])
            if why:
                self.add(node, f"registers a shutdown hook that can end or replace the process ({why})")
        if func == "os.dup2" and len(args) > 1:
            fd = args[1]
            if not isinstance(fd, ast.Constant) or fd.value in (0, 1, 2):
                self.add(node, "os.dup2 onto a standard stream (what the runner prints is replaced)")
        if last in ("setattr", "getattr", "delattr") and func in (last, f"builtins.{last}") and len(args) > 1:
            obj, name = _dotted(args[0]), args[1]
            root = obj.split(".")[0]
            on_framework = root in self.framework_names or obj.split(".")[-1] in FRAMEWORK_CLASSES
            if root in PROCESS_MODULES | NATIVE and not isinstance(name, ast.Constant):
                self.add(node, f"{last} on `{obj}` with a computed name (reaches process calls unseen)")
            if on_framework and (last != "getattr" or not isinstance(name, ast.Constant)):
                self.add(node, f"{last} on the test framework `{obj}`"
                         + ("" if isinstance(name, ast.Constant) else " with a computed name"))
            if root in ("builtins", "__builtins__", "sys") and last != "getattr":
                self.add(node, f"{last} on `{obj}` (replaces what every module sees)")

    def _compares(self, node: ast.AST) -> None:
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_dotted(s) == "sys.modules" for s in sides) and any(
                    isinstance(s, ast.Constant) and str(s.value).split(".")[0] in FRAMEWORKS for s in sides):
                self.add(node, "looks up the test framework in sys.modules (behaves differently under test)")
        elif isinstance(node, ast.Subscript) and _dotted(node.value) == "sys.modules":
            key = node.slice
            if isinstance(key, ast.Constant) and str(key.value).split(".")[0] in FRAMEWORKS:
                self.add(node, "reaches the test framework through sys.modules")
        elif isinstance(node, ast.Call) and _dotted(node.func) == "sys.modules.get" and node.args:
            key = node.args[0]
            if isinstance(key, ast.Constant) and str(key.value).split(".")[0] in FRAMEWORKS:
                self.add(node, "looks up the test framework in sys.modules (behaves differently under test)")

    def _defs(self, node: ast.AST) -> None:
        if isinstance(node, ast.ClassDef):
            self._value_class(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name == "__del__" and any(isinstance(c, ast.Call) and self._ends_process(c.func)
                                              for c in ast.walk(node)):
                self.add(node, "__del__ ends the process (it sets the process's exit status on its own terms)")
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            ret = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
            if node.name == "__eq__" and _const_true(ret) or node.name == "__ne__" and _const_false(ret):
                self.add(node, f"{node.name} returns a constant: the object compares equal to anything")
            if node.name in REPORT_HOOKS:
                self.add(node, f"defines the pytest hook {node.name} (can rewrite outcomes or collection)")
            elif node.name.startswith("pytest_") and not self.test:
                self.add(node, f"implementation defines the pytest hook {node.name} (a plugin loaded with the tests)")
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and _dotted(dec.func).endswith("hookimpl") and any(
                        k.arg in ("hookwrapper", "wrapper") and _const_true(k.value) for k in dec.keywords):
                    self.add(node, f"a pytest hook wrapper ({node.name}) around the test run")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id in ("__eq__", "__ne__") and isinstance(node.value, ast.Lambda):
                    want = _const_true if t.id == "__eq__" else _const_false
                    if want(node.value.body):
                        self.add(node, f"{t.id} is a constant lambda: the object compares equal to anything")
                name = _dotted(t)
                root = name.split(".")[0]
                if "." in name and (root in self.framework_names or name.split(".")[-2] in FRAMEWORK_CLASSES):
                    self.add(node, f"assigns `{name}` on the test framework")
                if root in ("builtins", "__builtins__") and "." in name:
                    self.add(node, f"replaces the builtin `{name}`")

    def _harness(self) -> None:
        """Implementation that defines the names a test framework looks up in a test module."""
        if self.test:
            return
        for node in self.tree.body:
            names = ([node.name] if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else
                     [t.id for t in node.targets if isinstance(t, ast.Name)] if isinstance(node, ast.Assign) else [])
            for name in names:
                if name in HARNESS_NAMES:
                    self.add(node, f"implementation defines `{name}`, which the test framework runs in a test module "
                                   "that imports it (`from ... import *`)")

    def _import_time(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            if isinstance(node, ast.Call) and _dotted(node.func) in ("setattr", "builtins.setattr") and node.args:
                obj = _dotted(node.args[0]).split(".")[0]
                if obj in self.imported or obj in self.classes:
                    self.add(node, f"setattr on `{_dotted(node.args[0])}` at import (patches code the checks run)")
            return
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            name = _dotted(t) if isinstance(t, ast.Attribute) else ""
            if not name:
                if isinstance(t, ast.Subscript) and _dotted(t.value) in ("sys.modules", "__builtins__"):
                    self.add(node, f"replaces an entry of `{_dotted(t.value)}` at import")
                continue
            root = name.split(".")[0]
            if name in {f"sys.{s}" for s in STREAMS}:
                self.add(node, f"replaces `{name}` at import (changes how the process reports)")
            elif self.test and (root in self.imported or root in self.classes):
                self.add(node, f"assigns `{name}` at import (patches code or tests the checks run)")


def scan_source(rel: str, data: bytes, test: bool | None = None) -> list[str]:
    """The findings for one file's bytes."""
    try:
        tree = ast.parse(data, filename=rel)
    except (SyntaxError, ValueError):
        return [f"{rel}: the run wrote Python the gate cannot parse, so cannot clear"]
    is_test = is_test_path(rel) if test is None else test
    return _Scan(rel, tree, is_test).run()


def code_tampering(workspace: Path, written: Iterable[str]) -> list[str]:
    """Findings in every Python file the run wrote or changed (tests and conftest included)."""
    out: list[str] = []
    for rel in sorted(set(written)):
        if not rel.endswith((".py", ".pyw")) or is_generated(rel):
            continue
        data = read_rel(workspace, rel, CODE_CAP + 1)
        if data is None:
            continue
        if len(data) > CODE_CAP:
            out.append(f"{rel}: the run wrote a module over {CODE_CAP // 1024} KiB, too big for the gate to read")
            continue
        out += [f"tampering: {f}" for f in scan_source(rel, data)]
    return out
