"""Rules for interpreter code that cannot be judged statically (see `code_python`, `code_script`).

Literal commands and paths in interpreter code are judged by the shell rules
themselves (the call is rewritten into the equivalent shell line); these two
rules cover what is left: code that does not parse, and a command, program or
path computed at run time.
"""

from __future__ import annotations

from tether.guardian.rules import static_rule

static_rule("CODE-001", "download-execute", "ask",
            "interpreter code that cannot be parsed, so what it runs is unknown",
            "python3 -c 'import os; os.system('")
static_rule("CODE-002", "download-execute", "ask",
            "interpreter code runs a command, program or code computed at run time",
            "python3 -c 'import os,sys; os.system(sys.argv[1])' x")
