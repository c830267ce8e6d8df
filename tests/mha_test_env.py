"""Where the Python tests find the repository and the built mha-tune: one place instead of a
copy per test. ctest sets MHA_BUILD_DIR; run by hand, the tests use scripts/test.sh's build-ci/."""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = os.path.abspath(os.environ.get("MHA_BUILD_DIR", os.path.join(REPO, "build-ci")))
MHA_TUNE = os.path.join(BUILD_DIR, "mha-tune")


def cmake_cached(name, build_dir=BUILD_DIR):
    """NAME's value in BUILD_DIR's CMakeCache.txt ('' when absent)."""
    with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(rf"^{re.escape(name)}(:[A-Z]+)?=(.*)$", line.rstrip("\n"))
            if m:
                return m.group(2)
    return ""


def has_mha_tune():
    return os.access(MHA_TUNE, os.X_OK)


def run_on_report(script, rows, *args, gz=False):
    """Runs a report script (scripts/*.py REPORT.json[.gz] ...) on a temporary report holding
    `rows`, gzip-compressed with gz, and returns the finished process (text output captured)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json" + (".gz" if gz else ""))
        with (gzip.open(path, "wt") if gz else open(path, "w")) as f:
            json.dump({"metadata": {}, "rows": rows}, f)
        return subprocess.run([sys.executable, script, path, *args], capture_output=True, text=True)


def run_on_missing_report(script):
    """The script given a report path that does not exist (expected: exit 2, naming the file)."""
    return subprocess.run([sys.executable, script, os.path.join(REPO, "missing.json")],
                          capture_output=True, text=True)
