"""Argv rules: system configuration, container escape, persistence, system packages.

System package installs (PKG-003) are `ask` with the package manager as the
program, so the trust ledger can learn `package-install:apt` separately; the
language package managers are `guardian.rules_packages`.
"""

from __future__ import annotations

import posixpath
import re

from tether.guardian.rules import Inv, rule

_SENSITIVE_MOUNT = re.compile(r"^(?:/|/etc|/root|/home|/proc|/sys|/dev|/var/run/docker\.sock|"
                              r"/var/lib|/var/lib/(?:kubelet|containerd|lxd|incus)|/lib|/lib64|/bin|/sbin|"
                              r"/run/docker\.sock|/var/lib/docker|/boot|/usr|/var|/run|"
                              r"(?!/etc/(?:localtime|timezone)|/dev/(?:shm|null|urandom|random|zero|fuse|snd|dri|"
                              r"nvidia|kvm|net/tun)|/run/user/|/var/run/user/)"
                              r"(?:/etc|/root|/proc|/sys|/dev|/boot|/run|/var/run|/var/lib/(?:docker|kubelet|"
                              r"containerd))/[^:]*|"
                              r")(?:/?:|:|$)")
"""Host paths whose mount gives a container the host or its runtime (a home or its credential folders:
`host_escape`, CRED-002 ask)."""


@rule("SYS-002", "system-config", "deny", "sysctl", "changes kernel parameters",
      "sysctl -w kernel.randomize_va_space=0")
def _sysctl(inv: Inv) -> bool:
    return inv.has("w", "--write", "p", "--load", "--system") or any("=" in a for a in inv.positional)


@rule("SYS-003", "system-config", "deny",
      ("iptables", "ip6tables", "nft", "ufw", "firewall-cmd", "iptables-restore", "pfctl"),
      "changes firewall rules", "iptables -F")
def _firewall(inv: Inv) -> bool:
    listing = inv.has("L", "S", "--list", "--list-rules") or inv.positional[:2] in (
        ["list", "ruleset"], ["status"]) or inv.positional[:1] == ["status"]
    return bool(inv.args) and not listing


@rule("SYS-004", "system-config", "deny", ("mount", "umount", "swapon", "swapoff", "losetup"),
      "mounts or unmounts filesystems", "mount /dev/sdb1 /mnt")
def _mount(inv: Inv) -> bool:
    return bool(inv.positional) or inv.has("a", "--all", "o")


@rule("SYS-005", "system-config", "deny", ("modprobe", "insmod", "rmmod", "kextload"),
      "loads or unloads kernel modules", "insmod rootkit.ko")
def _modules(inv: Inv) -> bool:
    return bool(inv.positional) and not inv.has("n", "--dry-run")


@rule("SYS-006", "system-config", "ask", "chattr", "changes immutable/append-only attributes",
      "chattr +i /etc/resolv.conf")
def _chattr(inv: Inv) -> bool:
    return any(a[:1] in "+-=" and len(a) > 1 for a in inv.args)


@rule("SYS-007", "system-config", "ask",
      ("hostnamectl", "timedatectl", "localectl", "hostname", "date", "hwclock", "setenforce",
       "update-alternatives", "ldconfig", "nvram", "csrutil", "spctl", "scutil"),
      "changes machine identity, clock or security settings", "setenforce 0")
def _machine(inv: Inv) -> bool:
    pos = inv.positional
    if inv.prog == "date":
        return inv.has("s", "--set")
    if inv.prog == "hostname":
        return bool(pos) and not inv.has("I", "i", "f", "s", "d")
    if inv.prog in ("hostnamectl", "timedatectl", "localectl"):
        return bool(pos) and pos[0].startswith("set")
    if inv.prog == "hwclock":
        return inv.has("w", "--systohc", "--set")
    if inv.prog in ("csrutil", "spctl"):
        return bool(set(pos) & {"disable", "--master-disable"}) or inv.has("--master-disable")
    return bool(pos) or inv.prog == "ldconfig"


@rule("SYS-008", "system-config", "ask", "ulimit", "lowers a hard resource limit (the shell cannot raise it again)",
      "ulimit -H -n 64")
def _ulimit(inv: Inv) -> bool:
    # a soft limit (`ulimit -n 4096`) binds only this shell and its children, and can be set back
    return bool(inv.positional) and inv.has("H")


@rule("SYS-009", "system-config", "ask", ("ip", "ifconfig", "route", "nmcli", "tc", "brctl"),
      "changes network interfaces or routes", "ip link set eth0 down")
def _network(inv: Inv) -> bool:
    words = set(inv.positional)
    return bool(words & {"add", "del", "delete", "set", "flush", "down", "up", "change",
                         "replace", "mtu", "promisc", "modify", "connect", "disconnect"})


_LXC_RAW = ("raw.lxc", "raw.apparmor", "raw.seccomp")
"""LXD/Incus keys that hand a container raw LXC, AppArmor or seccomp configuration (any value escapes)."""
_TRUE = ("true", "1", "yes", "on")


def _lxc_escape(inv: Inv) -> bool:
    """`lxc config set C security.privileged true`, `raw.lxc ...`; `config device add C D disk source=/`."""
    pos, args = inv.positional, inv.args
    if pos[:2] in (["config", "set"], ["profile", "set"]) or pos[:1] in (["launch"], ["init"], ["create"]):
        words = pos[2:] + [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--config")]
        for i, w in enumerate(words):
            key, eq, val = w.lower().partition("=")
            val = val if eq else (words[i + 1].lower() if i + 1 < len(words) else "")
            if key.startswith(_LXC_RAW) or key == "security.privileged" and val in _TRUE:
                return True
    if pos[:3] in (["config", "device", "add"], ["profile", "device", "add"]) and "disk" in pos:
        return any(w.startswith(("source=", "src=")) and
                   _SENSITIVE_MOUNT.match(posixpath.normpath(w.split("=", 1)[1]) + ":") for w in pos)
    return False


@rule("CTR-001", "container-escape", "deny", ("docker", "podman", "nerdctl", "docker-compose", "podman-compose",
                                                "lxc", "incus"),
      "privileged container or host namespaces", "docker run --privileged -it alpine sh")
def _privileged(inv: Inv) -> bool:
    if inv.prog in ("lxc", "incus"):
        return _lxc_escape(inv)
    joined = " ".join(inv.args)
    return bool(re.search(r"--privileged(?!=false)|--allow[= ]\S*security\.insecure|"
                          r"--cap-add[= ](?:CAP_)?(?:ALL|SYS_ADMIN|SYS_PTRACE|SYS_MODULE|"
                          r"DAC_READ_SEARCH|NET_ADMIN|SYS_RAWIO|BPF|SYS_BOOT)\b|"
                          r"--(?:pid|ipc|uts|userns|cgroupns)[= ]host|"
                          r"--security-opt[= ](?:(?:apparmor|seccomp|label)[=:]unconfined|systempaths=unconfined)|"
                          r"--device[= ]/dev/(?:sd|nvme|mem|kmem|vd|xvd|hd|mmcblk|mapper|dm-|port|disk)|"
                          r"--device-cgroup-rule[= ]['\"]?(?:[ab]\s|c\s+\*)", joined,
                          re.I))


@rule("CTR-002", "container-escape", "deny", ("docker", "podman", "nerdctl"),
      "mounts a sensitive host path into a container", "docker run -v /:/host alpine")
def _mounts(inv: Inv) -> bool:
    args = inv.args
    volume_create = inv.positional[:2] == ["volume", "create"]
    for i, a in enumerate(args):
        value = None
        if a in ("-v", "--volume", "--mount") and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(("-v", "--volume=", "--mount=")) and len(a) > 2:
            value = a.split("=", 1)[1] if a.startswith("--") else a[2:]
        elif volume_create and a in ("-o", "--opt") and i + 1 < len(args) or a.startswith("--opt="):
            value = "volume-opt=" + (args[i + 1] if a in ("-o", "--opt") else a[6:])  # a local volume's device
        if value is None:
            continue
        src = re.search(r"volume-opt=device=([^,]+)", value) or re.search(r"(?:source|src)=([^,]+)", value)
        if value.startswith("volume-opt=") and src is None:
            continue
        path = src.group(1) if src else value.split(":", 1)[0]
        if path.startswith(("/", "~")):  # `/tmp/../`, `~/../../` name the host's root too
            home = inv.simple.env.get("HOME", "/root")
            path = posixpath.normpath(home + path[1:] if path.startswith("~") else path).replace("//", "/")
        if _SENSITIVE_MOUNT.match(path if path.endswith(":") else path + ":"):
            return True
    return False


@rule("CTR-003", "container-escape", "deny", ("nsenter", "unshare", "chroot", "pivot_root", "systemd-nspawn",
                                                "runc", "ctr", "capsh"),
      "enters or creates namespaces or a new root", "nsenter -t 1 -m -u -i -n sh")
def _namespaces(inv: Inv) -> bool:
    return bool(inv.args) and not inv.has("--help", "--version")


@rule("CTR-004", "container-escape", "deny", (),
      "talks to the container runtime socket (root on the host)",
      "curl --unix-socket /var/run/docker.sock http://localhost/containers/json")
def _docker_sock(inv: Inv) -> bool:
    return any(_RUNTIME_SOCK.search(a) for a in inv.args) \
        and inv.prog not in ("ls", "stat", "test", "[")


@rule("CTR-005", "container-escape", "deny", (),
      "cgroup release_agent, core_pattern or kernel hooks used to escape containers",
      "echo /x > /sys/fs/cgroup/rdma/release_agent")
def _escape_hooks(inv: Inv) -> bool:
    targets = list(inv.args) + [r.target for r in inv.simple.redirects if r.writes]
    return any(_ESCAPE_HOOK.search(t) for t in targets)


_RUNTIME_SOCK = re.compile(r"/(?:docker|containerd|podman|crio)\.sock\b")
_ESCAPE_HOOK = re.compile(r"release_agent|notify_on_release|/proc/sys/kernel/(?:core_pattern|"
                          r"modprobe)|/sys/kernel/uevent_helper|cgroup\b.*\bmount|-t cgroup")
"""Compiled at import, not per call: rules for every invocation, and the start-up cache keeps import-time patterns."""


@rule("PERSIST-004", "persistence", "ask", ("crontab", "at", "batch", "launchctl", "schtasks"),
      "installs scheduled jobs", "crontab -e")
def _cron(inv: Inv) -> bool:
    if inv.prog == "crontab":
        return not inv.has("l")
    if inv.prog == "launchctl":
        return bool(set(inv.positional[:1]) & {"load", "bootstrap", "submit", "enable"})
    return inv.prog != "at" or not inv.has("l")


@rule("PERSIST-005", "persistence", "deny", "systemctl", "enables a service to start at boot",
      "systemctl enable backdoor.service")
def _enable(inv: Inv) -> bool:
    return inv.positional[:1] in (["enable"], ["link"], ["preset"]) or \
        inv.positional[:1] == ["edit"]


@rule("PKG-003", "package-install", "ask",
      ("apt", "apt-get", "aptitude", "yum", "dnf", "apk", "pacman", "zypper", "brew", "port",
       "snap", "flatpak", "dpkg", "rpm", "emerge", "nix-env", "choco", "winget"),
      "installs, removes or upgrades system packages", "apt-get install -y nmap")
def _system_pkg(inv: Inv) -> bool:
    if inv.prog in ("dpkg", "rpm"):
        return inv.has("i", "r", "P", "U", "e", "--install", "--remove", "--purge", "--erase")
    if inv.prog == "pacman":
        return inv.has("S", "R", "U")
    verbs = {"install", "remove", "purge", "upgrade", "dist-upgrade", "full-upgrade", "add", "del",
             "erase", "reinstall", "autoremove", "uninstall", "update", "refresh", "-i", "-e"}
    valued = {"-o", "--option", "-c", "--config-file", "-t", "--target-release", "--setopt",
              "-R", "--root", "--installroot", "-X", "--repository"}
    pos = [a for i, a in enumerate(inv.args) if not a.startswith("-")
           and not (i and inv.args[i - 1] in valued)]
    return bool(set(pos[:1]) & verbs) or inv.has("i", "e") and inv.prog == "nix-env"
