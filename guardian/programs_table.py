"""DATA: programs that can execute commands, and where they carry the command.

Read only by `guardian.programs` (which documents the schema). A literal
module rather than TOML/YAML so that `tether guard` imports it from bytecode
in well under a millisecond. Facts are public (man pages; GTFOBins lists the
same escapes); the table is written for this project.

Entry keys (all optional but `fam`):
    fam: family, for coverage figures.   aka: other names, space separated.
    opts: option -> kind of its value (`-c X`, `-cX`, `--opt=X`, `+X` for `+`).
    flags: option without value -> kind (its presence alone executes, or
        `argv`: the rest of the line is a command, `stuff`: screen -X stuff).
    rest: kind of the positionals from index `at` on (`argv`/`rargv`: a
        command and its arguments; `shell`/`rshell`: joined into one shell
        line; `rcmd`: one positional is a shell line, several an argv, run
        elsewhere (`heroku run`); `shell1`/`lshell1`/`script1`: just the
        positional at `at`).
    valued / lvalued: short letters / long names of options that take a value
        (so the first positional is found); pairs: options taking two values.
    late: the table's options count even after the first positional (runuser).
    after: "--": the command starts after `--` (kubectl exec); remote: it runs
        elsewhere (only deny-level findings count).
    sub: subcommand (first positional) -> an entry for the rest.
    stdin: kind of the text the program reads on stdin (heredoc, pipe).
    assign: `NAME=value` arguments -> kind (make SHELL=).   env: variables the
        program sets for the commands it runs (split --filter sets FILE).
    manifest: a file in the working directory it runs code from (package.json).
    by: handled elsewhere ("interp": interpreter code, "unwrap": wrapper).
Kinds: shell, argv, escape (editor/pager/debugger/REPL command language:
`!cmd`, `:!cmd`, `shell cmd`, `.system cmd`, `\\! cmd`, `py ...`), code:LANG,
file (a script it loads: content known in the line -> analysed, downloaded ->
deny, written elsewhere -> ask), script (its main input: only a download
counts), extfile (asks only outside the workspace), ask, none, gitcfg,
aptcfg, sshcfg, hgcfg, sshconfig, alias, tex, m4, sed, rpmeval, makefile,
makefile_file, crontab, bindx, socat, url (git `ext::` URLs), dir (hook or
script directory: asks outside the workspace), shellpath (a program path,
a bare shell is fine), gccwrapper, cargocfg, prompt, taropts, nodeopts,
loadpath (colon-separated folders or a file code is loaded from: asks outside the workspace and system folders).
The `r` prefix (rshell, rargv) and `lshell1` mean "runs elsewhere or later".
"""

# fmt: off
PROGRAMS: dict[str, dict] = {
    # ---- shells: `-c` is a shell line, the first positional a script ----
    "bash": {"fam": "shell", "aka": "sh dash zsh ksh mksh ash rbash", "by": "interp"},
    "csh": {"fam": "shell", "aka": "tcsh", "opts": {"-c": "shell"}, "rest": "script1"},
    "fish": {"fam": "shell", "opts": {"-c": "shell", "--command": "shell", "-C": "shell", "--init-command": "shell"},
        "rest": "script1"},
    "yash": {"fam": "shell", "aka": "posh sash elvish xonsh nu oksh loksh", "opts": {"-c": "shell"}, "rest": "script1"},
    "busybox": {"fam": "shell", "aka": "toybox coreutils", "by": "unwrap"},
    "pwsh": {"fam": "shell", "aka": "powershell", "opts": {"-c": "shell", "-Command": "shell", "-command": "shell",
        "-File": "file", "-f": "file", "-EncodedCommand": "ask", "-e": "ask", "-enc": "ask"}, "rest": "script1"},
    "rc": {"fam": "shell", "opts": {"-c": "shell"}, "rest": "script1"},
    "eval": {"fam": "shell", "by": "interp"},
    "source": {"fam": "shell", "aka": ".", "by": "interp"},
    "exec": {"fam": "shell", "by": "unwrap"},
    "trap": {"fam": "persistence", "rest": "lshell1"},
    "alias": {"fam": "persistence", "rest": "alias", "flags": {"-g": "none", "-s": "none"}},
    "complete": {"fam": "persistence", "aka": "compgen", "opts": {"-C": "shell", "-F": "ask"}},
    "bind": {"fam": "persistence", "opts": {"-x": "bindx"}},
    "fc": {"fam": "shell", "opts": {"-e": "shellpath"}},
    # ---- interpreters: their code is read by guardian.interp ----
    "python": {"fam": "interpreter", "aka": "python2 python3 pypy pypy3 python3.8 python3.9 python3.10 python3.11 "
                                            "python3.12 python3.13", "by": "interp"},
    "perl": {"fam": "interpreter", "by": "interp"},
    "ruby": {"fam": "interpreter", "by": "interp"},
    "node": {"fam": "interpreter", "aka": "nodejs", "by": "interp"},
    "php": {"fam": "interpreter", "by": "interp"},
    "lua": {"fam": "interpreter", "by": "interp"},
    "deno": {"fam": "interpreter", "by": "interp"},
    "bun": {"fam": "interpreter", "by": "interp"},
    "awk": {"fam": "interpreter", "aka": "gawk mawk nawk", "by": "interp"},
    "luajit": {"fam": "interpreter", "aka": "lua5.1 lua5.2 lua5.3 lua5.4 texlua", "opts": {"-e": "code:lua"},
        "rest": "script1", "stdin": "code:lua"},
    "tclsh": {"fam": "interpreter", "aka": "wish tclsh8.6 expectk", "rest": "script1", "stdin": "code:tcl"},
    "expect": {"fam": "interpreter", "opts": {"-c": "code:tcl", "-f": "script:tcl"}, "rest": "script1",
        "stdin": "code:tcl"},
    "irb": {"fam": "interpreter", "aka": "pry jruby", "opts": {"-e": "code:ruby", "-r": "file"}, "stdin": "code:ruby"},
    "ts-node": {"fam": "interpreter", "aka": "tsx", "opts": {"-e": "code:node", "--eval": "code:node",
        "-p": "code:node", "--print": "code:node"}, "rest": "script1"},
    "jrunscript": {"fam": "interpreter", "opts": {"-e": "code:js", "-f": "file"}, "stdin": "code:js"},
    "jjs": {"fam": "interpreter", "rest": "script1", "stdin": "code:js"},
    "R": {"fam": "interpreter", "aka": "Rscript r", "opts": {"-e": "code:r", "--file": "script:R", "-f": "script:R"},
        "rest": "script1", "stdin": "code:r"},
    "julia": {"fam": "interpreter", "opts": {"-e": "code:julia", "--eval": "code:julia", "-E": "code:julia",
        "-L": "file:julia"}, "rest": "script1"},
    "elixir": {"fam": "interpreter", "aka": "iex", "opts": {"-e": "code:elixir", "--eval": "code:elixir", "-r": "file"},
        "rest": "script1"},
    "clojure": {"fam": "interpreter", "aka": "clj bb babashka",
        "opts": {"-e": "code:clojure", "--eval": "code:clojure"}, "rest": "script1"},
    "crystal": {"fam": "interpreter", "sub": {"eval": {"rest": "code:crystal"}, "run": {"rest": "script1"}}},
    "swift": {"fam": "interpreter", "opts": {"-e": "code:swift"}},
    "erl": {"fam": "interpreter", "opts": {"-eval": "code:erlang", "-s": "ask", "-run": "ask"}},
    "escript": {"fam": "interpreter", "rest": "script1"},
    "scala": {"fam": "interpreter", "aka": "groovy kotlin kotlinc", "opts": {"-e": "code:jvm"}, "rest": "script1"},
    "ghc": {"fam": "interpreter", "aka": "ghci runghc runhaskell", "opts": {"-e": "code:haskell"}},
    "guile": {"fam": "interpreter", "aka": "racket csi chicken-csi", "opts": {"-c": "code:scheme", "-e": "code:scheme",
        "--eval": "code:scheme"}, "rest": "script1"},
    "sbcl": {"fam": "interpreter", "aka": "clisp ecl ccl", "opts": {"--eval": "code:lisp", "-x": "code:lisp",
        "--load": "file", "--script": "file"}},
    "emacs": {"fam": "editor", "aka": "emacs-nox", "opts": {"--eval": "code:elisp", "-eval": "code:elisp",
        "-l": "script:elisp", "--load": "script:elisp", "--script": "script:elisp", "-f": "none", "--funcall": "none"}},
    "octave": {"fam": "interpreter", "aka": "octave-cli matlab", "opts": {"--eval": "code:octave", "-r": "code:octave"},
        "rest": "script1"},
    "gnuplot": {"fam": "interpreter", "opts": {"-e": "escape"}, "rest": "script1", "stdin": "escape"},
    "slsh": {"fam": "interpreter", "opts": {"-e": "code:slang"}, "rest": "script1"},
    "osascript": {"fam": "interpreter", "opts": {"-e": "code:applescript"}, "rest": "script1"},
    "dc": {"fam": "interpreter", "opts": {"-e": "escape", "--expression": "escape", "-f": "script:escape"},
        "stdin": "escape"},
    "m4": {"fam": "interpreter", "rest": "m4", "stdin": "m4"},
    "sed": {"fam": "interpreter", "aka": "gsed", "opts": {"-e": "sed", "--expression": "sed", "-f": "script:sed",
        "--file": "script:sed"}, "rest": "sed1"},
    "rake": {"fam": "build", "opts": {"-e": "code:ruby", "--execute": "code:ruby", "-p": "code:ruby",
        "-f": "script:ruby"}, "manifest": "Rakefile"},
    "perf": {"fam": "trace", "sub": {"record": {"rest": "argv", "valued": "oecCFpt"}, "stat": {"rest": "argv",
        "valued": "oecCpt"}, "trace": {"rest": "argv"}, "script": {"opts": {"-s": "file"}}}},
    # ---- editors, pagers, debuggers and REPLs with shell escapes ----
    "vim": {"fam": "editor", "aka": "vi nvim view rvim rview gvim vimdiff vim.basic vim.tiny vim.nox ex vimx neovim",
        "opts": {"-c": "escape", "--cmd": "escape", "+": "escape", "-S": "file:escape", "-u": "file:escape"},
        "stdin": "escape"},
    "ed": {"fam": "editor", "aka": "red", "stdin": "escape"},
    "nano": {"fam": "editor", "aka": "pico rnano", "opts": {"-s": "shell", "--speller": "shell"}},
    "joe": {"fam": "editor", "aka": "jpico jmacs jstar mg jed", "stdin": "escape"},
    "kak": {"fam": "editor", "opts": {"-e": "escape"}},
    "less": {"fam": "pager", "opts": {"+": "escape"}},
    "more": {"fam": "pager", "aka": "most pg", "opts": {"+": "escape"}},
    "man": {"fam": "pager", "opts": {"-P": "shell", "--pager": "shell", "-H": "shell", "--html": "shell"}},
    "journalctl": {"fam": "pager", "aka": "loginctl timedatectl hostnamectl localectl busctl coredumpctl "
                                          "systemd-resolve resolvectl", "lvalued": "--output -u --unit"},
    "gdb": {"fam": "debugger", "aka": "gdb-multiarch cgdb", "opts": {"-ex": "escape", "--ex": "escape",
        "-eval-command": "escape", "--eval-command": "escape", "-iex": "escape", "-x": "script:escape",
        "--command": "script:escape", "-ix": "script:escape"}, "flags": {"--args": "argv"}, "stdin": "escape"},
    "lldb": {"fam": "debugger", "opts": {"-o": "escape", "--one-line": "escape", "-O": "escape", "-k": "escape",
        "-s": "file:escape", "--source": "file:escape"}, "stdin": "escape"},
    "pdb": {"fam": "debugger", "aka": "pdb3", "opts": {"-c": "escape"}, "rest": "script1"},
    "radare2": {"fam": "debugger", "aka": "r2 rizin", "opts": {"-c": "escape", "-i": "file:escape"}},
    "crash": {"fam": "debugger", "opts": {"-i": "file:escape"}, "stdin": "escape"},
    "debugfs": {"fam": "debugger", "opts": {"-R": "escape", "-f": "file:escape"}, "stdin": "escape"},
    "tdbtool": {"fam": "debugger", "stdin": "escape"},
    "sqlite3": {"fam": "repl", "aka": "sqlite", "opts": {"-cmd": "escape", "--cmd": "escape", "-init": "file:escape"},
        "rest": "escape", "at": 1, "stdin": "escape"},
    "mysql": {"fam": "repl", "aka": "mariadb", "opts": {"-e": "escape", "--execute": "escape"}, "stdin": "escape"},
    "psql": {"fam": "repl", "opts": {"-c": "escape", "--command": "escape", "-f": "script:escape",
        "--file": "script:escape"}, "stdin": "escape"},
    "ftp": {"fam": "network", "aka": "pftp netkit-ftp tnftp", "stdin": "escape"},
    "lftp": {"fam": "network", "opts": {"-c": "escape", "-e": "escape", "-f": "file:escape"}, "stdin": "escape"},
    "smbclient": {"fam": "network", "opts": {"-c": "escape", "--command": "escape"}, "stdin": "escape"},
    "sftp": {"fam": "network", "opts": {"-o": "sshcfg", "-S": "shellpath", "-D": "shellpath", "-b": "file:escape"},
        "stdin": "escape"},
    "telnet": {"fam": "network", "stdin": "escape"},
    "bc": {"fam": "repl", "stdin": "escape"},
    "cpan": {"fam": "package", "stdin": "escape"},
    "mail": {"fam": "network", "aka": "mailx bsd-mailx s-nail", "opts": {"--exec": "escape", "-E": "escape"},
        "stdin": "escape"},
    "run-mailcap": {"fam": "pager", "aka": "see edit compose print", "stdin": "escape"},
    "iftop": {"fam": "pager", "aka": "top htop atop nmon", "stdin": "escape"},
    "minicom": {"fam": "network", "opts": {"-S": "file"}},
    "hping3": {"fam": "network", "stdin": "escape"},
    "tasksh": {"fam": "repl", "stdin": "escape"},
    "mongo": {"fam": "repl", "aka": "mongosh", "opts": {"--eval": "code:js"}},
    "redis-cli": {"fam": "repl", "opts": {"--eval": "file"}},
    # ---- wrappers: the rest of the line is a command ----
    "strace": {"fam": "trace", "valued": "abeEIoOpPsSuUX", "lvalued": "--output --trace --signal --user --env "
                                                                      "--attach --string-limit -e", "rest": "argv"},
    "ltrace": {"fam": "trace", "valued": "aAeFlnopsuwxX", "lvalued": "--output --library --align", "rest": "argv"},
    "valgrind": {"fam": "trace", "rest": "argv"},
    "taskset": {"fam": "wrapper", "valued": "", "rest": "argv", "at": 1, "flags": {"-p": "none"}},
    "chrt": {"fam": "wrapper", "rest": "argv", "at": 1},
    "setsid": {"fam": "wrapper", "rest": "argv"},
    "unshare": {"fam": "namespace", "valued": "S G", "lvalued": "--setuid --setgid --map-user --map-group --root "
                                                                "--wd --propagation", "rest": "argv"},
    "nsenter": {"fam": "namespace", "valued": "tSGwr", "lvalued": "--target --setuid --setgid --wd --root",
        "rest": "argv"},
    "chroot": {"fam": "namespace", "lvalued": "--userspec --groups", "rest": "argv", "at": 1},
    "flock": {"fam": "wrapper", "valued": "wEn", "lvalued": "--timeout --conflict-exit-code", "opts": {"-c": "shell",
        "--command": "shell"}, "rest": "argv", "at": 1},
    "script": {"fam": "wrapper", "bare": True, "opts": {"-c": "shell", "--command": "shell"}, "valued": "IOTBE",
        "lvalued": "--log-in --log-out --log-timing --log-io --echo"},
    "su": {"fam": "privilege", "aka": "ksu", "opts": {"-c": "shell", "--command": "shell",
        "--session-command": "shell"}, "valued": "sgG", "lvalued": "--shell --group --supp-group"},
    "runuser": {"fam": "privilege", "late": True, "opts": {"-c": "shell", "--command": "shell"}, "valued": "ugGs",
        "lvalued": "--user --group --supp-group --shell", "rest": "argv"},
    "setpriv": {"fam": "privilege", "lvalued": "--reuid --regid --groups --inh-caps --bounding-set --securebits "
                                               "--selinux-label --apparmor-profile", "rest": "argv"},
    "aa-exec": {"fam": "sandbox", "valued": "pn", "lvalued": "--profile --namespace", "rest": "argv"},
    "firejail": {"fam": "sandbox", "rest": "argv"},
    "bwrap": {"fam": "sandbox", "aka": "bubblewrap", "rest": "argv", "lvalued": "--bind --ro-bind --dev-bind "
                                                                                "--symlink --chdir --setenv "
                                                                                "--unsetenv --uid --gid --hostname "
                                                                                "--proc --dev --tmpfs --dir --file "
                                                                                "--lock-file --seccomp --info-fd "
                                                                                "--args --cap-add --cap-drop --perms "
                                                                                "--size --chmod --remount-ro "
                                                                                "--ro-bind-try --bind-try "
                                                                                "--dev-bind-try",
            "pairs": "--bind --ro-bind --dev-bind --symlink --setenv --bind-try --ro-bind-try --dev-bind-try "
                     "--chmod --file"},
    "proot": {"fam": "sandbox", "valued": "rbwq", "lvalued": "--rootfs --bind --cwd", "rest": "argv"},
    "fakeroot": {"fam": "wrapper", "aka": "fakechroot eatmydata torsocks torify tsocks proxychains proxychains4 "
                                          "unbuffer catchsegv xvfb-run dbus-launch dbus-run-session chronic ifne "
                                          "nocache trickle firejail-run pv-wrap", "rest": "argv"},
    "stdbuf": {"fam": "wrapper", "by": "unwrap"},
    "ionice": {"fam": "wrapper", "by": "unwrap"},
    "nice": {"fam": "wrapper", "by": "unwrap"},
    "time": {"fam": "wrapper", "by": "unwrap"},
    "timeout": {"fam": "wrapper", "by": "unwrap"},
    "nohup": {"fam": "wrapper", "by": "unwrap"},
    "env": {"fam": "wrapper", "by": "unwrap"},
    "command": {"fam": "wrapper", "aka": "builtin", "by": "unwrap"},
    "sudo": {"fam": "privilege", "aka": "doas pkexec run0", "by": "unwrap"},
    "watch": {"fam": "wrapper", "by": "unwrap"},
    "xargs": {"fam": "wrapper", "by": "unwrap"},
    "parallel": {"fam": "wrapper", "aka": "sem", "by": "unwrap"},
    "find": {"fam": "wrapper", "aka": "gfind bfs", "by": "unwrap", "opts": {"-fprintf": "none", "-fprint": "none",
        "-fls": "none"}},
    "fd": {"fam": "wrapper", "aka": "fdfind", "by": "unwrap"},
    "rg": {"fam": "wrapper", "aka": "ripgrep rga", "opts": {"--pre": "shell"}},
    "rlwrap": {"fam": "wrapper", "valued": "acfHlopPsStqw", "lvalued": "--file --history-filename --prompt-colour "
                                                                       "--substitute-prompt", "rest": "argv"},
    "setarch": {"fam": "wrapper", "aka": "linux32 linux64 i386 x86_64", "rest": "argv", "at": 1},
    "prlimit": {"fam": "wrapper", "valued": "p", "lvalued": "--pid", "rest": "argv"},
    "numactl": {"fam": "wrapper", "valued": "CNmpi", "rest": "argv"},
    "cpulimit": {"fam": "wrapper", "valued": "lpe", "lvalued": "--limit --pid --exe", "rest": "argv"},
    "cgexec": {"fam": "wrapper", "valued": "g", "rest": "argv"},
    "systemd-run": {"fam": "scheduler", "valued": "upEMH", "lvalued": "--unit --property --description --slice --uid "
                                                                      "--gid --working-directory --setenv "
                                                                      "--on-calendar --on-active --on-boot "
                                                                      "--timer-property --machine --host --nice",
                                                                          "rest": "argv"},
    "systemd-nspawn": {"fam": "namespace", "valued": "DMud", "lvalued": "--directory --machine --user --image --bind "
                                                                        "--bind-ro --setenv", "rest": "argv"},
    "start-stop-daemon": {"fam": "scheduler", "opts": {"-x": "file", "--exec": "file", "-a": "file",
        "--startas": "file"}},
    "daemonize": {"fam": "scheduler", "valued": "aceEopluvc", "rest": "argv"},
    "logsave": {"fam": "wrapper", "rest": "argv", "at": 1},
    "multitime": {"fam": "wrapper", "valued": "ni", "rest": "argv"},
    "hyperfine": {"fam": "wrapper", "opts": {"-p": "shell", "--prepare": "shell", "-c": "shell", "--cleanup": "shell",
        "-s": "shell", "--setup": "shell"}, "valued": "wmMrLSn", "rest": "shell_each"},
    "entr": {"fam": "wrapper", "rest": "argv", "opts": {"-s": "shell"}},
    # ---- wrappers that run their argv as another user, under an init, in an environment or later ----
    "gosu": {"fam": "privilege", "aka": "su-exec s6-setuidgid runcon envchain lckdo faketime", "rest": "argv",
        "at": 1},
    "tini": {"fam": "wrapper", "aka": "dumb-init catatonit", "valued": "pel", "lvalued": "--rewrite -r",
        "rest": "argv"},
    "nix-shell": {"fam": "wrapper", "opts": {"--run": "shell", "--command": "shell"}, "valued": "pIAE",
        "lvalued": "--packages --attr --arg --argstr --expr", "rest": "script1"},
    "nix": {"fam": "wrapper", "sub": {"develop": {"opts": {"-c": "argv_rest", "--command": "argv_rest"}},
        "shell": {"opts": {"-c": "argv_rest", "--command": "argv_rest"}},
        "run": {"after": "--"}}},
    "direnv": {"fam": "wrapper", "sub": {"exec": {"rest": "argv", "at": 1}}},
    "concurrently": {"fam": "wrapper", "valued": "nckpsP", "lvalued": "--names --prefix-colors --prefix --success "
                                                                     "--max-processes --restart-tries "
                                                                     "--kill-signal --timestamp-format",
        "rest": "shell_each"},
    "caffeinate": {"fam": "wrapper", "valued": "tw", "rest": "argv"},
    "systemd-inhibit": {"fam": "wrapper", "aka": "run-one run-this-one keep-one-running nq tsp "
                                                "choom timelimit retry with-lock-ex nsjail minijail0 "
                                                "bubblejail toolbox-run",
        "valued": "tTsSnr", "lvalued": "--what --who --why --mode --times --delay", "rest": "argv"},
    "pueue": {"fam": "scheduler", "sub": {"add": {"rest": "shell", "valued": "wdgoa",
        "lvalued": "--working-directory --delay --group --after --label"}}},
    "sbatch": {"fam": "scheduler", "aka": "srun salloc", "opts": {"--wrap": "shell"}, "valued": "pNntcJoeDAwq",
        "lvalued": "--partition --nodes --ntasks --time --job-name --output --error --account --mem",
        "rest": "argv"},
    "mpirun": {"fam": "wrapper", "aka": "mpiexec", "valued": "nHx", "lvalued": "-np --np -host --host -hostfile "
                                                                          "--hostfile -x -wdir --map-by",
        "rest": "argv"},
    "aws-vault": {"fam": "wrapper", "sub": {"exec": {"after": "--"}}},
    "op": {"fam": "wrapper", "sub": {"run": {"after": "--"}}},
    "doppler": {"fam": "wrapper", "aka": "infisical teller berglas", "sub": {"run": {"after": "--",
        "opts": {"--command": "shell"}}, "exec": {"after": "--"}}},
    "dotenv": {"fam": "wrapper", "aka": "dotenvx", "sub": {"run": {"after": "--"}}, "after": "--"},
    "chamber": {"fam": "wrapper", "sub": {"exec": {"after": "--"}}},
    "sops": {"fam": "wrapper", "sub": {"exec-env": {"rest": "shell", "at": 1}, "exec-file": {"rest": "shell",
        "at": 1}}},
    "mise": {"fam": "wrapper", "aka": "rtx", "sub": {"exec": {"after": "--"}, "x": {"after": "--"}}},
    "asdf": {"fam": "wrapper", "aka": "pyenv rbenv nodenv goenv jenv volta", "sub": {"exec": {"rest": "argv"},
        "run": {"rest": "argv"}}},
    "fnm": {"fam": "wrapper", "sub": {"exec": {"after": "--"}}},
    "devbox": {"fam": "wrapper", "sub": {"run": {"after": "--"}}},
    "flatpak-spawn": {"fam": "wrapper", "lvalued": "--env --directory --forward-fd", "rest": "argv"},
    "distrobox": {"fam": "wrapper", "sub": {"enter": {"after": "--"}}},
    "zellij": {"fam": "terminal", "sub": {"run": {"after": "--"}, "r": {"after": "--"}}},
    "dtach": {"fam": "terminal", "aka": "abduco", "valued": "er", "rest": "argv", "at": 1},
    "reflex": {"fam": "wrapper", "aka": "onchange", "valued": "rRgG", "lvalued": "--regex --inverse-regex "
                                                                              "--glob --inverse-glob",
        "after": "--"},
    "chokidar": {"fam": "wrapper", "opts": {"-c": "shell", "--command": "shell"}},
    "watchman-make": {"fam": "wrapper", "opts": {"--run": "shell", "-r": "shell"}},
    "lockrun": {"fam": "wrapper", "after": "--"},
    "machinectl": {"fam": "namespace", "sub": {"shell": {"rest": "argv", "at": 1}}},
    "pixi": {"fam": "package", "sub": {"run": {"rest": "shell", "lvalued": "--environment -e --manifest-path"},
        "exec": {"rest": "argv", "lvalued": "--spec -s"}}},
    "devcontainer": {"fam": "container", "sub": {"exec": {"rest": "argv", "lvalued": "--workspace-folder "
                                                                                      "--container-id --config "
                                                                                      "--remote-env"}}},
    "when-changed": {"fam": "wrapper", "opts": {"-c": "argv_rest"}},
    "watchexec": {"fam": "wrapper", "valued": "ewdi", "lvalued": "--exts --watch --debounce --ignore --shell",
        "rest": "shell"},
    "nodemon": {"fam": "wrapper", "opts": {"--exec": "shell", "-x": "shell"}},
    "screen": {"fam": "terminal", "valued": "SscRrxpt", "rest": "argv", "flags": {"-X": "stuff"}},
    "tmux": {"fam": "terminal", "aka": "tmate byobu", "opts": {"-c": "shell"}, "valued": "fLSTf",
        "sub": {"new-session": {"rest": "shell", "valued": "csnxyFetA"}, "new": {"rest": "shell",
        "valued": "csnxyFetA"}, "new-window": {"rest": "shell", "valued": "cnFt"}, "neww": {"rest": "shell",
        "valued": "cnFt"}, "split-window": {"rest": "shell", "valued": "clptF"}, "splitw": {"rest": "shell",
        "valued": "clptF"}, "send-keys": {"rest": "shell", "valued": "tN"}, "send": {"rest": "shell", "valued": "tN"},
        "run-shell": {"rest": "shell", "valued": "dt"}, "run": {"rest": "shell", "valued": "dt"},
        "respawn-pane": {"rest": "shell", "valued": "ct"}}},
    "xterm": {"fam": "terminal", "aka": "gnome-terminal konsole x-terminal-emulator urxvt st alacritty kitty "
                                        "terminator xfce4-terminal", "opts": {"-e": "argv_rest", "--": "argv_rest",
                                            "-x": "argv_rest", "-display": "xdisplay", "--display": "xdisplay"}},
    "xdotool": {"fam": "terminal", "sub": {"exec": {"rest": "argv"}}},
    "sshpass": {"fam": "network", "valued": "pfdeP", "rest": "argv"},
    "ssh-agent": {"fam": "network", "valued": "aEtP", "rest": "argv"},
    "ld.so": {"fam": "wrapper", "aka": "ld-linux.so.2 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 ld-musl-x86_64.so.1",
        "lvalued": "--library-path --preload --audit --argv0", "rest": "argv"},
    "gtester": {"fam": "wrapper", "rest": "argv"},
    "capsh": {"fam": "privilege", "flags": {"--": "shell_rest"}},
    "sg": {"fam": "privilege", "rest": "shell", "at": 1, "opts": {"-c": "shell"}},
    "chpst": {"fam": "privilege", "aka": "setuidgid envuidgid softlimit pgrphack setlock", "valued": "ugUeLlmdofcrpt/n",
        "rest": "argv"},
    "ip": {"fam": "namespace", "sub": {"netns": {"rest": "argv", "at": 2}, "vrf": {"rest": "argv", "at": 2}},
        "opts": {"-b": "file", "-batch": "file"}},
    "lxc-attach": {"fam": "container", "aka": "lxc-execute schroot", "after": "--", "remote": True},
    "lxc": {"fam": "container", "aka": "incus", "sub": {"exec": {"after": "--", "remote": True}}},
    "docker": {"fam": "container", "aka": "podman nerdctl", "sub": {
        "run": {"rest": "rargv", "at": 1, "valued": "aecCdehlLmuvpPw", "lvalued": "--add-host --attach "
                                                                                  "--blkio-weight --cap-add "
                                                                                  "--cap-drop --cgroup-parent "
                                                                                  "--cidfile --cpu-shares --cpus "
                                                                                  "--cpuset-cpus --device --dns "
                                                                                  "--entrypoint --env --env-file "
                                                                                  "--expose --gpus --group-add "
                                                                                  "--health-cmd --hostname --ip "
                                                                                  "--label --label-file --link "
                                                                                  "--log-driver --log-opt "
                                                                                  "--mac-address --memory --mount "
                                                                                  "--name --network --net --pid "
                                                                                  "--platform --publish --pull "
                                                                                  "--restart --runtime "
                                                                                  "--security-opt --shm-size "
                                                                                  "--stop-signal --stop-timeout "
                                                                                  "--storage-opt --tmpfs --ulimit "
                                                                                  "--user --userns --uts --volume "
                                                                                  "--volumes-from --workdir --ipc "
                                                                                  "--init-path --cgroupns",
            "opts": {"--entrypoint": "shell"}},
        "exec": {"rest": "rargv", "at": 1, "valued": "eduw", "lvalued": "--env --env-file --user --workdir "
                                                                        "--detach-keys"},
        "create": {"rest": "rargv", "at": 1, "valued": "ehuvwp", "lvalued": "--env --name --user --volume --workdir "
                                                                            "--network --entrypoint"},
        "compose": {"sub": {"exec": {"rest": "rargv", "at": 1, "valued": "euw"}, "run": {"rest": "rargv", "at": 1,
            "valued": "euwvp"}}}}},
    "docker-compose": {"fam": "container", "sub": {"exec": {"rest": "rargv", "at": 1, "valued": "euw"},
        "run": {"rest": "rargv", "at": 1, "valued": "euwvp"}}},
    "kubectl": {"fam": "container", "aka": "oc microk8s.kubectl k3s", "sub": {"exec": {"after": "--", "remote": True},
        "run": {"after": "--", "remote": True}, "debug": {"after": "--", "remote": True}, "attach": {"after": "--",
        "remote": True}}},
    "vagrant": {"fam": "container", "sub": {"ssh": {"opts": {"-c": "rshell", "--command": "rshell"}}}},
    "heroku": {"fam": "container", "sub": {
        "run": {"rest": "rcmd", "valued": "aerst", "lvalued": "--app --remote --env --size --type"},
        "run:detached": {"rest": "rcmd", "valued": "aerst", "lvalued": "--app --remote --env --size --type"},
        "run:inside": {"rest": "rcmd", "at": 1, "valued": "aer", "lvalued": "--app --remote --env"}}},
    "ssh": {"fam": "network", "aka": "autossh slogin", "opts": {"-o": "sshcfg", "-F": "sshconfig", "-R": "rforward"},
        "valued": "bcDEeFIiJLlmOopQRSWw", "rest": "rshell", "at": 1},
    "scp": {"fam": "network", "opts": {"-o": "sshcfg", "-S": "shellpath", "-F": "file"}},
    "rsync": {"fam": "network", "opts": {"-e": "shell", "--rsh": "shell", "--rsync-path": "shell"}},
    "rsh": {"fam": "network", "aka": "rlogin rexec", "rest": "rshell", "at": 1, "valued": "l"},
    "mosh": {"fam": "network", "opts": {"--ssh": "shell", "--server": "shell"}, "rest": "argv", "after": "--"},
    "check_by_ssh": {"fam": "network", "opts": {"-o": "sshcfg", "-C": "shell", "--command": "shell"}},
    "nc": {"fam": "network", "aka": "ncat netcat nc.traditional nc.openbsd", "opts": {"-e": "shellpath", "-c": "shell",
        "--exec": "shellpath", "--sh-exec": "shell", "--lua-exec": "file"}},
    "socat": {"fam": "network", "rest": "socat"},
    "openvpn": {"fam": "network", "opts": {"--up": "shell", "--down": "shell", "--route-up": "shell",
        "--ipchange": "shell", "--client-connect": "shell", "--tls-verify": "shell", "--auth-user-pass-verify": "shell",
        "--learn-address": "shell", "--config": "file"}},
    "nmap": {"fam": "network", "opts": {"--script": "file:lua"}},
    "tcpdump": {"fam": "network", "opts": {"-z": "shellpath"}},
    "tshark": {"fam": "network", "aka": "wireshark", "opts": {"-X": "ask"}},
    "wget": {"fam": "network", "opts": {"--use-askpass": "shell", "--execute": "none", "-e": "none"}},
    "curl": {"fam": "network"},
    "aria2c": {"fam": "network", "opts": {"--on-download-complete": "shellpath", "--on-download-start": "shellpath",
        "--on-bt-download-complete": "shellpath", "--on-download-error": "shellpath",
        "--on-download-stop": "shellpath"}},
    "restic": {"fam": "network", "opts": {"--password-command": "shell", "-o": "none"}},
    "borg": {"fam": "network", "opts": {"--rsh": "shell", "--remote-path": "shell"}},
    "certbot": {"fam": "network", "opts": {"--pre-hook": "shell", "--post-hook": "shell", "--deploy-hook": "shell",
        "--manual-auth-hook": "shell", "--manual-cleanup-hook": "shell", "--renew-hook": "shell"}},
    "dhclient": {"fam": "network", "opts": {"-sf": "file"}},
    "ssh-keygen": {"fam": "network", "opts": {"-D": "file"}},
    "scrot": {"fam": "desktop", "opts": {"-e": "shell", "--exec": "shell"}},
    "xdg-open": {"fam": "desktop", "aka": "open gio sensible-browser"},
    "sensible-editor": {"fam": "editor", "aka": "sensible-pager select-editor editor pager"},
    # ---- archivers and copiers that run programs ----
    "tar": {"fam": "archive", "aka": "gtar bsdtar", "opts": {"--checkpoint-action": "shell", "--to-command": "shell",
        "--use-compress-program": "shell", "-I": "shell", "--info-script": "shell", "-F": "shell",
        "--new-volume-script": "shell", "--rmt-command": "shellpath", "--rsh-command": "shellpath", "-H": "none",
        "--index-file": "none"}},
    "zip": {"fam": "archive", "opts": {"-TT": "shell", "--unzip-command": "shell"}},
    "cpio": {"fam": "archive", "opts": {"--rsh-command": "shellpath"}},
    "split": {"fam": "archive", "opts": {"--filter": "shell"}, "env": {"FILE": "x-part"}},
    "7z": {"fam": "archive", "aka": "7za 7zr unzip gunzip zcat"},
    "dpkg": {"fam": "package", "opts": {"--pre-invoke": "shell", "--post-invoke": "shell", "--status-logger": "shell"}},
    "apt-get": {"fam": "package", "aka": "apt apt-cache aptitude apt-key", "opts": {"-o": "aptcfg",
        "--option": "aptcfg", "-c": "file", "--config-file": "file"}},
    "yum": {"fam": "package", "aka": "dnf microdnf", "opts": {"--setopt": "none"}},
    "rpm": {"fam": "package", "aka": "rpmquery rpmdb rpmverify rpmbuild rpmspec", "opts": {"--eval": "rpmeval",
        "-E": "rpmeval", "--define": "rpmeval", "-D": "rpmeval", "--pipe": "shell"}},
    "zypper": {"fam": "package", "sub": {"x": {"rest": "argv"}}},
    "pip": {"fam": "package", "aka": "pip3 pip2", "sub": {"install": {"manifest": "setup.py"}}},
    "easy_install": {"fam": "package", "manifest": "setup.py"},
    "npm": {"fam": "package", "aka": "pnpm yarn", "opts": {"-c": "shell", "--call": "shell",
        "--script-shell": "shellpath", "--node-options": "none"}, "manifest": "package.json",
            "sub": {"exec": {"rest": "argv", "opts": {"-c": "shell", "--call": "shell"}}, "x": {"rest": "argv"},
                "dlx": {"rest": "argv"}, "run-script": {"manifest": "package.json"},
                    "config": {"sub": {"set": {"rest": "npmcfg"}}}}},
    "npx": {"fam": "package", "aka": "bunx pnpx", "opts": {"-c": "shell", "--call": "shell", "-p": "none",
        "--package": "none"}, "rest": "argv"},
    "gem": {"fam": "package", "sub": {"open": {"opts": {"-e": "shellpath", "--editor": "shellpath"}},
        "install": {"opts": {"--post-install-message": "none"}}}},
    "bundle": {"fam": "package", "aka": "bundler", "sub": {"exec": {"rest": "argv"}}},
    "composer": {"fam": "package", "sub": {"exec": {"rest": "argv"}, "run-script": {"manifest": "composer.json"},
        "run": {"manifest": "composer.json"}}, "manifest": "composer.json"},
    "poetry": {"fam": "package", "aka": "pipenv pdm hatch rye", "sub": {"run": {"rest": "argv"}, "shell": {}}},
    "uv": {"fam": "package", "sub": {"run": {"rest": "argv", "lvalued": "--with --python --directory --project "
                                                                        "--group --extra --env-file -p"},
            "tool": {"sub": {"run": {"rest": "argv"}}}}},
    "uvx": {"fam": "package", "aka": "pipx", "sub": {"run": {"rest": "argv"}}, "rest": "argv",
        "lvalued": "--from --with --python"},
    "conda": {"fam": "package", "aka": "mamba micromamba", "sub": {"run": {"rest": "argv", "valued": "np",
        "lvalued": "--name --prefix --cwd"}}},
    "cargo": {"fam": "build", "opts": {"--config": "cargocfg"}, "sub": {"run": {"manifest": "build.rs"},
        "build": {"manifest": "build.rs"}}},
    "go": {"fam": "build", "opts": {"-toolexec": "shell", "-exec": "shell"}},
    "mvn": {"fam": "build", "aka": "mvnw", "opts": {"-Dexec.executable": "shellpath"}},
    "gradle": {"fam": "build", "aka": "gradlew", "opts": {"-I": "file", "--init-script": "file"}},
    "make": {"fam": "build", "aka": "gmake bmake remake", "opts": {"--eval": "makefile", "-E": "makefile",
        "-f": "makefile_file", "--file": "makefile_file", "--makefile": "makefile_file"}, "valued": "CIjlWo",
        "lvalued": "--directory --include-dir --jobs --load-average --what-if --old-file",
        "assign": {"SHELL": "shellpath", ".SHELLFLAGS": "none"}, "manifest": "Makefile"},
    "cmake": {"fam": "build", "opts": {"-P": "file", "-C": "file"}, "sub": {"-E": {}}},
    "just": {"fam": "build", "manifest": "justfile", "sub": {"execute": {"rest": "shell"}}},
    "task": {"fam": "build", "aka": "go-task", "manifest": "Taskfile.yml"},
    "invoke": {"fam": "build", "aka": "inv", "manifest": "tasks.py"},
    "fab": {"fam": "build", "manifest": "fabfile.py"},
    "doit": {"fam": "build", "manifest": "dodo.py"},
    "gulp": {"fam": "build", "manifest": "gulpfile.js"},
    "grunt": {"fam": "build", "manifest": "Gruntfile.js"},
    "pytest": {"fam": "build", "aka": "py.test", "manifest": "conftest.py", "opts": {"-p": "none"}},
    "tox": {"fam": "build", "manifest": "tox.ini", "sub": {"exec": {"after": "--"}}},
    "nox": {"fam": "build", "manifest": "noxfile.py"},
    "gcc": {"fam": "build", "aka": "cc g++ c++ clang clang++", "opts": {"-wrapper": "gccwrapper", "-fplugin": "file",
        "-B": "dir"}},
    "ld": {"fam": "build", "opts": {"--plugin": "file"}},
    "latex": {"fam": "build", "aka": "pdflatex xelatex lualatex tex etex pdftex luatex xetex context lilypond",
        "rest": "tex", "flags": {"--shell-escape": "none", "-shell-escape": "none"}},
    "pic": {"fam": "build", "aka": "groff troff nroff", "flags": {"-U": "ask"}, "rest": "script1"},
    "pandoc": {"fam": "build", "opts": {"--lua-filter": "file:lua", "-L": "file:lua", "--filter": "file",
        "-F": "file"}},
    "puppet": {"fam": "config", "sub": {"apply": {"opts": {"-e": "code:puppet", "--execute": "code:puppet"},
        "rest": "script1"}}},
    "ansible": {"fam": "config", "opts": {"-a": "rshell", "--args": "rshell"}},
    "ansible-playbook": {"fam": "config", "rest": "script1"},
    "knife": {"fam": "config", "sub": {"exec": {"opts": {"-E": "code:ruby", "--exec": "code:ruby"}, "rest": "script1"},
        "ssh": {"rest": "rshell", "at": 1}}},
    "salt": {"fam": "config", "aka": "salt-call", "sub": {"cmd.run": {"rest": "rshell"}}},
    "facter": {"fam": "config", "opts": {"--custom-dir": "dir"}},
    "crontab": {"fam": "scheduler", "rest": "crontab", "valued": "u"},
    "at": {"fam": "scheduler", "aka": "batch", "opts": {"-f": "file:shell"}, "stdin": "shell", "valued": "qf",
        "flags": {"-l": "none", "-c": "none", "-r": "none", "-d": "none"}},
    "run-parts": {"fam": "scheduler", "rest": "dir", "lvalued": "--regex --arg -a --umask -u"},
    "service": {"fam": "scheduler", "rest": "service"},
    "systemctl": {"fam": "scheduler", "sub": {"edit": {}}},
    "launchctl": {"fam": "scheduler", "sub": {"submit": {"after": "--"}, "asuser": {"rest": "argv", "at": 1}}},
    "git": {"fam": "vcs", "opts": {"-c": "gitcfg", "--config-env": "ask", "--exec-path": "dir"},
        "lvalued": "-C --git-dir --work-tree --namespace --super-prefix", "sub": {
        "config": {"rest": "gitconfig"},
        "filter-branch": {"opts": {"--tree-filter": "shell", "--index-filter": "shell", "--msg-filter": "shell",
            "--env-filter": "shell", "--commit-filter": "shell", "--parent-filter": "shell",
            "--tag-name-filter": "shell"}},
        "rebase": {"opts": {"-x": "shell", "--exec": "shell"}},
        "bisect": {"sub": {"run": {"rest": "argv"}}},
        "submodule": {"sub": {"foreach": {"rest": "shell"}}},
        "difftool": {"opts": {"-x": "shell", "--extcmd": "shell", "-t": "none"}},
        "grep": {"opts": {"-O": "shell", "--open-files-in-pager": "shell"}},
        "clone": {"opts": {"-u": "shell", "--upload-pack": "shell", "-c": "gitcfg", "--config": "gitcfg",
            "--template": "dir"}, "rest": "url"},
        "fetch": {"opts": {"--upload-pack": "shell"}, "rest": "url"},
        "pull": {"opts": {"--upload-pack": "shell"}, "rest": "url"},
        "ls-remote": {"opts": {"--upload-pack": "shell"}, "rest": "url"},
        "push": {"opts": {"--receive-pack": "shell", "--exec": "shell"}, "rest": "url"},
        "archive": {"opts": {"--exec": "shell"}},
        "send-email": {"opts": {"--sendmail-cmd": "shell", "--to-cmd": "shell", "--cc-cmd": "shell",
            "--smtp-server": "shellpath"}},
        "instaweb": {"opts": {"--httpd": "shell", "-d": "shell", "--browser": "shell", "-b": "shell"}},
        "daemon": {"opts": {"--access-hook": "shell"}},
        "commit": {"manifest": ".git/hooks"}, "merge": {"manifest": ".git/hooks"},
            "checkout": {"manifest": ".git/hooks"},
        "am": {"manifest": ".git/hooks"}, "switch": {"manifest": ".git/hooks"}}},
    "hg": {"fam": "vcs", "opts": {"--config": "hgcfg"}},
    "svn": {"fam": "vcs", "opts": {"--editor-cmd": "shell", "--diff-cmd": "shell", "--diff3-cmd": "shell",
        "--config-option": "ask"}},
    "dmesg": {"fam": "pager"},
    "dstat": {"fam": "trace", "opts": {"--plugin": "file"}},
    "neofetch": {"fam": "desktop", "opts": {"--config": "file", "--ascii": "none"}},
    "gimp": {"fam": "desktop", "opts": {"-b": "code:python", "--batch": "code:python"}},
    "msgfilter": {"fam": "build", "rest": "argv", "valued": "io", "lvalued": "--input --output-file --directory"},
    "csvtool": {"fam": "build", "sub": {"call": {"rest": "shell1"}}},
    "exiftool": {"fam": "build", "opts": {"-if": "code:perl", "-p": "none"}},
    "zathura": {"fam": "desktop", "opts": {"-x": "shell"}},
    "w3m": {"fam": "pager", "aka": "lynx links elinks"},
    "stap": {"fam": "trace", "aka": "bpftrace", "opts": {"-e": "ask", "-c": "shell"}},
    "fzf": {"fam": "terminal", "aka": "sk skim", "opts": {"--preview": "shell", "--bind": "fzfbind",
        "--with-shell": "shellpath"}},
    "sqlmap": {"fam": "network", "opts": {"--eval": "code:python", "--os-cmd": "rshell", "--os-shell": "none"},
        "flags": {"--os-shell": "ask", "--os-pwn": "ask"}},
    "terraform": {"fam": "config", "aka": "tofu", "manifest": "main.tf"},
    "cowsay": {"fam": "desktop", "aka": "cowthink", "opts": {"-f": "extfile"}},
    "vipw": {"fam": "editor", "aka": "vigr visudo sudoedit crontab-e"},
    "psftp": {"fam": "network", "aka": "ncftp ginsh scanmem", "stdin": "escape"},
    "enable": {"fam": "persistence", "opts": {"-f": "file"}},
    "hash": {"fam": "persistence", "opts": {"-p": "extfile"}},
    "ngrok": {"fam": "tunnel", "aka": "cloudflared chisel bore frpc localtunnel lt sshuttle",
              "flags": {}, "rest": "tunnel"},
    "rcat": {"fam": "network", "aka": "pwncat pwncat-cs sbd cryptcat gs-netcat revsocks ztcp",
             "rest": "revshell"},
    "update-rc.d": {"fam": "scheduler", "aka": "chkconfig rc-update insserv", "rest": "svcenable"},
    "perlbug": {"fam": "editor", "opts": {"-e": "shell"}, "valued": "sbfFrcCSTdopt"},
    "genie": {"fam": "wrapper", "opts": {"-c": "shell"}},
    "cabal": {"fam": "build", "aka": "stack", "sub": {"exec": {"rest": "argv"}, "run": {"rest": "argv"}}},
    "byebug": {"fam": "debugger", "aka": "rdbg", "rest": "script1"},
    "rtorrent": {"fam": "network", "opts": {"-o": "rtorrentopt"}},
    "dotnet": {"fam": "build", "sub": {"tool": {"sub": {"run": {"rest": "argv"}}}, "exec": {"rest": "argv"}}},
    "mutt": {"fam": "network", "aka": "neomutt", "opts": {"-e": "escape"}},
    "enscript": {"fam": "build", "opts": {"-I": "shell", "--filter": "shell"}},
    "dmsetup": {"fam": "wrapper", "opts": {"--exec": "shell"}},
}

CODE_VARS: dict[str, str] = {
    # environment variables whose value some program runs (kind as above)
    "PAGER": "shell", "MANPAGER": "shell", "GIT_PAGER": "shell", "SYSTEMD_PAGER": "shell",
    "PSQL_PAGER": "shell", "BAT_PAGER": "shell", "DELTA_PAGER": "shell", "LESSOPEN": "shell",
    "LESSCLOSE": "shell", "EDITOR": "shell", "VISUAL": "shell", "GIT_EDITOR": "shell",
    "SVN_EDITOR": "shell", "SUDO_EDITOR": "shell", "FCEDIT": "shell", "GIT_SEQUENCE_EDITOR": "shell",
    "GIT_SSH_COMMAND": "shell", "GIT_SSH": "shellpath", "GIT_PROXY_COMMAND": "shellpath",
    "GIT_ASKPASS": "shellpath", "SSH_ASKPASS": "shellpath", "SUDO_ASKPASS": "shellpath",
    "GIT_EXTERNAL_DIFF": "shellpath", "RSYNC_RSH": "shell", "CVS_RSH": "shellpath",
    "PROMPT_COMMAND": "shell", "BASH_ENV": "extfile", "ENV": "extfile", "BROWSER": "shell",
    "PS0": "prompt", "PS1": "prompt", "PS2": "prompt", "PS4": "prompt", "LD_PRELOAD": "extfile",
    "LD_AUDIT": "extfile", "PYTHONSTARTUP": "extfile", "PERL5DB": "code:perl", "NODE_OPTIONS": "nodeopts",
    "GIT_CONFIG_PARAMETERS": "ask", "GIT_EXEC_PATH": "dir", "GIT_TEMPLATE_DIR": "dir",
    "TAR_OPTIONS": "taropts", "SHELL": "shellpath", "TERMINAL": "shellpath", "DIFFPROG": "shell",
    # build tools and package managers: the program they run in place of the compiler or the script shell
    "RUSTC_WRAPPER": "shellpath", "RUSTC_WORKSPACE_WRAPPER": "shellpath", "CARGO_BUILD_RUSTC_WRAPPER": "shellpath",
    "RUSTC": "shellpath", "RUSTDOC": "shellpath",
    "npm_config_script_shell": "shellpath", "NPM_CONFIG_SCRIPT_SHELL": "shellpath", "npm_config_shell": "shellpath",
    "YARN_SHELL": "shellpath", "PERL5OPT": "ask",
    # where a program loads its code or configuration from (loadpath: asks for an entry outside the workspace
    # and the system's own folders)
    "GIT_CONFIG_GLOBAL": "loadpath", "GIT_CONFIG_SYSTEM": "loadpath", "PYTHONPATH": "loadpath",
    "PERL5LIB": "loadpath", "PERLLIB": "loadpath", "RUBYLIB": "loadpath", "NODE_PATH": "loadpath",
    "LD_LIBRARY_PATH": "loadpath",
}

SHELLS: frozenset[str] = frozenset(
    "sh bash dash zsh ksh mksh ash rbash fish csh tcsh yash posh busybox pwsh".split())

GIT_EXEC_KEYS = (r"core\.(?:pager|editor|sshcommand|fsmonitor|askpass|gitproxy)|alias\..+|"
                 r"diff\.external|diff\..+\.(?:textconv|command)|filter\..+\.(?:clean|smudge|process)|"
                 r"merge\..+\.driver|credential(?:\..+)?\.helper|gpg(?:\..+)?\.program|"
                 r"sequence\.editor|pager\..+|uploadpack\.packobjectshook|sendemail\..+cmd|"
                 r"interactive\.difffilter|(?:diff|merge)tool\..+\.cmd|web\.browser|browser\..+\.cmd|"
                 r"man\..+\.cmd|instaweb\.httpd|remote\..+\.(?:uploadpack|receivepack|proxy)|"
                 r"ssh\.variant|core\.hookspath|protocol\..*allow|include\.path|includeif\..+")
APT_EXEC_KEYS = (r"(?:apt::update::(?:pre|post)-invoke(?:-success)?|dpkg::(?:pre|post)-invoke|"
                 r"dpkg::pre-install-pkgs|dpkg::tools::options::.*|apt::key::gpgvcommand|"
                 r"dir::bin::.+|dpkg::path|aptlistbugs|apt::periodic::.*script|.*invoke.*)")
SSH_EXEC_KEYS = r"(?:proxycommand|localcommand|knownhostscommand|permitlocalcommand|match\s+exec)"
HG_EXEC_KEYS = r"(?:hooks\..+|alias\..+|ui\.(?:editor|ssh|merge)|pager\.pager|merge-tools\..+)"

DATA_PROGRAMS: frozenset[str] = frozenset("""
echo printf grep egrep fgrep rg ag ack git-grep logger wall write notify-send zenity cowsay figlet
banner say espeak jq yq test [ [[ expr : true false read export declare typeset local readonly
man apropos whatis tldr help type which whereis hash compgen history printenv set unset shopt
cat head tail wc sort uniq cut tr column fold fmt nl rev tac diff cmp comm less more bat mkdir touch
ls stat file basename dirname realpath readlink du df sleep date id whoami uname hostname pwd
""".split())
"""Programs whose arguments are data (not scanned by the generic payload pass)."""
DATA_OPTIONS: dict[str, tuple[str, ...]] = {
    "git": ("-m", "--message", "-F", "--file", "--grep", "-S", "-G", "--format", "--pretty",
            "--author", "--body", "--title", "--notes"),
    "gh": ("--body", "-b", "--title", "-t", "--notes", "-n", "--message", "-m"),
    "hg": ("-m", "--message"), "svn": ("-m", "--message"), "curl": ("-d", "--data", "-H"),
}
"""Per program, options whose value is text (a commit message, a body)."""

DOWNLOADERS: dict[str, str] = {
    # program -> how it names the file it fetches
    "curl": "opt:-o,--output|remote-name", "wget": "opt:-O,--output-document|url-name",
    "fetch": "opt:-o", "aria2c": "opt:-o,--out|url-name", "axel": "opt:-o,--output|url-name",
    "lwp-download": "pos:1|url-name", "http": "opt:-o,--output", "https": "opt:-o,--output",
    "xh": "opt:-o,--output", "curlie": "opt:-o", "tftp": "tftp", "ftp": "opt:-o|url-name",
    "scp": "remote-copy", "rsync": "remote-copy", "sftp": "remote-copy", "smbget": "opt:-o|url-name",
    "nc": "redirect", "ncat": "redirect", "netcat": "redirect", "socat": "redirect",
    "openssl": "redirect", "telnet": "redirect", "ssh": "redirect", "busybox": "redirect",
    "lwp-request": "redirect", "GET": "redirect", "git": "none", "s3cmd": "pos:2",
    "aws": "pos:3", "gsutil": "pos:2", "rclone": "pos:2", "powershell": "none",
    "iwr": "opt:-OutFile,-o", "irm": "opt:-OutFile,-o", "Invoke-WebRequest": "opt:-OutFile,-o",
    "Invoke-RestMethod": "opt:-OutFile,-o", "curl.exe": "opt:-o", "certutil": "pos:2",
}
"""Programs that fetch content from another host, and where the result lands."""

MANIFESTS: dict[str, str] = {
    # file a program runs code from -> how to read the code in it
    "package.json": "json-scripts", "composer.json": "json-scripts", "setup.py": "code:python",
    "conftest.py": "code:python", "Makefile": "makefile", "makefile": "makefile",
    "GNUmakefile": "makefile", "justfile": "justfile", "build.rs": "code:rust",
    "tox.ini": "ini-commands", ".git/hooks": "shell", "Taskfile.yml": "yaml-cmds", "tasks.py": "code:python",
    "fabfile.py": "code:python", "noxfile.py": "code:python", "dodo.py": "code:python", "Rakefile": "code:ruby",
    "gulpfile.js": "code:js", "Gruntfile.js": "code:js",
}
"""Files that a later program in the same line runs code from (lifecycle scripts)."""
MANIFEST_NAMES: dict[str, tuple[str, ...]] = {
    "Makefile": ("Makefile", "makefile", "GNUmakefile"), "justfile": ("justfile", "Justfile", ".justfile"),
    "Taskfile.yml": ("Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml"),
    "Rakefile": ("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb"),
    "gulpfile.js": ("gulpfile.js", "gulpfile.mjs", "gulpfile.cjs", "gulpfile.ts"),
    "Gruntfile.js": ("Gruntfile.js", "gruntfile.js", "Gruntfile.coffee"),
}
"""Other names a program reads the same manifest under."""
# fmt: on
