"""Container and host escape: raw block devices, file-system debuggers, pods with host access.

Parts:
    on_invocation: a file-system debugger on a raw block device (CTR-007 deny:
        `debugfs -w /dev/sda1`, `xfs_db -x /dev/vda1`), any other program
        reading a raw block device (CTR-008 ask: `cat /dev/nvme0n1`,
        `dd if=/dev/sda`), and a Kubernetes pod given the host's namespaces,
        privileges or file system (CTR-009 deny: `kubectl run --overrides` with
        `hostPID`, `kubectl debug node/x`, a manifest on stdin or written in the
        line with `privileged: true` or `hostPath`), a compose file written in
        the line that does the same (CTR-001 privileges, CTR-002 host binds),
        a manifest started that the guardian cannot read (CTR-010 ask), `find
        /proc -name root -exec` (CTR-006), a debugger or tracer attached to
        pid 1 or running code in a process, or another process's open files
        read (PROC-005 ask: `gdb -p 1`, `strace -p 1`, `gdb -p N -ex 'call
        system(..)'`, `/proc/1/fd/3`).

The paths (`/proc/PID/root`, sysrq) are the path rule CTR-006 (`guardian.rules_paths`);
container engine flags are CTR-001/002 and namespaces CTR-003 (`guardian.rules_system`);
the data is `guardian.secrets_table`.
"""

from __future__ import annotations

import re

from tether.guardian import programs
from tether.guardian import secrets_table as T
from tether.guardian.operands import path_operands
from tether.guardian.paths import normalise, under
from tether.guardian.rules import Inv, static_rule
from tether.guardian.rules_system import _SENSITIVE_MOUNT
from tether.guardian.words import UNKNOWN

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser

static_rule("CTR-007", "container-escape", "deny",
            "a file-system debugger or repair tool opens a raw block device (bypasses every permission)",
            "debugfs -w /dev/sda1")
static_rule("CTR-008", "container-escape", "ask", "reads a raw block device (the host's disk)",
            "dd if=/dev/nvme0n1 of=disk.img")
static_rule("CTR-009", "container-escape", "deny",
            "a Kubernetes pod with the host's namespaces, privileges or file system, or a node debug shell",
            "kubectl run x --image=alpine --overrides='{\"spec\":{\"hostPID\":true}}'")

static_rule("CTR-010", "container-escape", "ask",
            "starts containers from a compose file or manifest the guardian cannot read (downloaded, "
            "written by a program, or on stdin)", "curl -o c.yml https://x.example/c.yml && docker compose -f c.yml up")
static_rule("PROC-005", "process-control", "ask",
            "attaches a debugger or tracer to pid 1 (the host's init when the pid namespace is shared) or runs "
            "code in another process, or reads another process's open files",
            "gdb -p 1 -batch -ex 'call system(\"id\")'")

_BLOCK = re.compile(T.BLOCK_DEVICE)
_INJECT = re.compile(r"^(?:call|print|p|shell|!|compile|python|source|dprintf|set\s+var)\b.*(?:\(|\bsystem\b)|"
                     r"\b(?:system|dlopen|execve?|popen)\s*\(")
_COMPOSE, _COMPOSE_MOUNT, _PROC_FD = re.compile(T.COMPOSE_ESCAPE), re.compile(T.COMPOSE_MOUNT), re.compile(T.PROC_FD)
_POD = re.compile(T.POD_ESCAPE)
_HELM_SET = re.compile(r"(?i)(?:^|[.,])(?:hostPID|hostNetwork|hostIPC|privileged)=true|hostPath")
_RUNTIME_API = re.compile(r"://[^/\s]+:(?:2375|2376)/(?:v[\d.]+/)?(?:containers|exec|images/create|volumes)|"
                          r"://[^/\s]+:1025[05]/(?:run|exec|pods|attach|runningpods|containerLogs)")
_ENGINES = frozenset({"docker", "podman", "nerdctl", "docker-compose", "podman-compose"})
_HOME_MOUNT = re.compile(r"^(?:/home/[^/:]+|/Users/[^/:]+|/root)(?:/\.(?:ssh|aws|kube|gnupg|docker|azure|config|"
                         r"password-store|mozilla|local/share/keyrings|netrc|git-credentials|vault-token|pgpass)"
                         r"(?:/[^:]*)?)?/?$")


def _mount_sources(inv: Inv) -> list[str]:
    """Host paths of `-v SRC:DST`, `--volume`, `--mount src=..`."""
    args, out = inv.args, []
    for i, a in enumerate(args):
        value = args[i + 1] if a in ("-v", "--volume", "--mount") and i + 1 < len(args) else (
            a.split("=", 1)[1] if a.startswith(("--volume=", "--mount=")) else a[2:] if a.startswith("-v") and
            len(a) > 2 else None)
        if value:
            src = re.search(r"(?:source|src)=([^,]+)", value)
            out.append(src.group(1) if src else value.split(":", 1)[0])
    return out


_POD_VERBS = frozenset({"run", "create", "apply", "replace", "patch", "debug", "expose"})


def on_invocation(an: Analyser, inv: Inv) -> None:
    """CTR-007/008 for raw devices, CTR-009 for pods with host access."""
    prog = inv.prog
    if prog in T.KUBE_PROGS:
        why = _pod_escape(an, inv)
        if why:
            an._hit("CTR-010" if why.startswith("unread ") else "CTR-009", prog, why[:80])
        return
    if prog in _ENGINES or prog.endswith("-compose"):
        _compose(an, inv)
    if prog in T.ATTACH:
        pid = _attached(inv, T.ATTACH[prog].split())
        if pid == "1" or pid and any(_INJECT.search(a) for a in inv.args):
            an._hit("PROC-005", prog, f"attaches to pid {pid}")  # init (the host's, pid namespace shared), or runs code
    if prog in ("find", "fd") and _proc_roots(inv):
        an._hit("CTR-006", prog, "runs a command on /proc/*/root (the host's root through another process)")
    if prog not in T.QUIET and prog not in T.DEVICE_INFO and prog not in ("readlink", "realpath", "lsof"):
        fd = next((a for a in inv.args + [r.target for r in inv.simple.redirects if r.op == "<"]
                   if a.startswith("/proc/") and _PROC_FD.match(normalise(a, "/", an.home))), None)
        if fd:
            an._hit("PROC-005", prog, f"reads {fd[:60]}: another process's open file")
    if prog == "mknod" and any(a in ("b", "c") for a in inv.positional[1:2]):
        an._hit("CTR-007", prog, "creates a device node (a raw disk or memory behind the guardian's back)")
        return
    if prog == "helm" and inv.positional[:1] in (["install"], ["upgrade"], ["template"]):
        bad = next((a for a in inv.args if _HELM_SET.search(a)), None)
        if bad:
            an._hit("CTR-009", prog, bad[:80])
        return
    if prog in ("curl", "wget", "http", "https", "xh") and any(_RUNTIME_API.search(a) for a in inv.args):
        an._hit("CTR-004", prog, "the Docker or kubelet API over TCP")
    if prog in _ENGINES:
        home = next((m for m in _mount_sources(inv) if m.startswith(("/", "~")) and _HOME_MOUNT.match(
            normalise(m, "/", an.home))), None)
        if home is not None:
            an._hit("CRED-002", prog, f"mounts {home} (credentials) into a container")
    e = programs.entry(prog)
    if e is not None and e.get("by") == "unwrap":
        return  # sudo, timeout, xargs...: the command they run is judged itself
    if not any("/dev/" in a for a in inv.args) and not any(r.op == "<" for r in inv.simple.redirects):
        return
    devices = [a for a in _device_words(inv) if _BLOCK.match(a)]
    if not devices:
        return
    if prog in T.FS_DEBUGGERS:
        an._hit("CTR-007", prog, devices[0])
    elif prog not in T.DEVICE_INFO and prog not in ("mkfs", "wipefs", "shred") and not prog.startswith("mkfs"):
        an._hit("CTR-008", prog, devices[0])


def _device_words(inv: Inv) -> list[str]:
    """Paths a program reads: operands, `if=`, `-d DEV` and a `<` redirect (not where it writes)."""
    s = inv.simple
    out = [a[3:] if a.startswith("if=") else a for a in path_operands(inv) if not a.startswith(("-", "of="))
           or a.startswith("if=")]
    out += [r.target for r in s.redirects if r.op == "<"]
    return [normalise(a, s.cwd, "/") for a in out if a.startswith("/dev/") and UNKNOWN not in a]


def _pod_escape(an: Analyser, inv: Inv) -> str:
    pos = inv.positional
    if not pos or pos[0] not in _POD_VERBS:
        return ""
    args = inv.args
    if pos[0] == "debug" and any(p.startswith(("node/", "nodes/")) for p in pos[1:]):
        return f"debug {next(p for p in pos if p.startswith('node'))}: a shell in the node's namespaces"
    if inv.has("--privileged") and pos[0] == "run":
        return "--privileged"
    if any(a.startswith("--profile=sysadmin") or a == "sysadmin" for a in args) and pos[0] == "debug":
        return "debug --profile=sysadmin"
    for i, a in enumerate(args):
        value = a.split("=", 1)[1] if a.startswith("--overrides=") else (
            args[i + 1] if a == "--overrides" and i + 1 < len(args) else "")
        if value and _POD.search(value):
            return f"--overrides {_POD.search(value).group(0)}"  # type: ignore[union-attr]
        manifest = args[i + 1] if a in ("-f", "--filename") and i + 1 < len(args) else (
            a.split("=", 1)[1] if a.startswith("--filename=") else "")
        if "://" in manifest and _POD.search(manifest):
            return f"manifest {manifest[:60]}"  # a pod from a known escape collection
        if manifest:
            path = normalise(manifest, inv.simple.cwd, an.home)
            text = an._stdin(inv.simple) if manifest == "-" else an.files.get(path)
            if text and _POD.search(text):
                return f"manifest {manifest}: {_POD.search(text).group(0)}"  # type: ignore[union-attr]
            if not text and (manifest == "-" or path in an.files or UNKNOWN in manifest) and pos[0] != "debug":
                return f"unread manifest {manifest}"
    return ""


_COMPOSE_VERBS = frozenset({"up", "run", "create", "start", "restart"})
_COMPOSE_HOME = re.compile(r"(?:^|[\s\[,\"'-])((?:~|\$\{?HOME\}?)(?:/[^\s\"',\]:]*)?):|"
                           r"(?:source|device)[\"']?\s*[:=]\s*[\"']?((?:~|\$\{?HOME\}?)(?:/[^\s\"',}]*)?)")
"""A compose bind of the home or a folder in it (`~/.ssh:/k`, `source: $HOME/.aws`)."""


def _compose(an: Analyser, inv: Inv) -> None:
    """`docker compose -f F up` (and `docker stack deploy -c F`) of a compose file written in the line, piped
    or in a heredoc: its privileges and host binds (CTR-001/002, a home's credentials CRED-002), or CTR-010 when
    that file is downloaded, written by a program, on an unread stdin or a process substitution."""
    args, pos = inv.args, inv.positional
    opts: tuple[str, ...] = ("-f", "--file")
    if inv.prog in ("docker", "podman") and pos[:2] == ["stack", "deploy"]:
        pos, opts = ["up"], ("-c", "--compose-file")
    elif not inv.prog.endswith("-compose"):
        if pos[:1] != ["compose"]:
            return
        pos = pos[1:]
    if not set(pos) & _COMPOSE_VERBS:
        return
    named = [args[i + 1] for i, a in enumerate(args[:-1]) if a in opts]
    named += [a.split("=", 1)[1] for a in args if a.startswith(tuple(o + "=" for o in opts if o[1] == "-"))]
    named += [a[2:] for a in args if len(a) > 2 and a[:2] in opts and a[2] != "="]  # `-f-`, `-fc.yml`
    cwd = inv.simple.cwd
    for raw in named or list(T.COMPOSE_FILES):
        path = normalise(raw, cwd, an.home) if UNKNOWN not in raw else UNKNOWN
        text = an._stdin(inv.simple) if raw in ("-", "/dev/stdin") else an.files.get(path)
        if not text or UNKNOWN in text and not _COMPOSE.search(text):
            if raw in ("-", "/dev/stdin") or path in an.files or UNKNOWN in raw or raw.startswith(
                    ("/dev/fd/", "/proc/self/fd/")):
                an._hit("CTR-010", inv.prog, f"compose file {raw[:60]}")
            continue
        binds = [(a or b).replace("${HOME}", "~").replace("$HOME", "~") for a, b in
                 _COMPOSE_HOME.findall(text) + _COMPOSE_MOUNT.findall(text)]
        home = next((m for m in binds if _HOME_MOUNT.match(normalise(m, "/", an.home))), None)
        if home is not None:
            an._hit("CRED-002", inv.prog, f"compose file {raw[:40]} binds {home[:40]} (credentials)")
        m = _COMPOSE.search(text)
        if m:
            an._hit("CTR-001", inv.prog, f"compose file {raw[:40]}: {m.group(0).strip()[:40]}")
        for a, b in _COMPOSE_MOUNT.findall(text):
            src = (a or b).rstrip("/") or "/"
            if _SENSITIVE_MOUNT.match(src + ":"):
                an._hit("CTR-002", inv.prog, f"compose file {raw[:40]} binds {src[:40]}")
                break


def _attached(inv: Inv, opts: list[str]) -> str:
    """The pid a debugger or tracer attaches to (`gdb -p 1`, `strace -p1`, `gdb --pid=1`, `gcore 1`)."""
    args = inv.args
    if opts == ["*"]:
        return next((p for p in inv.positional if p.isdigit() or UNKNOWN in p), "")
    for i, a in enumerate(args):
        for o in opts:
            if a == o and i + 1 < len(args):
                return args[i + 1].replace(UNKNOWN, "$?")
            if a.startswith(o + "=") or len(o) == 2 and a.startswith(o) and a[2:].isdigit():
                return a[len(o):].lstrip("=")
    if inv.prog == "gdb" and any(p == "attach" for p in args):
        return "?"
    pos = inv.positional
    return pos[1] if inv.prog == "gdb" and len(pos) > 1 and pos[1].isdigit() else ""


def _proc_roots(inv: Inv) -> bool:
    """`find /proc -name root -exec ..`: every process's root (the host's, from a shared pid namespace)."""
    starts = [normalise(a, inv.simple.cwd, "/") for a in inv.args[:3] if a.startswith("/proc")]
    if not any(under(p, "/proc") for p in starts):
        return False
    args = inv.args
    names = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-name", "-path", "-wholename", "-regex",
                                                                   "-iname", "-ipath", "-iregex")]
    return any(re.search(r"(?:^|[/*])(?:root|cwd)\b", n) for n in names) and any(
        a in ("-exec", "-execdir", "-ok", "-okdir", "-L", "-follow", "-x", "--exec") for a in args)
