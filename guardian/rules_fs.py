"""Argv rules: devices and disks, privilege, processes, resources, packages, logs.

Each function is one rule, registered by the `rule` decorator with its id,
category, decision, the programs it looks at, a reason and an example.
"""

from __future__ import annotations

import posixpath
import re

from tether.guardian.file_operands import REMOTE, image_operands, rsync_operands
from tether.guardian.rules import Inv, rule, static_rule
from tether.guardian.words import UNKNOWN

_BLOCK = re.compile(r"^/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|mapper/|loop)")

static_rule("GUARD-FAIL", "guardian-failure", "deny",
            "the guardian could not analyse the command (fails closed)", "echo 'unterminated")
static_rule("GUARD-002", "guardian-failure", "ask",
            "valid bash (bash -n accepts it) with a construct the guardian cannot analyse; "
            "the parts it can read are judged", "case x in a) ls ;& b) ;; esac")




@rule("FS-005", "filesystem-destruction", "ask", "rsync",
      "rsync that deletes files at the destination (not a mirror into scratch space, /tmp/x)",
      "rsync -a --delete src/ dst/")
def _rsync_delete(inv: Inv) -> bool:
    # --remove-source-files deletes its inputs: those are deletes under the path policy (guardian/archive_targets.py)
    if not any(a.startswith("--delete") for a in inv.long) or "--dry-run" in inv.long or "n" in inv.short:
        return False
    ops = rsync_operands(inv)[0]
    cwd = inv.simple.cwd or ""
    if len(ops) < 2 or REMOTE.match(ops[-1]) or UNKNOWN in ops[-1] or UNKNOWN in cwd or not cwd.startswith("/"):
        return True
    dest = posixpath.normpath(ops[-1] if ops[-1].startswith("/") else cwd.rstrip("/") + "/" + ops[-1])
    return not dest.startswith(("/tmp/", "/var/tmp/"))  # a scratch mirror; /tmp itself is not one


@rule("DISK-001", "device-write", "deny", "dd", "dd writing to a block device",
      "dd if=/dev/zero of=/dev/sda bs=1M")
def _dd_device(inv: Inv) -> bool:
    return any(a.startswith("of=") and _BLOCK.match(a[3:]) for a in inv.args)


@rule("DISK-002", "device-write", "deny",
      ("mkfs", "mke2fs", "mkswap", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat",
       "mkfs.fat", "mkfs.msdos", "mkdosfs", "mkfs.ntfs", "mkfs.exfat", "mkfs.f2fs", "newfs", "mkntfs", "mformat"),
      "creating a filesystem destroys a device (on a regular image file it is a write, judged by the path policy)",
      "mkfs.ext4 /dev/sdb1")
def _mkfs(inv: Inv) -> bool:
    if not inv.args or inv.has("--help", "V", "--version"):
        return False
    return not image_operands(inv)




@rule("DISK-003", "device-write", "deny",
      ("wipefs", "fdisk", "sfdisk", "gdisk", "sgdisk", "parted", "cfdisk", "blkdiscard", "hdparm",
       "cryptsetup", "pvcreate", "vgremove", "lvremove", "zpool", "diskutil", "dmsetup"),
      "partition table, LVM or device erase tools", "wipefs -a /dev/sda")
def _partition(inv: Inv) -> bool:
    if inv.prog in ("fdisk", "sfdisk", "parted", "gdisk") and inv.has("l", "--list"):
        return False
    if inv.prog == "hdparm":
        return any("security-erase" in a or "trim-sector" in a for a in inv.args)
    if inv.prog == "dmsetup":
        return bool(set(inv.positional[:1]) & {"remove", "remove_all", "wipe_table", "clear", "load", "reload",
                                               "create", "suspend", "message", "rename", "udevcomplete_all"})
    if inv.prog in ("zpool", "diskutil"):
        return bool(set(inv.positional[:1]) & {"destroy", "labelclear", "eraseDisk", "zeroDisk",
                                               "eraseVolume", "partitionDisk", "create"})
    return bool(inv.positional) and not inv.has("--help")


VOLUME_WIPES: dict[str, tuple[str, ...]] = {
    # DATA: volume managers, storage arrays and drive firmware commands that destroy a dataset, a
    # subvolume, a RAID member's metadata or a whole drive. Words are the subcommand (btrfs takes
    # prefixes: `sub del`), `--opt` an option, `*` any operand.
    "zfs": ("destroy",), "btrfs": ("subvolume delete", "device delete", "device remove"),
    "nvme": ("format", "sanitize", "delete-ns", "write-zeroes"), "mdadm": ("--zero-superblock", "--create", "-C"),
    "pvremove": ("*",), "lvreduce": ("*",), "sg_format": ("*",), "sg_sanitize": ("*",),
    "stratis": ("pool destroy", "filesystem destroy", "fs destroy"), "vdo": ("remove",),
    "bcache": ("unregister",), "ceph-volume": ("lvm zap",), "badblocks": ("-w",),
}


def _word_match(given: list[str], want: list[str]) -> bool:
    return len(given) >= len(want) and all(g == w or (len(g) >= 3 and w.startswith(g))
                                           for g, w in zip(given, want, strict=False))


@rule("DISK-006", "device-write", "deny", tuple(VOLUME_WIPES),
      "destroys a ZFS dataset, btrfs subvolume, RAID member, LVM volume or whole NVMe/SCSI drive",
      "zfs destroy -r tank")
def _volume_wipe(inv: Inv) -> bool:
    if inv.has("--help", "h") or not inv.args:
        return False
    for spec in VOLUME_WIPES[inv.prog]:
        if spec == "*" and inv.positional:
            return True
        if spec.startswith("-") and (spec in inv.args or len(spec) == 2 and inv.has(spec[1])):
            return True
        if not spec.startswith("-") and spec != "*" and _word_match(inv.positional, spec.split()):
            return True
    return False


@rule("DISK-005", "device-write", "deny", ("shred", "wipe", "srm"),
      "overwriting a block device", "shred -n 3 /dev/nvme0n1")
def _shred_device(inv: Inv) -> bool:
    return any(_BLOCK.match(p) for p in inv.positional)


@rule("PRIV-001", "privilege-escalation", "ask", ("sudo", "doas", "pkexec", "run0"),
      "runs a command as another user (root)", "sudo apt-get update")
def _sudo(inv: Inv) -> bool:
    return not inv.has("--help", "V", "--version", "h")


@rule("PRIV-002", "privilege-escalation", "ask", ("su", "sudoedit", "newgrp", "sg"),
      "switches user or group", "su - root")
def _su(inv: Inv) -> bool:
    return not inv.has("--help")


def _setuid_mode(mode: str) -> bool:
    return any(re.fullmatch(r"[ugoa]*[+=][rwxXt]*s[rwxXt]*", m) or re.fullmatch(r"0?[2467][0-7]{3}", m)
               for m in (p.lstrip("DF") for p in mode.split(",")))


@rule("PRIV-003", "privilege-escalation", "deny", ("chmod", "install", "rsync"), "sets the setuid or setgid bit "
      "(chmod, install -m, rsync --chmod)", "chmod u+s /bin/bash")
def _setuid(inv: Inv) -> bool:
    args = inv.args
    if inv.prog == "chmod":
        return any(_setuid_mode(a) for a in args)
    modes = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-m", "--mode") and inv.prog == "install"]
    modes += [a.split("=", 1)[1] for a in args if a.startswith(("--mode=", "--chmod="))]
    modes += [a[2:] for a in args if a.startswith("-m") and len(a) > 2 and inv.prog == "install"]
    return any(_setuid_mode(m) for m in modes)


@rule("PRIV-004", "privilege-escalation", "deny", ("setcap", "capsh"),
      "grants file capabilities", "setcap cap_setuid+ep /usr/bin/python3")
def _setcap(inv: Inv) -> bool:
    return bool(inv.positional)


@rule("PRIV-005", "privilege-escalation", "deny",
      ("visudo", "usermod", "useradd", "adduser", "passwd", "chpasswd", "gpasswd", "groupadd",
       "userdel", "vipw", "chage", "addgroup"),
      "changes users, groups, passwords or sudoers", "usermod -aG sudo agent")
def _users(inv: Inv) -> bool:
    return not inv.has("--help") and not (inv.prog == "passwd" and inv.has("S", "--status"))


@rule("RES-002", "resource-exhaustion", "ask", ("dd", "fallocate", "yes", "stress", "stress-ng"),
      "fills the disk or loads the machine without bound", "dd if=/dev/zero of=big bs=1G")
def _fill(inv: Inv) -> bool:
    if inv.prog == "dd":
        return any(a in ("if=/dev/zero", "if=/dev/urandom", "if=/dev/random") for a in inv.args) \
            and not any(a.startswith("count=") for a in inv.args)
    if inv.prog == "yes":
        return any(r.writes and r.target not in ("/dev/null",) for r in inv.simple.redirects)
    return True


@rule("PROC-001", "process-control", "deny", ("kill", "pkill"),
      "signals every process or init", "kill -9 -1")
def _kill_all(inv: Inv) -> bool:
    args = inv.args
    if args[:1] in (["-s"], ["-n"]):
        args = args[2:]
    elif args and re.fullmatch(r"-(?:[0-9]+|[A-Z]+[0-9]*|SIG\w+)", args[0]):
        args = args[1:]
    return any(p in ("-1", "1") for p in args) or (inv.prog == "pkill" and inv.positional[:1] in (
        ["init"], ["systemd"], ["sshd"], ["-u"]))


@rule("PROC-002", "process-control", "ask", ("killall", "pkill", "killall5", "xkill"),
      "kills processes by name or by a pattern that can match the person's own (not one command line the agent "
      "started)", "pkill -f node")
def _killall(inv: Inv) -> bool:
    if inv.prog != "pkill" or not inv.has("f", "--full"):
        return bool(inv.positional) or inv.prog in ("killall5", "xkill")
    words, take, rest = [], False, False
    for a in inv.args:
        if take or a == "--" and not rest:
            take, rest = False, rest or a == "--"
        elif rest or not a.startswith("-") or len(a) == 1:
            words.append(a)
        elif not _SIGNAL.fullmatch(a):
            if a.lstrip("-") not in ("f", "full", "x", "exact", "n", "newest", "o", "oldest", "e", "echo", "c",
                                     "count") and not re.fullmatch(r"-[fxnoec]+", a):
                take = a in ("-s", "--signal")
                if not take:
                    return True  # -u/-U/-G/-P/-t...: a scope the guardian does not weigh
    return not words or not all(_one_command_line(w) for w in words)


_SIGNAL = re.compile(r"-(?:[0-9]+|[A-Z]+[0-9]*|SIG\w+)|--signal=\w+")
_SCRIPT = re.compile(r"[\w-]+\.(?:py|js|mjs|cjs|ts|rb|php|pl|sh|jar|go)\b|[\w.-]+:[\w.]+|\bhttp\.server\b|"
                     r"\brunserver\b|\bmanage\.py\b")


def _one_command_line(pattern: str) -> bool:
    """A `pkill -f` pattern that names one command line (`python -m http.server`, `uvicorn app:app`, `node
    server.js`): several words or a script or module name, and no regex that widens it (`.*`, `|`, `[..]`)."""
    p = pattern.strip("^$ ")
    if not p or UNKNOWN in p or any(c in p for c in "*+?|[]()\\"):
        return False
    return len(p.split()) >= 2 and len(p) >= 8 or bool(_SCRIPT.search(p))


@rule("PROC-003", "process-control", "deny",
      ("shutdown", "reboot", "poweroff", "halt", "init", "telinit", "systemctl", "kexec"),
      "shuts down or reboots the machine", "shutdown -h now")
def _shutdown(inv: Inv) -> bool:
    if inv.prog in ("init", "telinit"):
        return inv.positional[:1] in (["0"], ["6"], ["1"], ["s"])
    if inv.prog == "systemctl":
        return bool(set(inv.positional[:1]) & {"reboot", "poweroff", "halt", "kexec", "emergency",
                                               "rescue", "suspend", "hibernate"})
    return not inv.has("--help")


@rule("PROC-004", "process-control", "ask", ("systemctl", "service", "launchctl", "supervisorctl"),
      "stops, disables or masks system services", "systemctl stop nginx")
def _services(inv: Inv) -> bool:
    verbs = {"stop", "disable", "mask", "kill", "restart", "unload", "remove", "isolate",
             "daemon-reload", "reload", "enable", "bootout"}
    # starting a service destroys nothing (`service postgresql start` in a dev container)
    words = inv.positional[:2] if inv.prog == "service" else inv.positional[:1]
    return bool(set(words) & verbs)


@rule("LOG-001", "log-tampering", "deny", ("history", "unset", "set", "export", "shopt"),
      "clears or disables shell history", "history -c")
def _history(inv: Inv) -> bool:
    if inv.prog == "history":
        return inv.has("c", "d", "w") and (inv.has("c", "d") or "/dev/null" in inv.args)
    if inv.prog == "unset":
        return any(a.startswith("HIST") for a in inv.args)
    if inv.prog == "set":
        return "history" in inv.args and "+o" in inv.args
    if inv.prog == "export":
        return any(re.match(r"HIST(?:FILE=/dev/null|FILE=$|SIZE=0|FILESIZE=0)", a) for a in inv.args)
    return False


@rule("LOG-003", "log-tampering", "deny", ("journalctl", "auditctl", "logrotate", "wevtutil"),
      "purges or disables system logging and auditing", "journalctl --vacuum-time=1s")
def _journal(inv: Inv) -> bool:
    if inv.prog == "journalctl":
        return any(a.startswith(("--vacuum", "--rotate", "--flush")) for a in inv.args)
    if inv.prog == "auditctl":
        return inv.has("D") or inv.args[:2] == ["-e", "0"]
    return inv.has("f", "--force") or inv.prog == "wevtutil"
