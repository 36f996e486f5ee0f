"""Rules: a tool's own config or plugin command that makes code run later, or come from elsewhere.

A redirect into `~/.npmrc` is a write the path rules see; `npm config set
registry URL` makes the same change through the tool itself, and so do
`pip config set`, `go env -w`, `gh config set editor`, `aws configure set
credential_process` and `kubectl config set-credentials --exec-command`.
Each points later installs at another index, or names a program the tool
runs the next time the person (or an agent) uses it, on the host when the
command ran there. Extension and plugin installers (`code
--install-extension`, `codex mcp add`, `gemini extensions install`, `gh
extension install`, ...) put code in place that the editor or agent runs.

    HOSTEXEC-005: a config command whose key names a source of code (index,
        registry, channel, proxy, mirror), a program to run (editor, pager,
        credential process, exec plugin, compiler, shell), or turns a check
        off (trusted host, strict-ssl, sum database, safe.directory '*').
    HOSTEXEC-006: an extension, plugin or MCP-server installer of an editor,
        agent or tool.

Both `ask`: a company mirror or a chosen editor are honest, and a person
should see them. Keys that only set data (user.name, init.author, timeouts)
stay allowed.
"""

from __future__ import annotations

import re

from tether.guardian.rules import Inv, rule
from tether.guardian.rules_git import git_sub

_SOURCE = r"index|registry|proxy|channel|mirror|source|repo|repositor|url|uri|endpoint|server|host|goproxy|goprivate" \
          r"|gonoproxy|goflags|toolchain|find-links|cafile|ca_bundle|cert"
_PROGRAM = r"editor|pager|browser|shell|credential|exec|command|cmd|hook|helper|askpass|pinentry|program|plugin" \
           r"|script|node-options|init-module|toolexec|^cc$|^cxx$|^ld$|^ar$|^fc$|cflags|ldflags"
PUBLIC_SOURCES = re.compile(
    r"^(?:https?://(?:registry\.npmjs\.org|registry\.yarnpkg\.com|pypi\.org/simple|proxy\.golang\.org"
    r"|rubygems\.org|repo\.packagist\.org|index\.crates\.io|github\.com/rust-lang/crates\.io-index)/?"
    r"(?:,direct|,off)?|conda-forge|defaults|bioconda|pytorch|nvidia|direct)$", re.I)
"""Values that name the public default index of a tool (setting it back to the default is not a new source)."""
_TRUST = r"trusted|strict-ssl|insecure|verify|sumdb|nosumdb|nosumcheck|ignore-scripts|allow-scripts|safe\.directory"
RISKY_KEY = re.compile(rf"(?:{_SOURCE}|{_PROGRAM}|{_TRUST})", re.I)
"""Key names (or their last part) whose value is a place code comes from, a program to run, or a check."""

# program -> (words of the sub-command that writes config, how the key is given)
#   "kv":   KEY VALUE or KEY=VALUE positionals after the words;
#   "all":  any use of the words asks (edit opens an editor; sources -a adds an index);
#   "opts": the key is an option name (kubectl --exec-command, conda --add channels).
CONFIG_COMMANDS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "pip": ((("config", "set"), "kv"), (("config", "unset"), "kv"), (("config", "edit"), "all")),
    "npm": ((("config", "set"), "kv"), (("set",), "kv"), (("config", "edit"), "all")),
    "pnpm": ((("config", "set"), "kv"), (("set",), "kv")),
    "yarn": ((("config", "set"), "kv"),),
    "gem": ((("sources", "-a"), "all"), (("sources", "--add"), "all"), (("sources", "-c"), "none")),
    "conda": ((("config",), "opts"),),
    "go": ((("env", "-w"), "kv"), (("env", "-u"), "kv")),
    "gh": ((("config", "set"), "kv"), (("alias", "set"), "ghalias")),
    "aws": ((("configure", "set"), "kv"),),
    "gcloud": ((("config", "set"), "kv"),),
    "az": ((("config", "set"), "kv"),),
    "kubectl": ((("config", "set-credentials"), "opts"), (("config", "set"), "kv"),
                (("config", "set-cluster"), "opts")),
    "poetry": ((("source", "add"), "all"), (("config",), "kv"), (("self", "add"), "all")),
    "composer": ((("config",), "kv"),),
    "cargo": ((("config", "set"), "kv"),),
    "rustup": ((("toolchain", "link"), "all"), (("set", "auto-install"), "none")),
}
"""Config commands of tools that read their config every time they run (user or project scope)."""
for _alias, _main in (("pip3", "pip"), ("pip2", "pip"), ("mamba", "conda"), ("micromamba", "conda"),
                      ("kubecolor", "kubectl"), ("oc", "kubectl")):
    CONFIG_COMMANDS[_alias] = CONFIG_COMMANDS[_main]

PLUGIN_INSTALLERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "code": (("--install-extension",),), "code-insiders": (("--install-extension",),),
    "codium": (("--install-extension",),), "cursor": (("--install-extension",),),
    "windsurf": (("--install-extension",),),
    "codex": (("mcp", "add"),), "claude": (("mcp", "add"), ("mcp", "add-json"), ("plugin", "install")),
    "gemini": (("extensions", "install"), ("extensions", "link"), ("mcp", "add")),
    "opencode": (("mcp", "add"),), "amp": (("mcp", "add"),), "cursor-agent": (("mcp", "add"),),
    "gh": (("extension", "install"), ("extensions", "install"), ("ext", "install")),
    "vagrant": (("plugin", "install"),), "helm": (("plugin", "install"),),
    "kubectl": (("krew", "install"),), "asdf": (("plugin", "add"),), "mise": (("plugins", "install"),),
    "docker": (("plugin", "install"),), "jupyter": (("labextension", "install"), ("nbextension", "install")),
    "pipx": (("inject",),), "vim": (), "nvim": (),
}
"""Sub-commands that install code an editor, agent or tool runs later."""


def _after(args: list[str], words: tuple[str, ...]) -> list[str] | None:
    """The arguments after the first run of `words` among the invocation's words (options skipped), if any."""
    idx = [i for i, a in enumerate(args) if not a.startswith("-") or a in words]
    n = len(words)
    for k in range(len(idx) - n + 1):
        if any(i == 0 or not args[i - 1].startswith("-") for i in idx[:k]):
            break  # a word before: another sub-command (`npm pkg set` is not `npm set`); option values pass
        if tuple(args[i] for i in idx[k:k + n]) == words:
            return args[idx[k + n - 1] + 1:]
    return None


def _kv_pairs(rest: list[str]) -> list[tuple[str, str]]:
    pos = [a for a in rest if not a.startswith("-")]
    if not pos:
        return []
    if "=" in pos[0]:
        return [tuple(p.split("=", 1)) for p in pos if "=" in p]  # type: ignore[misc]
    return [(pos[0], pos[1] if len(pos) > 1 else "")]


def _opt_pairs(rest: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for i, a in enumerate(rest):
        if a.startswith("--"):
            name, _, value = a[2:].partition("=")
            nxt = rest[i + 1] if i + 1 < len(rest) else ""
            if name in ("add", "append", "prepend", "set") and nxt:
                pairs.append((nxt, rest[i + 2] if i + 2 < len(rest) else ""))
            else:
                pairs.append((name, value or nxt))
    return pairs


def _risky(key: str, value: str) -> bool:
    if not (RISKY_KEY.search(key.rsplit(".", 1)[-1]) or RISKY_KEY.search(key)):
        return False
    return not (value and all(PUBLIC_SOURCES.match(v.strip("'\"")) for v in value.split()))


_GIT_REDIRECT = re.compile(r"^(?:https?(?:\..+)?\.(?:proxy|sslverify|sslcainfo|sslcapath|sslbackend)|core\.gitproxy"
                           r"|url\..+\.(?:push)?insteadof|remote\..+\.(?:url|pushurl|proxy))$", re.I)
"""git keys that send its traffic elsewhere or turn TLS checks off (a proxy sees every credential git sends)."""


def _git_config_risk(inv: Inv) -> bool:
    """`git config --global --add safe.directory '*'` (every repository's config and hooks trusted), or a key that
    points git's traffic at another host (`http.proxy`, `url.X.insteadOf`) or turns TLS checks off."""
    sub, args = git_sub(inv)
    if sub != "config":
        return False
    if any(a.lower() == "safe.directory" for a in args) and any(a.strip("'\"") in ("*", "/") for a in args):
        return True
    pos = [a for a in args if not a.startswith("-")]
    if pos[:1] in (["set"], ["unset"]):
        pos = pos[1:]
    return len(pos) >= 2 and bool(_GIT_REDIRECT.match(pos[0]))


@rule("HOSTEXEC-005", "persistence", "ask", (*CONFIG_COMMANDS, "git"),
      "a tool's config command names a source of code (index, registry, proxy), a program it runs later (editor, "
      "credential process, exec plugin, compiler) or turns a check off",
      "npm config set registry https://mirror.example/")
def _tool_config(inv: Inv) -> bool:
    for words, how in CONFIG_COMMANDS.get(inv.prog, ()):
        rest = _after(inv.args, words)
        if rest is None:
            continue
        if how == "all":
            return True
        if how == "none":
            return False
        if how == "ghalias":
            return "--shell" in rest or "-s" in rest or any(a.startswith("!") for a in rest)
        pairs = _kv_pairs(rest) if how == "kv" else _opt_pairs(rest)
        return any(_risky(k, v) for k, v in pairs)
    return inv.prog == "git" and _git_config_risk(inv)


@rule("HOSTEXEC-006", "persistence", "ask", tuple(PLUGIN_INSTALLERS),
      "installs an extension, plugin or MCP server that an editor, agent or tool runs later",
      "code --install-extension ./ext.vsix")
def _plugin_install(inv: Inv) -> bool:
    args = inv.args
    if inv.prog in ("vim", "nvim"):
        return any(re.search(r"(?:Plug|Plugin|Lazy|Packer)(?:Install|Update|Sync)", a) for a in args)
    for words in PLUGIN_INSTALLERS.get(inv.prog, ()):
        if len(words) == 1 and words[0].startswith("--"):
            if any(a == words[0] or a.startswith(words[0] + "=") for a in args):
                return True
        elif _after(args, words) is not None:
            return True
    return False
