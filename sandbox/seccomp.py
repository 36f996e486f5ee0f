"""The seccomp profile every sandbox container runs under: sandbox/seccomp.json.

The engine's own default profile cannot be read through its API, so Tether
ships its own, an allowlist (docs/sandbox.md lists what and why):

- syscalls an ordinary workload needs (files, memory, processes, signals,
  sockets, IPC, time reading) are allowed; `clone` only without namespace
  flags, `socket` but not AF_VSOCK, `personality` only for its harmless
  values;
- named groups are refused with EPERM: io_uring, bpf/perf/userfaultfd, the
  kernel keyring, mounts, namespaces, kernel modules and kexec, host
  administration, open_by_handle_at, I/O ports;
- ptrace, process_vm_readv/writev, kcmp, pidfd_getfd, process_madvise and
  personality(ADDR_NO_RANDOMIZE) are refused unless `sandbox.allow_ptrace`
  (a debugging task) turns their rules (tagged `"tether": "ptrace"`) into
  allows;
- anything else, including syscalls newer than this list, fails with ENOSYS
  so that libc falls back to an older call (clone3 -> clone).
Only the native architecture is listed: a 32-bit or x32 syscall kills the thread.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from tether.sandbox.errors import SandboxError

PROFILE = Path(__file__).with_name("seccomp.json")


@cache
def _profile() -> dict[str, Any]:
    try:
        data = json.loads(PROFILE.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("syscalls"), list):
            msg = "no syscalls list"
            raise ValueError(msg)
    except (OSError, ValueError) as e:
        msg = f"seccomp profile {PROFILE} is unreadable ({e}); reinstall Tether"
        raise SandboxError(msg) from e
    return data


def profile(*, allow_ptrace: bool = False) -> dict[str, Any]:
    """The profile as the engine takes it; ptrace rules allowed only with `allow_ptrace`."""
    data = _profile()
    rules = []
    for original in data["syscalls"]:
        rule = {k: v for k, v in original.items() if k != "tether"}
        if allow_ptrace and original.get("tether") == "ptrace":
            rule["action"] = "SCMP_ACT_ALLOW"
            rule.pop("errnoRet", None)
        rules.append(rule)
    return {**data, "syscalls": rules}


def security_opt(*, allow_ptrace: bool = False) -> str:
    """`seccomp=<json>` for the container's security options."""
    return "seccomp=" + json.dumps(profile(allow_ptrace=allow_ptrace), separators=(",", ":"))
