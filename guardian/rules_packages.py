"""Argv rules: language package managers (named installs, global tools, another index).

On a person's machine, what makes a package install a question is where the
code comes from and what it changes, not that the agent chose a name:
    - a plain registry name (`requests`, `"django>=4,<5"`, `lodash@4`,
      `@types/node`) from the tool's default index into the project's
      environment (`npm install x` into node_modules, `uv add`/`poetry add`
      into the project's venv, `pip install x` into the active environment;
      a system Python refuses it, PEP 668) is ordinary work, as installing
      what the manifest lists is: allowed;
    - the user's or the system's environment (`--user`, `-g`, `pipx`, `uv tool
      install`, `--break-system-packages`, `--target /x`, `cargo install`,
      `gem install`), a URL, a VCS or a path outside the working folder
      (`git+https://..`, `user/repo`, `../x`), and uninstalls outside a project
      still ask (PKG-001/002/004);
    - another index or registry, by an option or a variable (`--index-url`,
      `NPM_CONFIG_REGISTRY=..`, `GOPROXY=..`, `CARGO_REGISTRIES_X_INDEX`), or a
      check turned off (`--trusted-host`, `GOINSECURE`, `GOSUMDB=off`) asks
      PKG-005, for any command of the tool that fetches (`npm ci`, `pip install
      -r`, `go build`): a company mirror is honest, and a person should see it.
"""

from __future__ import annotations

import re

from tether.guardian.rules import Inv, rule
from tether.guardian.rules_toolconfig import PUBLIC_SOURCES
from tether.guardian.words import UNKNOWN

_PEP508 = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[\w.,\s-]*\])?"
                     r"(?:\s*(?:===|==|>=|<=|~=|!=|>|<)\s*[\w.*+!-]+\s*,?)*\s*(?:;[^@]*)?$")
"""A requirement by name from the index (`requests`, `pkg[extra]==1.2`, `"django>=4,<5"`), not a URL or path."""
_NPM_NAME = re.compile(r"^(?:@[a-z0-9~][\w.~-]*/)?[a-z0-9~][\w.~-]*(?:@(?:npm:(?:@[\w.~-]+/)?[\w.~-]+@?)?"
                       r"[\w.^~<>=*|\s-]*)?$", re.I)
"""An npm package by name, with a version, range, tag or `npm:` alias (`lodash@^4`, `@types/node`)."""
_GO_MODULE = re.compile(r"^[a-z0-9.-]+\.[a-z]{2,}(?:/[\w.~-]+)*(?:@[\w.+-]+)?$|^[\w.-]+@[\w.+-]+$")
_LOCAL = re.compile(r"^(?:\.$|\./|[\w-][\w.-]*/|[\w-][\w.+-]*\.(?:whl|tar\.gz|zip|tgz)$)")
"""A path under the working folder (`.`, `./pkg`, `dist/x.whl`, `packages/a/`), never `../x`, `/x` or `~`."""

_PIP_VALUED = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t", "--target", "--prefix", "--root",
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--platform",
    "--python-version", "--implementation", "--abi", "--src", "--upgrade-strategy", "--progress-bar", "--log",
    "--cache-dir", "--no-binary", "--only-binary", "--config-settings", "-C", "--global-option",
    "--install-option", "--python", "-p", "--group", "--report", "--root-user-action", "--exists-action",
    "--timeout", "--retries", "--proxy", "--cert", "--client-cert", "-G", "--source", "-E", "--extras",
    "--extra", "--optional", "--package", "--directory", "--project", "--markers", "--rev", "--tag", "--branch",
    "--index", "--default-index", "--script", "--dev-group", "--lockfile", "-L", "--venv", "--keyring-provider",
    "--resolution", "--prerelease", "--exclude-newer", "--python-platform", "--color", "--config-file"})
_NPM_VALUED = frozenset({"--registry", "--prefix", "-C", "--cache", "--userconfig", "--tag", "--workspace", "-w",
                         "--filter", "-F", "--loglevel", "--omit", "--include", "--install-strategy", "--cwd",
                         "--location"})
_PIP_WIDE = frozenset({"--user", "--break-system-packages", "--system", "--target", "-t", "--prefix", "--root"})
"""pip/uv options that put packages outside the active or project environment (the user's, the system's)."""
_INDEX_OPTS = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host",
                         "--index", "--default-index", "--registry", "--insecure-host", "--allow-insecure-host"})
"""Options naming an index, registry or link page other than the default (or trusting a host without TLS)."""
_INDEX_ENV = re.compile(
    r"^(?:PIP_(?:INDEX_URL|EXTRA_INDEX_URL|INDEX|FIND_LINKS|TRUSTED_HOST)|UV_(?:INDEX_URL|EXTRA_INDEX_URL|INDEX|"
    r"DEFAULT_INDEX|FIND_LINKS|INSECURE_HOST)|(?i:npm_config_(?:@[\w.-]+:)?registry|npm_config_strict_ssl)|"
    r"YARN_REGISTRY|YARN_NPM_REGISTRY_SERVER|BUN_CONFIG_REGISTRY|PNPM_CONFIG_REGISTRY|GOPROXY|GOINSECURE|"
    r"GONOSUMDB|GONOSUMCHECK|GOSUMDB|GOFLAGS|GOPRIVATE|GONOPROXY|CARGO_REGISTRIES_\w+|CARGO_REGISTRY_DEFAULT|"
    r"CARGO_SOURCE_\w+|POETRY_REPOSITORIES_\w+|POETRY_SOURCE_\w+|PDM_PYPI_URL|PDM_PYPI_\w+_URL|HATCH_INDEX_URL|"
    r"PIPENV_PYPI_MIRROR|BUNDLE_MIRROR__\w+|GEM_SOURCE|RUBYGEMS_HOST|COMPOSER_REPO\w*|CONDA_CHANNELS|"
    r"MAVEN_REPO\w*|NUGET_SOURCE\w*)$")
"""Variables that point a package tool at another index or registry, or turn its checks off."""
_FETCHERS = ("pip", "pip3", "pipx", "uv", "uvx", "poetry", "pdm", "pipenv", "hatch", "conda", "mamba", "micromamba",
             "npm", "npx", "yarn", "pnpm", "pnpx", "bun", "bunx", "go", "cargo", "gem", "bundle", "bundler",
             "composer", "mvn", "gradle", "dotnet", "nuget")


def _names(args: list[str], valued: frozenset[str], skip: int) -> list[str]:
    """The positional words after the verb (`skip` words), option values left out."""
    out, take = [], False
    pos = 0
    for a in args:
        if take:
            take = False
            continue
        if a == "--" or a.startswith("-"):
            take = a in valued
            continue
        pos += 1
        if pos > skip:
            out.append(a)
    return out


def _opt(inv: Inv, opts: frozenset[str]) -> bool:
    return any(a.split("=", 1)[0] in opts for a in inv.args if a.startswith("-"))


def _opt_values(args: list[str], opts: frozenset[str]) -> list[str]:
    out = []
    for i, a in enumerate(args):
        head, eq, val = a.partition("=")
        if eq and head in opts:
            out.append(val)
        elif a in opts and i + 1 < len(args):
            out.append(args[i + 1])
    return out


def _plain_python(word: str) -> bool:
    return UNKNOWN not in word and (bool(_PEP508.match(word.strip())) or bool(_LOCAL.match(re.sub(
        r"\[[\w.,\s-]*\]$", "", word))))  # `.[dev]`: a local project with extras


def _plain_npm(word: str) -> bool:
    return UNKNOWN not in word and (bool(_NPM_NAME.match(word)) or bool(_LOCAL.match(word)) and (
        word.startswith(".") or word.endswith((".tgz", ".tar.gz"))))


def _target_inside(values: list[str]) -> bool:
    """`--target`/`--prefix` values under the working folder (`--prefix ./frontend`)."""
    return all(UNKNOWN not in v and _LOCAL.match(v) and not v.startswith("..") for v in values)


@rule("PKG-001", "package-install", "ask", ("pip", "pip3", "pipx", "uv", "poetry", "pdm",
                                             "conda", "mamba", "easy_install"),
      "installs Python packages outside the project's environment (--user, system, pipx, a tool), from a URL, "
      "a VCS or a path outside the working folder", "pip install --user git+https://x.example/pkg.git")
def _pip(inv: Inv) -> bool:
    if inv.prog == "uv" and inv.positional[:1] == ["pip"]:
        inv = Inv(inv.argv[1:], inv.simple)
    verb = inv.positional[:1]
    if inv.prog == "easy_install" or inv.prog == "pipx" and verb not in (["list"], ["run"], ["--help"]) and verb:
        return inv.prog == "easy_install" or verb[0] in ("install", "inject", "uninstall", "upgrade", "reinstall",
                                                          "install-all", "upgrade-all", "uninstall-all")
    if inv.prog == "uv" and inv.positional[:2] in (["tool", "install"], ["tool", "upgrade"]):
        return True  # a tool on the user's PATH
    if inv.prog in ("conda", "mamba"):
        return verb in (["install"], ["remove"], ["uninstall"], ["update"]) and bool(inv.positional[1:])
    if inv.prog in ("poetry", "pdm", "uv"):
        if verb not in (["add"], ["remove"]):
            return False
        return verb == ["add"] and not all(_plain_python(n) for n in _names(inv.args, _PIP_VALUED, 1))
    if verb == ["uninstall"]:
        return _opt(inv, frozenset({"--break-system-packages", "--user", "--system"}))
    if verb != ["install"]:
        return False
    wide = [a for a in inv.args if a.split("=", 1)[0] in _PIP_WIDE]
    if any(a.split("=", 1)[0] in ("--user", "--break-system-packages", "--system") for a in wide):
        return True
    if wide and not _target_inside(_opt_values(inv.args, frozenset({"--target", "-t", "--prefix", "--root"}))):
        return True
    editable = _opt_values(inv.args, frozenset({"-e", "--editable"}))
    return not all(_plain_python(n) for n in _names(inv.args, _PIP_VALUED, 1) + editable)


@rule("PKG-002", "package-install", "ask", ("npm", "yarn", "pnpm", "bun", "npx"),
      "installs or removes JavaScript packages globally, or installs one from a URL, git or a path outside the "
      "working folder", "npm install -g typescript")
def _npm(inv: Inv) -> bool:
    pos = inv.positional
    wide = inv.has("g", "--global") or any(a in ("--location=global", "--location=user") for a in inv.args)
    if inv.prog == "yarn" and pos[:1] == ["global"]:
        return True
    if pos[:1] in (["uninstall"], ["remove"], ["rm"], ["un"], ["r"]):
        return wide
    if pos[:1] not in (["install"], ["i"], ["add"], ["isntall"], ["in"]):
        return False
    if wide or not _target_inside(_opt_values(inv.args, frozenset({"--prefix"}))):
        return True
    return not all(_plain_npm(n) for n in _names(inv.args, _NPM_VALUED, 1))


@rule("PKG-004", "package-install", "ask",
      ("gem", "cargo", "go", "composer", "cpan", "cpanm", "rustup", "dotnet", "mvn", "luarocks"),
      "installs packages or tools from a registry onto the user's or the system's PATH", "cargo install ripgrep")
def _other_pkg(inv: Inv) -> bool:
    pos = inv.positional
    if inv.prog == "go":
        if pos[:1] == ["get"]:
            return not all(_GO_MODULE.match(p) or p in ("./...", ".", "-u") for p in pos[1:])
        return pos[:1] == ["install"]
    if inv.prog == "cargo":
        return pos[:1] in (["install"], ["uninstall"])
    if inv.prog == "composer":
        if pos[:1] in (["require"], ["remove"]):
            return not all(re.match(r"^[\w.-]+/[\w.-]+(?::\S+)?$|^(?:php|ext-[\w-]+)(?::\S+)?$", p) for p in pos[1:])
        return pos[:1] == ["global"]
    if inv.prog in ("dotnet", "rustup"):
        return pos[:2] in (["tool", "install"],) or pos[:1] == ["toolchain"] and "install" in pos
    if inv.prog == "mvn":
        return False
    return bool(set(pos[:1]) & {"install", "uninstall"}) or inv.prog in ("cpan", "cpanm") and bool(pos)


def _env_words(inv: Inv) -> dict[str, str]:
    """The variables the command runs with: the line's (`export`, `K=V cmd`) and an `env K=V` wrapper's."""
    env = dict(inv.simple.env)
    if inv.simple.argv is not inv.argv:
        for w in inv.simple.argv[: max(0, len(inv.simple.argv) - len(inv.argv))]:
            k, eq, v = w.partition("=")
            if eq and re.fullmatch(r"[A-Za-z_@][\w.:@-]*", k):
                env[k] = v
    return env


def override(inv: Inv) -> str:
    """The option or variable that points this package command at another index, or "" for none."""
    if inv.prog == "uv" and inv.positional[:1] == ["pip"]:
        inv = Inv(inv.argv[1:], inv.simple)
    mirror = _bundler_mirror(inv)
    if mirror:
        return mirror
    for i, a in enumerate(inv.args):
        head, eq, val = a.partition("=")
        if not a.startswith("-") or head not in _INDEX_OPTS or (head == "-f" and inv.prog in _F_IS_FILE):
            continue
        if not eq:
            val = inv.args[i + 1] if i + 1 < len(inv.args) else ""
        if head in ("--trusted-host", "--insecure-host", "--allow-insecure-host") or not _public(val):
            return head
    for k, v in _env_words(inv).items():
        if _INDEX_ENV.match(k) and v and (k in _CHECKS and not _harmless_env(k, v) or
                                          k not in _CHECKS and not _public(v) and not _harmless_env(k, v)):
            return k
    return ""


_F_IS_FILE = frozenset({"conda", "mamba", "micromamba"})
"""Programs whose `-f` names an environment or spec file (`conda env create -f environment.yml`), not a link page."""


def _bundler_mirror(inv: Inv) -> str:
    """`bundle config [set] [--global|--local] mirror.SOURCE URL`: every later gem fetch goes to URL."""
    if inv.prog not in ("bundle", "bundler") or inv.positional[:1] != ["config"]:
        return ""
    pos = [a for a in inv.positional[1:] if a != "set"]
    if len(pos) >= 2 and pos[0].startswith("mirror.") and not _public(pos[1]):
        return pos[0]
    return ""


_CHECKS = frozenset({"GOSUMDB", "GONOSUMDB", "GONOSUMCHECK", "GOINSECURE", "PIP_TRUSTED_HOST", "UV_INSECURE_HOST",
                     "npm_config_strict_ssl", "NPM_CONFIG_STRICT_SSL", "GOFLAGS"})
"""Variables that turn a check off (any value but the default asks), not ones that name an index."""
_OFFICIAL = re.compile(r"^https://download\.pytorch\.org/whl(?:/[\w.+-]+)?/?$")
"""Official indexes of one project's own wheels, named in its install instructions (`--index-url
https://download.pytorch.org/whl/cpu`)."""


def _public(value: str) -> bool:
    value = value.strip("'\"")
    parts = [u for u in re.split(r"[,|]", value) if u]
    return UNKNOWN not in value and bool(parts) and all(PUBLIC_SOURCES.match(u) or _OFFICIAL.match(u) or u == "off"
                                                                 for u in parts)


def _harmless_env(key: str, value: str) -> bool:
    """Go's privacy settings that only skip the proxy for named modules, and GOFLAGS without -insecure."""
    if key in ("GOPRIVATE", "GONOPROXY"):
        return True
    if key.lower() == "npm_config_strict_ssl":
        return value.lower() not in ("false", "0", "no")
    if key == "GOFLAGS":
        return "-insecure" not in value and "GOINSECURE" not in value
    return key == "GOSUMDB" and value.startswith("sum.golang.org")


@rule("PKG-005", "package-install", "ask", _FETCHERS,
      "fetches packages from an index or registry other than the tool's default (an option or a variable), or "
      "trusts one without TLS or checksums", "NPM_CONFIG_REGISTRY=https://npm.example.net npm install")
def _index_override(inv: Inv) -> bool:
    return bool(override(inv))
