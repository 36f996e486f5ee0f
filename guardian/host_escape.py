"""Container and host escape: raw block devices, file-system debuggers, pods with host access.

Parts:
    on_invocation: a file-system debugger on a raw block device (CTR-007 deny:
        `debugfs -w /dev/sda1`, `xfs_db -x /dev/vda1`), any other program
        reading a raw block device (CTR-008 ask: `cat /dev/nvme0n1`,
        `dd if=/dev/sda`), and a Kubernetes pod given the host's namespaces,
        privileges or file system (CTR-009 deny: `kubectl run --overrides` with
        `hostPID`, `kubectl debug node/x`, a manifest on stdin or written in the
        line with `privileged: true` or `hostPath`).

The paths (`/proc/PID/root`, sysrq) are the path rule CTR-006 (`guardian.rules_paths`);
container engine flags are CTR-001/002 and namespaces CTR-003 (`guardian.rules_system`);
the data is `guardian.secrets_table`.
"""

from __future__ import annotations

import re

from tether.guardian import programs
from tether.guardian import secrets_table as T
from tether.guardian.operands import path_operands
from tether.guardian.paths import normalise
from tether.guardian.rules import Inv, static_rule
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

_BLOCK = re.compile(T.BLOCK_DEVICE)
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
            an._hit("CTR-009", prog, why[:80])
        return
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
            text = an._stdin(inv.simple) if manifest == "-" else an.files.get(
                normalise(manifest, inv.simple.cwd, an.home))
            if text and _POD.search(text):
                return f"manifest {manifest}: {_POD.search(text).group(0)}"  # type: ignore[union-attr]
    return ""
