"""Reading mha-tune's JSON reports and `mha-tune select --out-json` defaults files, once, for the
scripts (plot_report.py, peers/side_by_side.py, peers/peers.py --resume). Standard library only, so
that a script that needs no GPU and no plotting library can still read a report.

  files:  read_json, load_report, load_defaults (and check_* for a document already parsed),
          load_report_argument (a one-report script's argv);
          every unusable input raises ReportError, whose text names the file and what is wrong.
  schema: what a row means: split_label, is_ragged, is_timed, best_by_problem, bucket_for,
          ratios_by_kernel (an A/B's per-kernel movement), geomean.
"""
from .files import (BUCKET_KEYS, ROW_KEYS, ReportError, check_defaults, check_report,  # noqa: F401
                    load_defaults, load_report, load_report_argument, read_json)
from .schema import (CLUSTER_SPLIT_BASE, SCHEMA_VERSION, best_by_problem, bucket_for,  # noqa: F401
                     geomean, is_ragged, is_timed, ratios_by_kernel, split_label,
                     writes_no_partials)
