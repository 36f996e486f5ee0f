"""Places in a folder whose content runs as code when a person uses common tools there: the data.

A run works in the sandbox, but what it leaves in the workspace is used on
the host afterwards by the person's own git, Python, shell, editor and
package managers, with the person's rights. Some files there are code that
nobody reads before it runs: `git status` runs `core.fsmonitor`, `git
commit` runs `.git/hooks/pre-commit`, `cd` into the folder runs `.envrc`
under direnv, opening it in an editor runs `.vscode/tasks.json` tasks,
starting Python runs every `.pth` in its environment, and an import uses a
`__pycache__/*.pyc` whose header matches the source without reading the
source. This module is the table of those places, as data:

- `PLACES`: a `Place` per family (a regex over the workspace-relative path,
  when it runs, and how a change to it is judged: `any` change, or by content
  for git config, attributes, `package.json` scripts and bytecode).
- `GIT_TAIL`: what is kept of a `.git` folder in manifests (config, hooks,
  attributes, rebase plans; never the object store).
- `git_dirs()`, `env_roots()`, `hooks_dirs()`: places found from the tree
  itself (bare repositories, Python environments, `core.hooksPath`).
- `place_of()`: the place of one path, given those.

The rules that judge content are in common.hostexec_check; the guardian
(guardian/rules_hostexec.py), the manifest and the gate all read this table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tether.common.record import dataclass

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Literal

    Check = Literal["any", "git-config", "git-hook", "git-ref", "git-ignore", "attributes", "package-json",
                    "bytecode", "dotenv", "tool-plugins"]
else:
    Check = str  # what the annotations name at run time (they are strings; nothing validates against it)


@dataclass(frozen=True)
class Place:
    """One family of places: where, what runs it, and how a change is judged."""

    kind: str
    """Short name shown to people: `git config`, `git hook`, `direnv`, ..."""
    pattern: re.Pattern[str]
    """Matches a workspace-relative path (`/`-joined)."""
    runs: str
    """When it runs, in the person's words."""
    check: Check = "any"


def _p(kind: str, pattern: str, runs: str, check: Check = "any") -> Place:
    return Place(kind, re.compile(pattern), runs, check)


_GITDIR = r"(?:^|/)\.git/(?:(?:modules|worktrees)/.+/)?"
GIT_TAIL = re.compile(
    r"^(?:(?:modules|worktrees)/.+/)?(?:config|config\.worktree|commondir|gitdir|info/attributes|info/exclude|"
    r"info/sparse-checkout|HEAD|packed-refs|refs/.*|hooks(?:/.*)?|rebase-merge/.*|rebase-apply/.*|sequencer/.*)$"
)
"""Paths inside a `.git` folder (relative to it) that manifests keep: everything there that git runs or reads
as config, what hides files from `git status`, and the refs (a run's commit on a branch the person checks out
later brings its files in unseen). The object store, logs and the index are left out (data, and many files)."""
GIT_RUNS = "`git status`, `git add`, `git commit`, `git diff`, `git log` and others in this folder"
EDITOR_RUNS = "opening the folder in an editor or IDE that trusts it"
AGENT_RUNS = "starting a coding agent (Claude Code, Cursor, Gemini CLI, Codex, ...) in this folder"

GIT_CONFIG = _p("git config", _GITDIR + r"(?:config|config\.worktree)$", GIT_RUNS, "git-config")
GIT_HOOK = _p("git hook", _GITDIR + r"hooks(?:/.*)?$", "`git commit`, `git checkout`, `git merge`, `git push`, ...",
              "git-hook")
GIT_ATTRIBUTES = _p("git attributes", _GITDIR + r"info/attributes$|(?:^|/)\.gitattributes$",
                    "`git add`, `git checkout`, `git diff` (filters and diff drivers they name)", "attributes")
BYTECODE = _p("python bytecode", r"\.pyc$", "importing the module (Python uses the cache when its header matches)",
              "bytecode")
PY_ENV = _p("python environment", r"(?:^|/)pyvenv\.cfg$|(?:^|/)(?:site|dist)-packages/",
            "activating or running programs of that environment")

PLACES: tuple[Place, ...] = (
    GIT_CONFIG,
    _p("git folder link", _GITDIR + r"(?:commondir|gitdir)$|(?:^|/)\.git$",
       f"{GIT_RUNS} (git reads its config and hooks from the folder this names)"),
    GIT_HOOK,
    GIT_ATTRIBUTES,
    _p("git rebase plan", _GITDIR + r"(?:rebase-merge|rebase-apply|sequencer)/",
       "`git rebase --continue` (its `exec` lines)"),
    _p("git ignore rules", _GITDIR + r"info/(?:exclude|sparse-checkout)$",
       "`git status` and `git add` (the files it names are no longer shown to you)", "git-ignore"),
    _p("git branch or tag", _GITDIR + r"(?:refs/.+|packed-refs)$",
       "`git checkout`, `git merge` or `git rebase` of it (the run's commits bring their files in)", "git-ref"),
    _p("git config", r"(?:^|/)\.gitmodules$|(?:^|/)\.lfsconfig$|^\.gitconfig$|^\.config/git/",
       "`git submodule`, `git lfs` and git itself", "git-config"),
    _p("git hook manager", r"(?:^|/)(?:\.husky|\.githooks)/|(?:^|/)\.pre-commit-config\.ya?ml$|"
       r"(?:^|/)\.?lefthook(?:-local)?\.(?:ya?ml|json|toml)$|(?:^|/)\.lintstagedrc|(?:^|/)lint-staged\.config\.",
       "`git commit` when a hook manager (pre-commit, husky, lefthook, lint-staged) is installed"),
    _p("python start-up hook", r"\.pth$|(?:^|/)(?:sitecustomize|usercustomize)\.py$",
       "starting Python (site runs `.pth` import lines and sitecustomize in its environment)"),
    _p("python tool plugins", r"(?:^|/)(?:pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml|mypy\.ini|\.coveragerc|"
       r"\.flake8)$", "`pytest`, `tox`, `mypy`, `coverage` or `flake8` here (the plugins it names load as code)",
       "tool-plugins"),
    BYTECODE,
    PY_ENV,
    _p("python entry points", r"\.(?:egg|dist)-info/entry_points\.txt$|\.egg-link$|(?:^|/)\.eggs/",
       "running pytest, pip or tools that load plugins by entry point from this folder"),
    _p("linter plugin", r"(?:^|/)\.?pylintrc$", "an editor or CI running pylint here (its init-hook)"),
    _p("python tool config", r"(?:^|/)ipython_config\.py$|(?:^|/)jupyter_\w+_config\.(?:py|json)$|"
       r"(?:^|/)\.ipython/|(?:^|/)\.python-version$",
       "`ipython` or `jupyter` started here (they load these), pyenv choosing the interpreter"),
    _p("debugger config", r"(?:^|/)\.gdbinit$|(?:^|/)\.lldbinit$", "`gdb`/`lldb` started here (when local init "
       "files are allowed)"),
    _p("interpreter start-up file", r"(?:^|/)\.(?:pdbrc|irbrc|pryrc|Rprofile|octaverc|psqlrc|sqliterc)$",
       "`pdb`, `irb`, `pry`, `R`, `octave`, `psql` or `sqlite3` started in this folder (they run it first)"),
    _p("direnv", r"(?:^|/)\.envrc(?:\.(?!(?:example|sample|template|dist|tpl)$)[\w.-]+)?$|(?:^|/)\.direnv/bin/|"
       r"(?:^|/)\.(?:autoenv(?:_leave)?(?:\.zsh)?|env\.leave)$",
       "`cd` into the folder with direnv or autoenv"),
    _p("env file", r"(?:^|/)\.env(?:\.[\w.-]+)?$|(?:^|/)\.flaskenv$", "editors and tools that load `.env` files "
       "into a program's environment (VS Code's Python extension, direnv's `dotenv`, flask), a shell that sources "
       "it", "dotenv"),
    _p("make file", r"(?:^|/)(?:GNUmakefile|makefile)$",
       "`make` here (GNU make reads GNUmakefile, then makefile, before Makefile)"),
    _p("tool version manager", r"(?:^|/)\.?mise(?:\.[\w-]+)?\.toml$|(?:^|/)\.mise/|(?:^|/)\.rtx\.toml$|"
       r"(?:^|/)\.tool-versions$|(?:^|/)\.config/mise/",
       "`cd` into the folder with mise or asdf (their hooks, tasks and `path:` versions)"),
    _p("editor config", r"(?:^|/)(?:\.vscode|\.idea|\.fleet|\.zed|\.theia|\.devcontainer|\.nova)/|"
       r"\.code-workspace$|(?:^|/)\.devcontainer\.json$|(?:^|/)\.(?:nvim\.lua|nvimrc|exrc|lvimrc)$|"
       r"(?:^|/)\.dir-locals(?:-2)?\.el$|\.sublime-project$|(?:^|/)[._]g?vimrc$|(?:^|/)_exrc$", EDITOR_RUNS),
    _p("coding agent config", r"(?:^|/)(?:\.claude|\.cursor|\.gemini|\.codex|\.continue|\.windsurf|\.roo|"
       r"\.opencode|\.kilocode|\.amazonq|\.amp)/|(?:^|/)opencode\.jsonc?$|(?:^|/)\.mcp\.json$|(?:^|/)\.aider\.conf\.ya?ml$|(?:^|/)\.cursorrules$|"
       r"(?:^|/)(?:CLAUDE|AGENTS|GEMINI)(?:\.local)?\.md$|(?:^|/)\.(?:clinerules|windsurfrules)$|"
       r"(?:^|/)\.github/(?:copilot-instructions\.md$|instructions/|prompts/)",
       f"{AGENT_RUNS}: it reads these as instructions and settings"),
    _p("JS tool config", r"(?:^|/)(?:[\w-]+\.config|\.(?:eslintrc|prettierrc|mocharc|babelrc|stylelintrc|swcrc|"
       r"releaserc|lintstagedrc))\.(?:c|m)?(?:js|ts)$",
       "running that tool here (eslint, prettier, jest, vitest, mocha, babel, webpack, vite, ...: the file is a "
       "program it runs)"),
    _p("package manager config", r"(?:^|/)\.npmrc$|(?:^|/)\.yarnrc(?:\.ya?ml)?$|(?:^|/)\.yarn/(?:releases|plugins)/|"
       r"(?:^|/)\.?pnpmfile\.c?m?js$|(?:^|/)bunfig\.toml$|(?:^|/)\.bunfig\.toml$",
       "`npm`, `yarn`, `pnpm` or `bun` commands in this folder (scripts, yarnPath, hooks)"),
    _p("package install scripts", r"(?:^|/)package\.json$", "`npm install`/`yarn`/`pnpm install` (lifecycle scripts)",
       "package-json"),
    _p("build tool config", r"(?:^|/)\.cargo/config(?:\.toml)?$|(?:^|/)rust-toolchain(?:\.toml)?$|(?:^|/)\.mvn/|"
       r"(?:^|/)gradle/wrapper/|(?:^|/)\.bazelrc$|(?:^|/)gradle\.properties$|(?:^|/)\.(?:jvmopts|sbtopts|sdkmanrc)$",
       "`cargo`, `rustup`, `./mvnw`, `./gradlew` or `bazel` in this folder (runners, wrappers, toolchains)"),
    _p("tether config", r"^tether\.toml$", "the next `tether run` started in this folder (it reads "
       "tether.toml from the working folder: trust, verify, accept_self_verified)"),
    _p("mercurial config", r"(?:^|/)\.hg/hgrc$|^\.hgrc$", "`hg` commands in this folder (its hooks)"),
    _p("shell start-up file", r"^\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|"
       r"zlogin|inputrc|kshrc)$|^\.ssh/(?:config|rc|environment|authorized_keys2?)$|"
       r"^\.config/(?:fish|autostart|systemd|environment\.d|nvim|Code)/|^\.local/bin/|"
       r"^\.(?:emacs|tmux\.conf|xprofile|xsessionrc|xinitrc|pam_environment|gemrc|curlrc|wgetrc)$|"
       r"^\.(?:vim|emacs\.d|gnupg)/|^\.local/share/applications/",
       "a login, shell or desktop session with this folder as its home"),
)
"""Every family of host-executable places (ordered: the first match names a path)."""

EXEC_VARIABLES = (
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "PYTHONSTARTUP",
    "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONEXECUTABLE", "PYTHONBREAKPOINT", "PYTHONWARNINGS",
    "NODE_OPTIONS", "NODE_PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS1", "PS4", "SHELLOPTS", "PERL5OPT",
    "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
    "CLASSPATH", "PATH", "PAGER", "EDITOR", "VISUAL", "SHELL", "BROWSER", "LESSOPEN", "LESSCLOSE", "MANPAGER",
    "SSH_ASKPASS", "SUDO_ASKPASS", "HOME", "XDG_CONFIG_HOME", "ZDOTDIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
)
"""Environment variables that make a program load or run code from where they point (a `.env` setting one counts);
`GIT_*`, `NPM_CONFIG_*` and `PIP_*` count by prefix."""
EXEC_PREFIXES = ("GIT_", "NPM_CONFIG_", "npm_config_", "PIP_", "LD_", "DYLD_", "PYTHON")

LIFECYCLE = ("preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare", "prepublish",
             "prepack", "postpack", "dependencies", "preuninstall", "uninstall", "postuninstall")
"""package.json scripts npm/yarn/pnpm run on their own during install."""

_BARE_ONLY = frozenset({"HEAD", "config"})


def kept_in_git(tail: str) -> bool:
    """Whether a path inside a `.git` folder (relative to that folder) is kept in manifests."""
    return GIT_TAIL.match(tail) is not None


def git_dirs(paths: Iterable[str]) -> set[str]:
    """Folders (`""` for the root) that look like bare repositories: a `HEAD` and a `config` file side by side.

    git treats any such folder (with `objects/` and `refs/`, which may be empty
    and so are not in a manifest of files) as a repository when a command runs there.
    """
    seen: dict[str, set[str]] = {}
    for rel in paths:
        head, _, name = rel.rpartition("/")
        if name in _BARE_ONLY and ".git" not in head.split("/"):
            seen.setdefault(head, set()).add(name)
    return {d for d, names in seen.items() if names == _BARE_ONLY}


def env_roots(paths: Iterable[str]) -> set[str]:
    """Folders holding a Python environment (`pyvenv.cfg`, or conda's `conda-meta/`)."""
    out = set()
    for rel in paths:
        head, _, name = rel.rpartition("/")
        if name == "pyvenv.cfg":
            out.add(head)
        elif head.endswith("conda-meta") and (head == "conda-meta" or head.endswith("/conda-meta")):
            out.add(head[: -len("conda-meta")].rstrip("/"))
    return out


@dataclass(frozen=True)
class Context:
    """Places found from the tree itself, for `place_of`."""

    bare: frozenset[str] = frozenset()
    """Bare-repository folders (git_dirs)."""
    envs: frozenset[str] = frozenset()
    """Python environment folders (env_roots)."""
    hooks: frozenset[str] = frozenset()
    """Folders a git config names as `core.hooksPath`, relative to the workspace."""
    includes: frozenset[str] = frozenset()
    """Workspace files a git config includes (`include.path`): config themselves."""
    links: frozenset[tuple[str, str]] = frozenset()
    """(target, link) of the workspace's symlinks that point inside it: a file reached through a link at a place
    (`.git/hooks -> ../tools/hooks`, `.envrc -> env/dev.envrc`) is that place."""


def _under(rel: str, folder: str) -> str | None:
    """`rel` relative to `folder` when it is inside it (`folder` "" is the root)."""
    if not folder:
        return rel
    return rel[len(folder) + 1:] if rel.startswith(folder + "/") else None


_BARE_PLACES = {"config": GIT_CONFIG, "info/attributes": GIT_ATTRIBUTES}
_ENV_RUNS = re.compile(r"^(?:bin|Scripts|conda-meta|etc/conda)/|^lib[^/]*/python[^/]*/|^Lib/")


def place_of(rel: str, ctx: Context = Context()) -> Place | None:  # noqa: B008 - a frozen record
    """The place `rel` is (the first family that matches, itself or through a link to it), or None."""
    place = _place_of(rel, ctx)
    if place is not None or not ctx.links:
        return place
    seen = {rel}
    for _ in range(8):  # links to links, bounded
        for target, link in ctx.links:
            tail = "" if rel == target else _under(rel, target)
            if tail is None:
                continue
            alias = f"{link}/{tail}" if tail else link
            if alias in seen:
                continue
            seen.add(alias)
            place = _place_of(alias, ctx)
            if place is not None:
                return place
            rel = alias
            break
        else:
            return None
    return None


def _place_of(rel: str, ctx: Context) -> Place | None:
    if rel in ctx.includes:
        return GIT_CONFIG
    for folder in ctx.hooks:
        if _under(rel, folder):
            return GIT_HOOK
    for folder in ctx.bare:
        tail = _under(rel, folder)
        if tail is None:
            continue
        if tail in _BARE_PLACES:
            return _BARE_PLACES[tail]
        if tail.startswith("hooks/"):
            return GIT_HOOK
    for place in PLACES:
        if place.pattern.search(rel):
            return place
    for folder in ctx.envs:
        tail = _under(rel, folder)
        if tail and _ENV_RUNS.match(tail):
            return PY_ENV
    return None


def place_dirs() -> re.Pattern[str]:
    """Folders a write into may land in a place (`cp -r x .git/`, `tar -C .vscode`), as a regex over a path."""
    return re.compile(
        r"(?:^|/)(?:\.git(?:/(?:hooks|info|modules|worktrees))?|\.husky|\.githooks|\.vscode|\.idea|\.devcontainer|"
        r"\.claude|\.cursor|\.gemini|\.codex|\.opencode|\.cargo|\.mvn|\.direnv|\.mise|site-packages|"
        r"dist-packages)/?$"
    )
