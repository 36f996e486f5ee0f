"""The guardian as a hook of other agents: one adapter per agent's hook protocol.

Parts: `base` (the plain data every adapter shares: `Call`, `Answer`,
`PayloadError`, the reason text and safe alternatives), one module per agent
(`claude_code`, `codex`, `gemini`, `cursor`, `opencode`: what its payload holds
and how it wants an answer; data and small functions), `registry` (agent name
-> adapter, imported on use), `hook` (stdin bytes -> the guardian's verdict ->
the agent's answer, failing closed), `client` and `server` (the warm guardian
the per-call client asks), `learn` (asks answered in the agent teach the trust
ledger; shadow records), `audit` (`tether audit --agents`), `settings` and
`jsonsplice` (install, uninstall and status of the hook entry in the agent's
own settings file, edited as text), `doctor` (the canary check) and `log` (the
bounded JSON-lines log of host-side verdicts). Nothing here imports pydantic, typer or rich: the hook
is started once per agent command (see docs/hooks.md).
"""
