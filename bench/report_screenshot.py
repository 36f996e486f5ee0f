"""Screenshot of the cascade-repair example's report, for people to look at (docs/img/).

Runs examples/cascade-repair.yaml on the real engine with the scripted model
in a fresh home, writes `tether report`, and has headless Chromium (Debian's
`chromium`; `bash scripts/bootstrap.sh --dev`) take a PNG of it. Needs the
Docker engine and the sandbox image (`tether sandbox build`).

    python bench/report_screenshot.py [--out docs/img/cascade-repair-report.png] [--height 2200]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tether(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "tether", *args, "--home", str(home)],
                          capture_output=True, text=True, env=env, cwd=ROOT, check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "cascade-repair-report.png")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=2200)
    args = ap.parse_args()
    exe = shutil.which("chromium")
    if exe is None:
        sys.exit(
            "error: chromium is not installed; run `bash scripts/bootstrap.sh --dev` (or apt-get install -y chromium)"
        )
    with tempfile.TemporaryDirectory(prefix="tether-shot-") as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        ws.mkdir()
        run = tether(
            "run",
            "--model",
            f"scripted:{ROOT / 'examples' / 'cascade-repair.yaml'}",
            "--workspace",
            str(ws),
            "--json",
            home=home,
        )
        if not run.stdout.strip():
            sys.exit(f"error: the run did not start: {run.stderr.strip().splitlines()[-1:]}")
        run_id = json.loads(run.stdout)["run_id"]
        page = Path(tmp) / "report.html"
        rep = tether("report", run_id, "-o", str(page), home=home)
        if rep.returncode:
            sys.exit(f"error: tether report failed: {rep.stderr.strip()}")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        shot = subprocess.run(
            [
                exe,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={Path(tmp) / 'chromium'}",
                f"--window-size={args.width},{args.height}",
                f"--screenshot={args.out.resolve()}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if shot.returncode or not args.out.is_file():
            sys.exit(f"error: chromium failed: {shot.stderr.strip()[-500:]}")
    print(
        f"run {run_id} ({json.loads(run.stdout)['status']}); report screenshot: {args.out} "
        f"({args.out.stat().st_size} bytes)"
    )


if __name__ == "__main__":
    main()
