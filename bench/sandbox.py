"""Per-command latency of DockerSandbox.exec against bare docker-py and the docker CLI.

One run, one image, one command (`true`), one container for the exec numbers:
the three ways are measured in interleaved rounds so engine drift hits them
alike. Also times a sandbox start (create + start + probe) and its removal,
and the persistent executor's overhead: DockerSandbox.exec with
`executor = "persistent"` against spawning `bash -c true` inside the same
container (timed there with $EPOCHREALTIME), 200 each, interleaved.

    .venv/bin/python bench/sandbox.py [--image tether-sandbox:tiny] [-n 60] [--starts 5]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# run as a script, this file's folder comes first on sys.path and `sandbox` would be this file
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from tether.sandbox.config import DockerSandboxConfig  # noqa: E402
from tether.sandbox.docker import DockerSandbox  # noqa: E402
from tether.sandbox.engine import connect  # noqa: E402
from tether.sandbox.images import TINY_TAG, build_image  # noqa: E402


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default=TINY_TAG)
    parser.add_argument("-n", type=int, default=60, help="commands per method")
    parser.add_argument("--starts", type=int, default=5, help="sandbox starts to time")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)

    client = connect()
    if args.image == TINY_TAG:
        build_image(client, "tiny")
    config = DockerSandboxConfig(image=args.image)
    docker_cli = shutil.which("docker")
    samples: dict[str, list[float]] = {"DockerSandbox.exec": [], "docker-py exec_run": []}
    guarded: list[float] = []
    inside: list[float] = []
    if docker_cli:
        samples["docker exec (CLI)"] = []
    starts: list[float] = []
    closes: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp:
        ws = Path(tmp)
        for _ in range(args.starts):
            sb = DockerSandbox(ws, config, client=client)
            starts.append(timed(sb.start))
            closes.append(timed(sb.close))
        with DockerSandbox(ws, config, client=client) as sb:
            container = client.containers.get(sb.container_id)
            for _ in range(3):  # warm up every path
                sb.exec("true")
                container.exec_run("true")
            cli = [docker_cli or "docker", "exec", container.id, "true"]
            for _ in range(args.n):
                samples["DockerSandbox.exec"].append(timed(lambda: sb.exec("true")))
                samples["docker-py exec_run"].append(timed(lambda: container.exec_run("true")))
                if docker_cli:
                    samples["docker exec (CLI)"].append(timed(lambda: subprocess.run(cli, check=True)))

        persistent = config.model_copy(update={"executor": "persistent"})
        with DockerSandbox(ws, persistent, client=client) as sb:
            # spawning the same command in the container: a bash loop timing `bash -c true` itself;
            # 20 rounds of 10 each way, interleaved
            loop = ('for i in $(seq 10); do s=${EPOCHREALTIME/./}; bash -c true; e=${EPOCHREALTIME/./}; '
                    'echo $((e - s)); done')
            for _ in range(20):
                inside += [int(x) / 1e6 for x in sb.exec(loop, timeout_s=120).output.split()]
                for _ in range(10):
                    guarded.append(timed(lambda: sb.exec("true")))

    print(f"image {args.image}, command `true`, n={args.n} per method, interleaved")
    print(f"{'method':<24} {'median ms':>10} {'p90 ms':>8}")
    for name, xs in samples.items():
        p90 = statistics.quantiles(xs, n=10)[-1]
        print(f"{name:<24} {statistics.median(xs) * 1e3:>10.1f} {p90 * 1e3:>8.1f}")
    print(f"{'sandbox start':<24} {statistics.median(starts) * 1e3:>10.1f}   (create+start+probe, n={args.starts})")
    print(f"{'sandbox close':<24} {statistics.median(closes) * 1e3:>10.1f}   (force remove)")
    over = (statistics.median(guarded) - statistics.median(inside)) * 1e3
    print(f"persistent executor: DockerSandbox.exec {statistics.median(guarded) * 1e3:.1f} ms, `bash -c true` spawned "
          f"in the container {statistics.median(inside) * 1e3:.1f} ms (medians of 200): overhead {over:.1f} ms "
          "(target <= 5)")
    ratio = statistics.median(samples["DockerSandbox.exec"]) / statistics.median(samples["docker-py exec_run"])
    print(f"ratio DockerSandbox.exec / exec_run = {ratio:.3f} (target <= 1.15)")


if __name__ == "__main__":
    main()
