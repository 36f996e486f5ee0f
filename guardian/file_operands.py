"""Operands whose kind the text decides: a mkfs-like program's image file, rsync's operands and excludes.

Not a rules module (those load lazily, in a fixed order): `rules_fs` and the target and exposure passes
read these alike.
"""

from __future__ import annotations

import posixpath
import re

from tether.guardian.rules import Inv
from tether.guardian.words import UNKNOWN

MKFS = ("mkfs", "mke2fs", "mkswap", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat",
        "mkfs.fat", "mkfs.msdos", "mkdosfs", "mkfs.ntfs", "mkfs.exfat", "mkfs.f2fs", "newfs", "mkntfs", "mformat")
"""Programs that lay a file system (or swap) over their operand: a device, or an image file."""
DEVICE_TREES = ("/dev/", "/proc/", "/sys/")


def image_operands(inv: Inv) -> list[str]:
    """The operands of a mkfs-like program when every one is a regular file path seen from its cwd
    (`disk.img`, `/tmp/test.img`, `tests/fixtures/fs.img`), else []: a device (/dev/*, or reached
    through `cd /dev`), an operand unknown until run time or a cwd unknown keep DISK-002's deny.
    Bare numbers (a block count) are not paths. Where the file lies is judged by the path policy
    (`targets.write_targets` lists these as writes)."""
    paths = [p for p in inv.positional if not p.isdigit()]
    cwd = inv.simple.cwd or ""
    if not paths or UNKNOWN in cwd or not cwd.startswith("/"):
        return []
    for p in paths:
        if UNKNOWN in p or p.startswith("~") or any(c in p for c in "*?[$`"):
            return []
        full = posixpath.normpath(p if p.startswith("/") else cwd.rstrip("/") + "/" + p)
        if full == "/dev" or any((full + "/").startswith(t) for t in DEVICE_TREES):
            return []
    return paths


RSYNC_VALUED = frozenset((
    "--exclude --include --exclude-from --include-from --filter -f --files-from -e --rsh --rsync-path --chmod "
    "--chown --backup-dir --suffix -T --temp-dir --compare-dest --copy-dest --link-dest --partial-dir --log-file "
    "--log-file-format --password-file -M --remote-option --out-format --timeout --contimeout --bwlimit --max-size "
    "--min-size -B --block-size --port --sockopts --usermap --groupmap --iconv --info --debug --protocol "
    "--checksum-choice --compress-choice --compress-level --outbuf --stop-after --stop-at --modify-window "
    "--max-delete --skip-compress --address --max-alloc --write-batch --read-batch --only-write-batch").split())
"""rsync options whose value is the next word (`--exclude .git`): not operands."""
REMOTE = re.compile(r"^(?:[\w.-]+@)?[\w.-]+:|^\w+://")


def rsync_operands(inv: Inv) -> tuple[list[str], list[str]]:
    """(rsync's operands, the literal patterns of its --exclude options), option values skipped."""
    ops, excluded = [], []
    args = inv.args
    i, rest = 0, False
    while i < len(args):
        a = args[i]
        if rest or not a.startswith("-") or a == "-":
            ops.append(a)
        elif a == "--":
            rest = True
        elif a in RSYNC_VALUED:
            if a == "--exclude" and i + 1 < len(args):
                excluded.append(args[i + 1])
            i += 1
        elif a.startswith("--exclude="):
            excluded.append(a.split("=", 1)[1])
        i += 1
    return ops, excluded
