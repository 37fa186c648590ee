"""A stand-in for the agent process in test_sandbox: confines one command, runs it through run_captured, prints
its output and exits with its status. Its own environment (which the test marks) is not passed to the command."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mini_agent.processes.run import BoundedOutput, run_launched
from mini_agent.safety.sandbox import Confinement, confine


def main() -> int:
    spec = json.loads(sys.argv[1])
    root = Path(spec["root"])
    confinement = Confinement(spec["level"], root, home=Path(spec["home"]), shared_temp_dirs=())
    launch = confine(spec["argv"], {"PATH": os.environ["PATH"]}, root, confinement)
    output = BoundedOutput(100_000, 100_000)
    try:
        finished = run_launched(launch, root, 120, output)
    finally:
        launch.cleanup()
    sys.stdout.write(output.head + output.tail)
    return finished.returncode if finished.returncode >= 0 else 128 - finished.returncode


if __name__ == "__main__":
    sys.exit(main())
