"""Reading a report or a defaults file: every way it can be unusable (missing, not JSON, the other
kind of file, a newer schema, a row or bucket without a field the scripts read) is one ReportError
whose text names the file and the fault, so a script prints it and exits instead of a traceback."""
import gzip
import json
import os
import sys

from .schema import SCHEMA_VERSION

# The row fields every reader keys on; a script that reads more passes its own tuple.
ROW_KEYS = ("kernel", "problem", "partitions", "status", "time")
# The fields bucket_for matches on, and the split it chose.
BUCKET_KEYS = ("dtype", "depth", "group", "kv", "mask", "work_units", "min_keys", "max_keys",
               "partitions")
DEFAULTS_FILE = "defaults file of `mha-tune select --out-json`"
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the scripts/ folder


class ReportError(Exception):
    """An input a script cannot use; str() is the message to print."""


def read_json(path, what):
    """The parsed JSON of `path`, gzipped when it ends in .gz (large reports travel so);
    `what` names the input in the error ("the sweep report")."""
    try:
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            return json.load(f)
    except OSError as e:
        raise ReportError(f"{path}: cannot read the {what}: {e.strerror or e}") from None  # BadGzipFile has no strerror
    except ValueError as e:  # JSONDecodeError, and text that is not UTF-8
        raise ReportError(f"{path}: the {what} is not valid JSON: {e}") from None


def is_defaults(doc):
    return isinstance(doc, dict) and isinstance(doc.get("buckets"), list) and "rows" not in doc


def is_report(doc):
    return isinstance(doc, dict) and isinstance(doc.get("rows"), list)


def check_report(doc, path, what="report", row_keys=ROW_KEYS):
    """`doc` if it is a report (an object with "metadata" and "rows") whose rows have `row_keys`."""
    if is_defaults(doc):  # the commonest mix-up: the two files of a run given in each other's place
        raise ReportError(f"{path}: this is a {DEFAULTS_FILE}, not a {what} (arguments swapped?)")
    if not is_report(doc) or not isinstance(doc.get("metadata"), dict):
        raise ReportError(f"{path}: the {what} needs a 'rows' list and a 'metadata' object "
                          "(is it an mha-tune report?)")
    # Hand-written and older files may omit the version; a newer one changed what fields mean.
    version = doc.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise ReportError(f"{path}: the {what} has schema_version {json.dumps(version)}; "
                          f"these scripts read version {SCHEMA_VERSION}")
    for i, row in enumerate(doc["rows"]):
        if not isinstance(row, dict):
            raise ReportError(f"{path}: rows[{i}]: not an object")
        for key in row_keys:
            if key not in row:
                raise ReportError(f"{path}: rows[{i}].{key}: missing")
        if "problem" in row_keys and not (isinstance(row["problem"], dict)
                                          and "name" in row["problem"]):
            # Rows join on the problem's name in every script.
            raise ReportError(f"{path}: rows[{i}].problem.name: missing")
    return doc


def check_defaults(doc, path, what="defaults file"):
    """`doc` if it is a defaults file whose buckets have BUCKET_KEYS."""
    if is_report(doc):
        raise ReportError(f"{path}: this is a report, not a {DEFAULTS_FILE} (arguments swapped?)")
    if not is_defaults(doc):
        raise ReportError(f"{path}: the {what} has no 'buckets' list "
                          "(is it what `mha-tune select --out-json` writes?)")
    for i, bucket in enumerate(doc["buckets"]):
        if not isinstance(bucket, dict):
            raise ReportError(f"{path}: buckets[{i}]: not an object")
        for key in BUCKET_KEYS:
            if key not in bucket:
                raise ReportError(f"{path}: buckets[{i}].{key}: missing")
    return doc


def load_report(path, what="report", row_keys=ROW_KEYS):
    return check_report(read_json(path, what), path, what, row_keys)


def load_defaults(path, what="defaults file"):
    return check_defaults(read_json(path, what), path, what)


def load_report_argument(argv, argument="REPORT.json[.gz]"):
    """The report of a script that takes exactly one (argv as sys.argv): loaded; otherwise the
    usage or the file's fault on stderr, under the script's name, and exit 2."""
    script = os.path.relpath(os.path.abspath(argv[0]), SCRIPTS)  # e.g. peers/ragged_vs_uniform.py
    if script.startswith(os.pardir):
        script = os.path.basename(argv[0])
    if len(argv) != 2:
        print(f"usage: scripts/{script} {argument}", file=sys.stderr)
        sys.exit(2)
    try:
        return load_report(argv[1])
    except ReportError as e:
        print(f"{script}: {e}", file=sys.stderr)
        sys.exit(2)
