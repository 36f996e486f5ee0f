"""Files test runners load without being named, and files that win a module lookup over an existing one.

Two tables, not code branches: `IMPLICIT` (a path pattern, the runner that
loads it, and for shared files such as pyproject.toml the lines that matter
to the runner) and `SHADOWS` (a new path's form, and the existing sibling it
beats under the language's own resolution: `calc` before `calc.js` for
node's `require('./calc')`, `Calc.pmc` before `Calc.pm` for perl, a
`calc/` package or `calc.*.so` before `calc.py` for Python). A run that
creates or changes an implicit file, or writes a shadow, that the goal does
not name, changes how the checks run rather than what they check: a person
reviews it. What it cannot see: a runner or a lookup order not in the tables.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import read_rel

TEXT_CAP = 262_144
ANY = re.compile(r"")
"""Every line matters (a file that exists only for the runner)."""
IMPLICIT: tuple[tuple[re.Pattern[str], str, re.Pattern[str]], ...] = (
    (re.compile(r"(^|/)\.?pytest\.ini$"), "pytest", ANY),
    (re.compile(r"(^|/)(pyproject\.toml|setup\.cfg|tox\.ini)$"), "pytest",
     re.compile(r"(?i)^\s*\[(tool[.:]pytest|pytest|tool\.pytest\.ini_options)|^\s*(addopts|python_files|"
                r"python_classes|python_functions|testpaths|pythonpath|norecursedirs|plugins|required_plugins|"
                r"filterwarnings|usefixtures)\s*=")),
    (re.compile(r"(^|/)(sitecustomize|usercustomize)\.py$|\.pth$"), "python", ANY),
    (re.compile(r"(^|/)(setup_suite|test_helper|setup_file)\.(bash|sh)$|(^|/)\.bats\w*$|(^|/)bats\.config$"),
     "bats", ANY),
    (re.compile(r"(^|/)\.proverc$|(^|/)_?prove$|(^|/)\.perldb$|(^|/)\.perlcriticrc$"), "prove", ANY),
    (re.compile(r"(^|/)\.mocharc(\.\w+)?$|(^|/)\.taprc$|(^|/)\.c8rc(\.\w+)?$|(^|/)\.nycrc(\.\w+)?$"), "node", ANY),
    (re.compile(r"(^|/)(jest|vitest|ava|karma|playwright|cypress|mocha)\.config\.\w+$"), "node", ANY),
    (re.compile(r"(^|/)\.npmrc$|(^|/)\.yarnrc(\.yml)?$|(^|/)\.pnpmfile\.cjs$|(^|/)\.nvmrc$|(^|/)\.node-version$"),
     "npm", ANY),
    (re.compile(r"(^|/)(\.babelrc(\.\w+)?|babel\.config\.\w+|tsconfig(\.\w+)?\.json|\.swcrc)$"), "node", ANY),
    (re.compile(r"(^|/)node_modules/"), "node", ANY),
    (re.compile(r"\.mk$|(^|/)(GNUmakefile|makefile)$"), "make", ANY),
    (re.compile(r"(^|/)Makefile$"), "make", re.compile(r"^\s*-?s?include\b|^\s*(MAKEFLAGS|SHELL|MAKEFILES)\s*[:?+]?=")),
    (re.compile(r"(^|/)\.env(\.[\w.-]+)?$|(^|/)\.envrc$"), "dotenv",
     re.compile(r"^\s*(?:export\s+)?(?:PYTHON\w*|PYTEST_\w+|NODE_OPTIONS|NODE_PATH|NODE_ENV|LD_\w+|DYLD_\w+|BASH_ENV|ENV|"
                r"PATH|SHELL|PERL5\w+|PERLLIB|RUBY\w*|GEM_\w+|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|CLASSPATH|GIT_\w+|"
                r"MAKEFLAGS|npm_config_\w+|NPM_CONFIG_\w+|COVERAGE_\w+|CI|TZ|LANG|LC_\w+|HOME)\s*=")),
    (re.compile(r"(^|/)\.rspec$|(^|/)\.irbrc$|(^|/)\.pdbrc(\.py)?$|(^|/)\.noserc$|(^|/)nose2?\.cfg$"), "runner", ANY),
    (re.compile(r"(^|/)(Test/(More|Simple|Builder|Harness|Deep|Exception|Fatal|Most)|Test2|TAP|App/Prove)(/[\w/]+)?\.pm$|"
                r"(^|/)(strict|warnings|lib|base|parent|constant|vars|utf8|feature|overload|Carp|Exporter|POSIX)\.pm$"),
     "perl (in place of its own module)", ANY),
    (re.compile(r"(^|/)\.pnp\.c?js$|(^|/)\.pnp\.loader\.mjs$"), "node", ANY),
    (re.compile(r"(^|/)go\.work(\.sum)?$|(^|/)vendor/modules\.txt$"), "go", ANY),
    (re.compile(r"(^|/)go\.mod$"), "go", re.compile(r"^\s*(replace|toolchain|godebug|exclude|retract)\b|=>")),
    (re.compile(r"_test\.go$"), "go test",
     re.compile(r"^\s*func\s+(TestMain\s*\(|init\s*\(\s*\))|^\s*//\s*(go:build|\+build)\b|^\s*//go:linkname")),
    (re.compile(r"\.go$"), "go", re.compile(r"^\s*//\s*(go:build|\+build)\b|^\s*//go:linkname")),
    (re.compile(r"(^|/)build\.rs$|(^|/)\.cargo/config(\.toml)?$|(^|/)rust-toolchain(\.toml)?$"), "cargo", ANY),
    (re.compile(r"(^|/)Cargo\.toml$"), "cargo",
     re.compile(r"^\s*\[+\s*(patch|replace|build-dependencies|target|profile|lib|test|bin)\b|"
                r"^\s*(build|links|harness|autotests|test|doctest|rustflags|proc-macro)\s*=")),
    (re.compile(r"\.rs$"), "cargo test",
     re.compile(r"cfg!\s*\(\s*test|cfg\s*\(\s*(not|any|all)\s*\(.*\btest\b|"
                r"#\[cfg\(test\)\]\s*(pub(\([\w ]+\))?\s+)?(fn|const|static|impl|use|struct|enum|type)\b")),
)
"""(path, runner, the lines that matter to it): a file a runner reads by itself, from the checks' folder."""
SHADOWS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"^(?P<stem>(?:.*/)?[^/.]+)$"), "{stem}.js", "node tries `{rel}` before `{hit}` for require"),
    (re.compile(r"^(?P<stem>(?:.*/)?[^/.]+)$"), "{stem}.json", "node tries `{rel}` before `{hit}` for require"),
    (re.compile(r"^(?P<stem>.+)\.pmc$"), "{stem}.pm", "perl loads `{rel}` before `{hit}`"),
    (re.compile(r"^(?:t/lib/|blib/lib/|local/lib/perl5/|(?!lib/)[\w.-]+/)?(?P<stem>[\w/]+\.pm)$"), "lib/{stem}",
     "perl finds `{rel}` on @INC (`use lib`, `-I`, PERL5LIB) before `{hit}`"),
    (re.compile(r"^(?P<stem>(?:.*/)?[^/]+)\.(?:js|json|node)$"), "{stem}/index.js",
     "node tries `{rel}` before `{hit}` for require"),
    (re.compile(r"^(?P<stem>(?:.*/)?[^/]+)/__init__\.py$"), "{stem}.py", "Python imports the package `{rel}` "
     "before the module `{hit}`"),
    (re.compile(r"^(?P<stem>(?:.*/)?[^/.]+)\.(?:[\w-]+\.)?(so|pyd)$"), "{stem}.py",
     "Python imports the extension `{rel}` before `{hit}`"),
)
"""(new path form, the existing sibling it beats, why)."""


def _named(rel: str, named: Iterable[str]) -> bool:
    return any(rel == n or rel.rsplit("/", 1)[-1] == n or rel.startswith(n.rstrip("/") + "/") for n in named)


def _lines(root: Path | None, rel: str, wanted: re.Pattern[str]) -> set[str]:
    if root is None:
        return set()
    text = (read_rel(root, rel, TEXT_CAP) or b"").decode("utf-8", "replace")
    return {" ".join(line.split()) for line in text.splitlines() if line.strip() and wanted.search(line)}


def implicit_changes(start: dict[str, FileState], end: dict[str, FileState], workspace: Path,
                     snapshot: Path | None, named: Iterable[str] = ()) -> list[str]:
    """Review lines for runner-loaded files the run created, changed or deleted that the goal does not name."""
    named = list(named)
    out: list[str] = []
    for rel in sorted(set(start) | set(end)):
        if start.get(rel) == end.get(rel) or _named(rel, named) or "/__pycache__/" in f"/{rel}":
            continue
        for pattern, runner, wanted in IMPLICIT:
            if not pattern.search(rel):
                continue
            if wanted is not ANY and rel in end and _lines(snapshot, rel, wanted) == _lines(workspace, rel, wanted):
                break
            how = "deleted" if rel not in end else "created" if rel not in start else "changed"
            out.append(f"tampering: the run {how} {rel}, which {runner} loads by itself when the checks run")
            break
    folded = [line for line in out if "node_modules/" in line]
    if len(folded) > 3:  # one line for an installed tree, not one per file
        out = [line for line in out if "node_modules/" not in line] + [folded[0], f"... and {len(folded) - 1} more "
                                                                                  "under node_modules/"]
    return out


def shadows(start: dict[str, FileState], end: dict[str, FileState], named: Iterable[str] = ()) -> list[str]:
    """Review lines for new files that win a module lookup over an existing sibling the run left in place."""
    named = list(named)
    out = []
    for rel in sorted(end):
        if rel in start or _named(rel, named):
            continue
        for pattern, sibling, why in SHADOWS:
            m = pattern.match(rel)
            if m is None:
                continue
            hit = sibling.format(stem=m.group("stem"))
            if hit != rel and hit in start and hit in end:
                out.append(f"tampering: the run wrote {rel}: {why.format(rel=rel, hit=hit)}")
                break
    return out


MAKE_FILES = ("GNUmakefile", "makefile", "Makefile")
"""GNU make's own search order."""
RULE = re.compile(r"^([^\s:=#][^:=#]*?)\s*::?(?!=)\s*([^;]*)(?:;(.*))?$")
ASSIGN = re.compile(r"^\s*(?:export\s+|override\s+)?([\w.-]+)\s*(?:[:+?!]?=|::=)")
VAR_USE = re.compile(r"\$[({]([\w.-]+)[)}]")
MAKE_CALL = re.compile(r"(?:^|[\s;&|(])(?:g?make)((?:\s+[^\s;&|()]+)*)")


def named_build_files(goal: str, start: Iterable[str]) -> list[str]:
    """The make files a goal names without an extension ("add a build target to the Makefile")."""
    if not re.search(r"(?i)\b(gnu)?makefile\b", goal):
        return []
    return [m for m in MAKE_FILES if m in set(start)] or ["Makefile"]


def _make_rules(text: str) -> tuple[dict[str, str], dict[str, str], str]:
    """(target -> prerequisites and recipe, variable -> its assignment, the default target)."""
    rules: dict[str, str] = {}
    variables: dict[str, str] = {}
    current: list[str] = []
    first = ""
    for line in text.splitlines():
        if line.startswith("\t"):
            for t in current:
                rules[t] += "\n" + line.strip()
            continue
        if m := ASSIGN.match(line):
            variables[m.group(1)] = " ".join(line.split())
            current = []
        elif (m := RULE.match(line)) and not line.lstrip().startswith("#"):
            current = m.group(1).split()
            for t in current:
                rules[t] = rules.get(t, "") + " ".join(m.group(2).split()) + (f"\n{m.group(3).strip()}"
                                                                              if m.group(3) else "")
                if not first and not t.startswith("."):
                    first = t
        elif line.strip() and not line.lstrip().startswith("#"):
            current = []
    return rules, variables, first


def recipe_changes(command: str, named_make: Iterable[str], workspace: Path, snapshot: Path | None) -> list[str]:
    """Review lines for a make file the goal names (so it is the change, not laid over the pre-run copy) whose
    rules the check runs were rewritten: the goal's new target is the change, the check's old `test` recipe is
    not (a `test:` rewritten to `echo PASS` while the goal asked for a `clean:` target)."""
    calls = [[w for w in m.group(1).split() if not w.startswith("-") and "=" not in w]
             for m in MAKE_CALL.finditer(command)]
    if not calls or snapshot is None:
        return []
    out = []
    for rel in named_make:
        old_text = (read_rel(snapshot, rel, TEXT_CAP) or b"").decode("utf-8", "replace")
        new_text = (read_rel(workspace, rel, TEXT_CAP) or b"").decode("utf-8", "replace")
        if not old_text or old_text == new_text:
            continue
        old, old_vars, default = _make_rules(old_text)
        new, new_vars, _ = _make_rules(new_text)
        todo = [t for call in calls for t in (call or [default]) if t]
        seen: set[str] = set()
        while todo and len(seen) < 200:
            t = todo.pop()
            if t in seen or t not in old:
                continue
            seen.add(t)
            todo += old[t].split("\n", 1)[0].split()
            used = set(VAR_USE.findall(old[t])) | set(VAR_USE.findall(new.get(t, "")))
            moved = [v for v in used if old_vars.get(v) != new_vars.get(v)]
            if old[t] != new.get(t) or moved:
                what = f"the variable {moved[0]} it uses" if old[t] == new.get(t) else "its recipe"
                out.append(f"tampering: the run changed {what} in {rel}: the target `{t}` your check `{command}` "
                           "runs (the goal asks for other targets)")
    return out


def make_goal_files(command: str, start: dict[str, FileState], end: dict[str, FileState],
                    named: Iterable[str] = ()) -> list[str]:
    """Review lines for files the run created named like the make goal a check runs (`test` for `make test`):
    make then takes the goal as up to date and runs nothing."""
    named = list(named)
    goals = {w for m in MAKE_CALL.finditer(command) for w in m.group(1).split()
             if not w.startswith("-") and "=" not in w}
    return [f"tampering: the run created {g}, named like the make goal `{g}` that `{command}` runs: make takes "
            "it as up to date and runs nothing" for g in sorted(goals) if g in end and g not in start
            and not _named(g, named)]
