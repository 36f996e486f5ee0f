"""One analysis of one command line: walk, unwrap, decode, apply every rule.

Parts:
    BudgetError: the time budget ran out (a deny, like every other failure).
    Analyser: runs a line and, recursively, every payload found in it
        (bash -c, eval, decoded pipes, interpreter code), collecting RuleHits
        and the decoded forms it analysed.

Exceptions propagate: `checker.check` turns each into a GUARD-FAIL deny.
"""

from __future__ import annotations

import fnmatch
import time

from tether.guardian import downloads, exposure, host_escape, miners, program_pass, secrets_flow
from tether.guardian.bashlex_load import bashlex
from tether.guardian.decision import Hit, Limits, Result, Where, strictest
from tether.guardian.decode import static_output
from tether.guardian.interp import DOWNLOADERS, payloads
from tether.guardian.operands import glob_targets, listed_paths, path_operands, substituted_paths
from tether.guardian.parse import DepthError, Simple, parse_line
from tether.guardian.paths import Verb, harmless_unknown, judge_write, normalise, resolve
from tether.guardian.rules import RULES, Inv, find, get, program_names, ready, rules_for
from tether.guardian.rules_paths import path_hits
from tether.guardian.unwrap import fed_command, unwrap
from tether.guardian.words import UNKNOWN

_PATH_TAKERS = frozenset({
    "echo", "rm", "rmdir", "unlink", "chmod", "chown", "chgrp", "touch", "sed", "grep", "egrep", "fgrep",
    "rg", "cat", "head", "tail", "wc", "ls", "stat", "du", "file", "mv", "cp", "ln", "dos2unix", "md5sum",
    "sha1sum", "sha256sum", "gzip", "gunzip", "xz", "bzip2", "tar", "zip", "black", "ruff",
    "isort", "flake8", "pylint", "mypy", "clang-format", "prettier", "shellcheck", "basename",
    "dirname", "readlink", "realpath", "sort", "uniq", "diff", "cmp", "truncate", "shred"})
"""Programs that take the paths xargs feeds them as data (`find .. | xargs rm`), never as a program."""


def _computed_vars(env: dict[str, str]) -> bool:
    """Whether the line gave a variable a value it cannot know (`f=$(ls ~/.bashrc)`): an
    append to an unresolved target is then not vouched for by the environment."""
    return any(UNKNOWN in v for v in env.values())


def _moot(an: Analyser, rule_id: str, inv: Inv) -> bool:
    """Whether a rule is moot in Tether's sandbox (imported only there: the hook path never judges for it)."""
    from tether.guardian.sandbox_context import waived

    return waived(an, rule_id, inv)


class BudgetError(TimeoutError):
    """The check ran past `GuardianConfig.time_budget_ms` (or its wall-clock ceiling)."""


class Deadline:
    """CPU time of the checking thread, plus a wall-clock ceiling, both without the garbage collector's time.

    CPU time bounds the work a hostile command can cost without a loaded
    machine turning ordinary commands into denies; the wall ceiling still
    bounds a check that stalls. A collection that lands inside the check
    (an earlier caller's garbage, its finalisers) is not the check's work
    (`gc_time`): counted, it made a verdict depend on the process's history.
    """

    def __init__(self, limits: Limits) -> None:
        from tether.guardian import gc_time

        self.limits, self._spent = limits, gc_time.spent
        cpu, wall = self._clock()
        self.cpu = cpu + limits.time_budget_ms / 1000.0
        self.wall = wall + limits.wall_budget_ms / 1000.0

    def _clock(self) -> tuple[float, float]:
        gc_cpu, gc_wall = self._spent()
        return time.thread_time() - gc_cpu, time.perf_counter() - gc_wall

    def passed(self) -> bool:
        cpu, wall = self._clock()
        return cpu > self.cpu or wall > self.wall

    def cause(self) -> str:
        if self._clock()[1] > self.wall:
            return f"wall-clock ceiling of {self.limits.wall_budget_ms} ms exceeded"
        return f"time budget of {self.limits.time_budget_ms} ms exceeded"


_GUESS_ERRORS = (bashlex.errors.ParsingError, NotImplementedError, IndexError, AttributeError,
                 TypeError, ValueError, KeyError)


class Analyser:
    """Collects the hits for one command line and everything it would run."""

    def __init__(self, ctx: Where, config: Limits, deadline: Deadline) -> None:
        ready()
        self.ctx, self.config, self.deadline = ctx, config, deadline
        self.home = str(ctx.home)
        self.ws = normalise(str(ctx.workspace), "/", self.home)
        self.cwd = normalise(str(ctx.working_dir), self.ws, self.home)
        self.hits: dict[tuple[str, str], Hit] = {}
        self.decoded: list[str] = []
        self.guessing = 0
        """>0 while foreign code is read as if it were shell (`_guess`)."""
        self.files: dict[str, str | None] = {}
        self.opaque: set[str] = set()
        """Files written in this line whose content the analyser cannot know (`jq .. > f`, `cp x f`)."""
        self.seen_vars: set[tuple[str, str]] = set()
        self.listed: set[str] = set()
        """Management tools whose every object id a command in this line printed (`docker ps -aq`)."""
        self.env = {"HOME": self.home, "PWD": self.cwd, "TMPDIR": "/tmp", "IFS": " \t\n",
                    "USER": "tether", "SHELL": "/bin/bash", "PATH": "/usr/local/bin:/usr/bin:/bin"}

    def result(self, command: str) -> Result:
        hits = list(self.hits.values())
        decision = strictest(*(h.decision for h in hits))
        risky = [h for h in hits if h.decision != "allow"]
        reason = "; ".join(f"{h.id}: {h.reason}" for h in risky) or "no risk pattern matched"
        return Result(decision, hits, reason, [command, *[d for d in self.decoded if d != command][:16]],
                      getattr(self, "volatile", False))

    def _tick(self) -> None:
        if self.deadline.passed():
            raise BudgetError(self.deadline.cause())

    def _hit(self, rule_id: str, program: str = "", detail: str = "") -> None:
        if self.guessing and rule_id == "NET-004":
            return  # `$t += 1` in perl is not a shell command with an unknown name
        rule = RULES.get(rule_id) or find(rule_id)
        key = (rule_id, program or rule.program)
        if key not in self.hits:
            self.hits[key] = rule.plain(program, detail)

    def run(self, text: str, depth: int, env: dict[str, str] | None = None,
            cwd: str | None = None) -> None:
        """Analyse shell text (raises on anything unparseable: fail closed)."""
        if depth > self.config.max_depth:
            msg = f"payload nesting deeper than max_depth={self.config.max_depth}"
            raise DepthError(msg)
        self._tick()
        if depth:
            self.decoded.append(text)
        downloads.on_line(self, text)
        simples, _ = parse_line(text, env or self.env, cwd or self.cwd, self.home,
                                self._subst(env or self.env, cwd or self.cwd))
        outer: list[Simple] = getattr(self, "after", [])
        try:
            for i, s in enumerate(simples):
                self.after = simples[i + 1 :] + outer  # what runs later in the line (`management` round trips)
                self._simple(s, depth)
        finally:
            self.after = outer
        secrets_flow.on_line(self, text, simples)

    def _guess(self, text: str, depth: int, env: dict[str, str], cwd: str) -> None:
        """Analyse foreign code as if it were shell, when it parses as shell."""
        if len(text) > 2000 or depth + 1 > self.config.max_depth:
            return
        try:
            simples, _ = parse_line(text, env, cwd, self.home, self._subst(env, cwd))
        except _GUESS_ERRORS:
            return
        self.guessing += 1
        try:
            for s in simples:  # lenient all the way down: a nested parse error ends the guess only
                try:
                    self._simple(s, depth + 1)
                except _GUESS_ERRORS:
                    continue
        finally:
            self.guessing -= 1

    def _subst(self, env: dict[str, str], cwd: str):  # type: ignore[no-untyped-def]
        def evaluate(body: str) -> str | None:
            if len(body) > 500:
                return None
            try:
                simples, _ = parse_line(body, env, cwd, self.home, lambda _b: None)
            except _GUESS_ERRORS:
                return None
            if not simples:
                return ""
            out = static_output([simples[-1]])
            if out is None:
                out = substituted_paths(simples[-1])
            return None if out is None else out.rstrip("\n")

        return evaluate

    def _simple(self, s: Simple, depth: int) -> None:
        self._tick()
        for p in s.payloads:
            self.run(p, depth + 1, s.env, s.cwd)
        prog0 = s.argv[0].rsplit("/", 1)[-1] if s.argv else ""
        for r in s.redirects:
            if r.op.startswith("<<") and r.op != "<<<" or r.target.isdigit():
                continue
            if r.writes:
                append = r.op in (">>", "&>>") and not r.computed and not _computed_vars(s.env)
                self._target(r.target, "append" if append else "write", prog0, s.cwd)
                self._remember(r.target, s, prog0, r.op in (">>", "&>>"))
            t = resolve(r.target, s.cwd, self.home)
            if not t.unknown:
                for rule in path_hits(t.path, "read"):
                    self._hit(rule.id, prog0)
        program_pass.on_simple(self, s, depth)
        if not s.argv:
            return
        if s.in_function and s.argv[0] == s.in_function:
            self._hit("RES-001")
        for argv in self._names(s.argv):
            for inner, sudo, via in unwrap(argv, lambda s=s: self._items(s)):
                if not inner:
                    continue
                if UNKNOWN in inner[0]:
                    self._hit("NET-004", "", "program name unknown until run time")
                    continue
                self._inv(Inv(inner, s, sudo, via), depth)
        if depth == 0 or len(self.decoded) < 16:
            joined = " ".join(s.argv).replace(UNKNOWN, "$?")
            if joined not in self.decoded:
                self.decoded.append(joined)

    def _items(self, s: Simple) -> str | None:
        """What xargs/parallel read: the known stdin, or the paths a lister upstream prints
        (`operands.listed_paths`: find, grep -l, git ls-files, through line filters), when
        the command they are fed to takes paths as data."""
        data = self._stdin(s)
        if data is not None or len(s.upstream) != 1:
            return data
        fed = fed_command(s.argv)
        if (fed[0].rsplit("/", 1)[-1] if fed else "echo") not in _PATH_TAKERS:
            return None  # the items may become a program name (`xargs command`, `xargs -I{} sh {}`)
        return listed_paths(s.upstream[0])

    def _stdin(self, s: Simple) -> str | None:
        if s.stdin is not None:
            return s.stdin
        return static_output(s.upstream) if s.upstream else None

    def _names(self, argv: list[str]) -> list[list[str]]:
        """argv variants for a globbed program name (`/bin/r?` -> rm, rmdir, ...)."""
        name = argv[0]
        if "=" in name and len(argv) > 1:
            return [argv, *self._names(argv[1:])]
        base = name.rsplit("/", 1)[-1]
        if not any(c in base for c in "*?["):
            return [argv]
        known = [p for p in program_names() if fnmatch.fnmatchcase(p, base)]
        known += [p for p in ("rm", "bash", "sh", "dd", "mv", "chmod", "python3") if
                  fnmatch.fnmatchcase(p, base) and p not in known]
        known += [p for p in program_pass.table_names() if fnmatch.fnmatchcase(p, base) and
                  p not in known]
        return [[k, *argv[1:]] for k in known[:8]] or [argv]

    def _remember(self, raw: str, s: Simple, prog: str, append: bool = False) -> None:
        t = resolve(raw, s.cwd, self.home)
        if t.unknown:
            return
        if prog in DOWNLOADERS:
            self.files[t.path] = None
        else:
            out = static_output([s]) if prog in ("echo", "printf", "cat") else None
            if out is not None and append and t.path not in self.files and t.path.endswith(".py"):
                from tether.guardian.code_python import python_fragment

                out = python_fragment(out)  # appended to a file already there: a fragment of it
            if out is not None or t.path not in self.files:
                self.files[t.path] = out if out is not None else ""
            if out is None:
                self.opaque.add(t.path)
            else:
                self.opaque.discard(t.path)

    def _target(self, raw: str, verb: Verb, prog: str, cwd: str) -> None:
        t = resolve(raw, cwd, self.home)
        if t.unknown and harmless_unknown(raw, verb, cwd, self.home, self.ws):
            return
        for rid in judge_write(t, verb, self.ws, self.config.min_write_depth, self.home):
            self._hit(rid, prog, raw.replace(UNKNOWN, "$?") if t.unknown else t.path)
        if not t.unknown:
            for path in [t.path + ("/" if t.glob else ""), *glob_targets(normalise(raw, cwd, self.home), self.home)]:
                for rule in path_hits(path, "write"):
                    self._hit(rule.id, prog)
            exposure.on_write(self, t.path, prog)

    def _inv(self, inv: Inv, depth: int) -> None:
        prog = inv.prog
        for rule in rules_for(prog):
            if rule.test is not None and rule.test(inv) and not (self.ctx.sandbox and _moot(self, rule.id, inv)):
                self._hit(rule.id, prog)
        from tether.guardian.targets import write_targets

        for raw, verb in write_targets(inv):
            if verb == "append" and _computed_vars(inv.simple.env):
                verb = "write"  # `tee -a "$f"` after `f=$(..)`: nothing vouches for the target
            self._target(raw, verb, prog, inv.simple.cwd)
        for a in path_operands(inv):
            for cand in (a, a.lstrip("@<"), a.split("=", 1)[-1]):
                if "/" in cand and UNKNOWN not in cand:
                    full = normalise(cand, inv.simple.cwd, self.home)
                    for path in [full, *glob_targets(full, self.home, prog)]:
                        for rule in path_hits(path, "read"):
                            self._hit(rule.id, prog)
        if prog in ("curl", "wget"):
            self._downloads(inv)
        elif prog == "git":
            downloads.remember_clone(self, inv)
        if inv.argv[0].startswith(("./", "/", "~")) or "/" in inv.argv[0]:
            path = normalise(inv.argv[0], inv.simple.cwd, self.home)
            if path in self.files:
                content = self.files[path]
                if content is None:
                    self._hit("NET-002", prog, inv.argv[0])
                elif content:
                    self.run(content, depth + 1, inv.simple.env, inv.simple.cwd)
        env, cwd = inv.simple.env, inv.simple.cwd
        for action in payloads(inv, self.files, lambda p: normalise(p, cwd, self.home)):
            if action.kind == "shell":
                self.run(action.text, depth + 1, env, cwd)
            elif action.kind == "guess":
                self._guess(action.text, depth, env, cwd)
            else:
                self._hit(get(action.text).id, prog, action.detail)
        program_pass.on_invocation(self, inv, depth)
        secrets_flow.on_invocation(self, inv)
        host_escape.on_invocation(self, inv)
        miners.on_invocation(self, inv)

    def _downloads(self, inv: Inv) -> None:
        args = inv.args
        urls = [a for a in inv.positional if "/" in a]
        for i, a in enumerate(args):
            nxt = args[i + 1] if i + 1 < len(args) else ""
            if a in ("-o", "--output", "-O", "--output-document") and nxt and (
                    inv.prog == "wget" or a in ("-o", "--output")):
                self.files[normalise(nxt, inv.simple.cwd, self.home)] = None
            elif a.startswith(("--output=", "--output-document=")):
                self.files[normalise(a.split("=", 1)[1], inv.simple.cwd, self.home)] = None
        if inv.prog == "wget" or inv.has("O", "--remote-name"):
            for u in urls:
                name = u.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
                if name:
                    self.files[normalise(name, inv.simple.cwd, self.home)] = None
