"""The verified times of a sweep CSV (bench/sweep.sh's format), shared by
bench/default_config.py and bench/tune_prior.py."""
import csv
import sys
from collections import defaultdict

SWEEP = "bench/results/2026-11-24-h100-suite.csv"


def load():
    """{(benchmark, input): {(variant, config): ms}} of the verified cdp runs of
    the T/C/A variants, from the CSV named on the command line (else SWEEP)."""
    path = sys.argv[1] if len(sys.argv) > 1 else SWEEP
    times = defaultdict(dict)
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["impl"] != "cdp" or r["verified"] != "yes" or r["variant"] in ("orig", "CDPff"):
                continue
            times[(r["benchmark"], r["input"])][(r["variant"], r["config"])] = float(r["time_ms"])
    return times
