"""Cryptocurrency miners: a workspace's CPU and GPU put to someone else's use.

Parts:
    on_invocation: RES-003 for a known miner program (by name, any path), a
        stratum pool URL in any argument of any program, a miner's algorithm
        option with a pool and a wallet (`-a randomx -o host:port -u W`, a miner
        renamed), and a miner image given to a container engine.
"""

from __future__ import annotations

import re

from tether.guardian.rules import Inv

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module
if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser

MINERS = frozenset({
    "xmrig", "xmrig-cuda", "xmrig-proxy", "xmr-stak", "xmr-stak-rx", "cpuminer", "cpuminer-opt", "cpuminer-multi",
    "minerd", "t-rex", "lolminer", "nbminer", "gminer", "miner", "ethminer", "phoenixminer", "teamredminer",
    "srbminer-multi", "srbminer", "ccminer", "bfgminer", "cgminer", "nanominer", "wildrig-multi", "bzminer",
    "rigel", "onezerominer", "xmrminer", "nheqminer", "ewbf-miner", "claymore", "excavator", "kawpowminer",
})
"""Programs whose only job is mining (names lower-cased; `miner` is gminer's binary)."""
_STRATUM = re.compile(r"stratum[0-9]?\+(?:tcp|ssl|tls|ws|wss)://|\bstratum://", re.I)
_ALGOS = re.compile(r"^(?:rx/\w+|randomx|cryptonight\S*|cn/\S+|kawpow|ethash|etchash|yescrypt\S*|"
                    r"autolykos2?|kheavyhash|octopus|equihash\S*|x16r\S*|ghostrider|argon2\S*|scrypt|sha256d)$", re.I)
_ALGO_OPTS = ("-a", "--algo", "--algorithm", "--coin")
_POOL_OPTS = ("-o", "--url", "--pool", "--server", "-P")
_WALLET_OPTS = ("-u", "--user", "--wallet", "-O", "--userpass")
_IMAGE = re.compile(r"(?:^|/)(?:" + "|".join(sorted(re.escape(m) for m in MINERS - {"miner"})) +
                    r")(?:[-_]?\w+)?(?::[\w.-]+)?$", re.I)
_ENGINES = frozenset({"docker", "podman", "nerdctl", "kubectl", "ctr", "crictl", "finch", "lima", "oc"})


def _opt(args: list[str], names: tuple[str, ...]) -> str | None:
    for i, a in enumerate(args):
        if a in names and i + 1 < len(args):
            return args[i + 1]
        for n in names:
            if n.startswith("--") and a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def on_invocation(an: Analyser, inv: Inv) -> None:
    """RES-003 for a miner, a pool URL, a renamed miner's options or a miner image."""
    name = inv.argv[0].rsplit("/", 1)[-1].lower() if inv.argv else ""
    if name in MINERS or inv.prog.lower() in MINERS:
        an._hit("RES-003", inv.prog, f"{name} is a cryptocurrency miner")
        return
    pool = next((a for a in inv.args if _STRATUM.search(a)), None)
    if pool:
        an._hit("RES-003", inv.prog, f"mining pool {pool[:60]}")
        return
    algo = _opt(inv.args, _ALGO_OPTS)
    if algo and _ALGOS.match(algo) and _opt(inv.args, _POOL_OPTS) and _opt(inv.args, _WALLET_OPTS):
        an._hit("RES-003", inv.prog, f"mining options: {algo} with a pool and a wallet")
        return
    if inv.prog in _ENGINES:
        image = next((a for a in inv.positional if _IMAGE.search(a)), None)
        if image:
            an._hit("RES-003", inv.prog, f"miner image {image[:60]}")
