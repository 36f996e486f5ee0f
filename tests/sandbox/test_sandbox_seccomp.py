"""Tether's seccomp allowlist on the real engine: what it refuses, what still runs."""

from __future__ import annotations

import json

import pytest

from tether.sandbox.seccomp import profile, security_opt

# python3 in the Debian image; syscall numbers of x86_64 and aarch64 picked at run time.
PY = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
arm = os.uname().machine == "aarch64"
NR = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
      "keyctl": 219 if arm else 250, "add_key": 217 if arm else 248, "bpf": 280 if arm else 321,
      "userfaultfd": 282 if arm else 323, "perf_event_open": 241 if arm else 298,
      "setns": 268 if arm else 308, "clone": 220 if arm else 56}
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(NR[name], *[ctypes.c_long(a) for a in args])
    return r, ctypes.get_errno()
"""


def _py(sb, body: str) -> dict:
    result = sb.exec(f"python3 - <<'EOF'\n{PY}\n{body}\nEOF")
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


@pytest.mark.docker
def test_io_uring_bpf_keyrings_and_friends_are_refused(debian_image, make_sandbox, tmp_path):
    sb = make_sandbox(tmp_path, image=debian_image)
    out = _py(sb, """
import json
res = {n: call(n, 0, 0, 0, 0, 0) for n in ("io_uring_setup", "io_uring_enter", "io_uring_register",
       "keyctl", "add_key", "bpf", "userfaultfd", "perf_event_open", "setns")}
res["mount"] = (libc.mount(b"none", b"/tmp", b"tmpfs", 0, None), ctypes.get_errno())
res["unshare_user"] = (libc.unshare(0x10000000), ctypes.get_errno())
r, e = call("clone", 0x10000000 | 17, 0, 0, 0, 0)  # CLONE_NEWUSER | SIGCHLD
if r == 0:
    os._exit(0)
res["clone_newuser"] = (r, e)
print(json.dumps(res))
""")
    for name, (ret, errno) in out.items():
        assert ret == -1 and errno == 1, (name, ret, errno)  # EPERM


@pytest.mark.docker
def test_ptrace_of_pid_1_and_a_sibling_is_refused(debian_image, make_sandbox, tmp_path):
    sb = make_sandbox(tmp_path, image=debian_image)
    out = _py(
        sb,
        """
import json, subprocess
child = subprocess.Popen(["sleep", "30"])
res = {}
for target in (1, child.pid):
    res[f"attach {target}"] = (libc.ptrace(16, target, 0, 0), ctypes.get_errno())  # PTRACE_ATTACH
    res[f"seize {target}"] = (libc.ptrace(0x4206, target, 0, 0), ctypes.get_errno())  # PTRACE_SEIZE
buf = ctypes.create_string_buffer(8)
class IOV(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
iov = IOV(ctypes.cast(buf, ctypes.c_void_p), 8)
got = libc.process_vm_readv(child.pid, ctypes.byref(iov), 1, ctypes.byref(iov), 1, 0)
res["process_vm_readv"] = (got, ctypes.get_errno())
child.kill()
print(json.dumps(res))
""",
    )
    for name, (ret, errno) in out.items():
        assert ret == -1 and errno == 1, (name, ret, errno)
    refused = sb.exec("setarch -R true")  # personality(ADDR_NO_RANDOMIZE) would turn ASLR off
    assert refused.exit_code != 0 and "not permitted" in refused.output


@pytest.mark.docker
def test_allow_ptrace_lets_a_debugger_attach_but_never_to_tethers_probe(
    debian_image, make_sandbox, tmp_path, docker_client
):
    sb = make_sandbox(tmp_path, image=debian_image, allow_ptrace=True)
    container = docker_client.containers.get(sb.container_id)
    container.exec_run(["sleep", "60"], user="65534:65534", detach=True)  # stands in for a probe: its uid
    out = _py(sb, """
import json, subprocess, time
child = subprocess.Popen(["sleep", "30"])
time.sleep(0.2)
probe = next(int(p) for p in os.listdir("/proc") if p.isdigit() and os.stat(f"/proc/{p}").st_uid == 65534)
res = {"sibling": (libc.ptrace(16, child.pid, 0, 0), ctypes.get_errno()),
       "probe": (libc.ptrace(16, probe, 0, 0), ctypes.get_errno())}
child.kill()
print(json.dumps(res))
""")
    assert out["sibling"] == [0, 0]
    assert out["probe"][0] == -1 and out["probe"][1] == 1
    assert sb.exec("setarch -R true").exit_code == 0
    assert sb.processes() is not None


@pytest.mark.docker
def test_ordinary_work_still_runs(debian_image, make_sandbox, tmp_path):
    sb = make_sandbox(tmp_path, image=debian_image)
    result = sb.exec(
        "set -e; python3 -c 'import threading, subprocess, multiprocessing as m; "
        "t = threading.Thread(target=print, args=(\"thread\",)); t.start(); t.join(); "
        "print(subprocess.run([\"echo\", \"sub\"], capture_output=True, text=True).stdout.strip()); "
        "print(m.Pool(2).map(abs, [-1, -2]))'; "
        "git init -q r && cd r && echo x > f && git add f && git -c user.email=a@b -c user.name=n commit -qm m; "
        "git log --oneline | wc -l; (sleep 0.1 &) ; wait; echo done | tr a-z A-Z; timeout 1 sleep 5 || echo timed-out"
    )
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["thread", "sub", "[1,", "2]", "1", "DONE", "timed-out"]


@pytest.mark.docker
def test_the_tiny_image_still_runs_under_the_profile(make_sandbox, tmp_path):
    sb = make_sandbox(tmp_path)
    result = sb.exec("echo a | sed s/a/b/; ls / >/dev/null; sleep 0.1 & wait; timeout 1 sleep 5 2>/dev/null; echo $?")
    assert result.exit_code == 0
    words = result.output.split()  # bash's "Terminated" (stderr) may come before or after
    assert words[0] == "b" and ("124" in words or "143" in words), result.output


def test_profile_is_an_allowlist_with_ptrace_only_on_request():
    off, on = profile(), profile(allow_ptrace=True)
    assert off["defaultAction"] == "SCMP_ACT_ERRNO"
    allowed = {n for r in off["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" for n in r["names"]}
    for name in ("io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace", "process_vm_readv",
                 "process_vm_writev", "bpf", "keyctl", "add_key", "request_key", "mount", "umount2", "unshare",
                 "setns", "pivot_root", "kexec_load", "init_module", "finit_module", "delete_module", "reboot",
                 "swapon", "swapoff", "acct", "open_by_handle_at", "perf_event_open", "userfaultfd", "clone3"):
        assert name not in allowed, name
    allowed_on = {n for r in on["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" for n in r["names"]}
    assert allowed_on - allowed == {"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
                                    "process_madvise"}

    def no_aslr(p: dict) -> str:
        return next(r["action"] for r in p["syscalls"]
                    if r["names"] == ["personality"] and r["args"][0]["value"] == 0x40000)

    assert (no_aslr(off), no_aslr(on)) == ("SCMP_ACT_ERRNO", "SCMP_ACT_ALLOW")
    assert "io_uring_setup" not in allowed_on
    assert all("tether" not in r for r in off["syscalls"] + on["syscalls"])  # our tags never reach the engine
    assert security_opt().startswith("seccomp={")
