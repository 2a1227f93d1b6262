#!/usr/bin/env python3
"""The prior of `dpopt tune`'s search (src/tune/prior.csv), from a sweep.

    python3 bench/tune_prior.py [SWEEP.csv] > src/tune/prior.csv
    (default SWEEP: bench/results/2026-11-24-h100-suite.csv)

One row per input of the sweep (`benchmark/input`), one column per
configuration of the tuner's space that the sweep measured (granularity
none/warp/block/mb8/grid, threshold 1/32/128/512, factor 1/8, named as the
tuner names points: `grid-t32-c8`): ln(time / the input's best time), three
decimals; empty where the sweep has no verified run. The search
(src/tune/search.rs) predicts a new program's times from the rows whose
times match what it has measured so far. tests/tune_search.rs checks that the
committed table is this script's output for the committed sweep.
"""
import math

from sweep_times import load

GRANULARITY = {"": "none", "A": "warp", "Ab": "block", "Am": "mb8", "Ag": "grid"}


def key(variant, config):
    g = GRANULARITY[variant.lstrip("TC")]
    t, rest = config[1:].split("c", 1)
    return f"{g}-t{t}-c{rest.removesuffix('g8')}"


def main():
    times = {
        f"{bench}/{name}": {key(v, c): ms for (v, c), ms in points.items()}
        for (bench, name), points in load().items()
    }
    order = {"none": 0, "warp": 1, "block": 2, "mb8": 3, "grid": 4}
    configs = sorted(
        set().union(*times.values()),
        key=lambda k: (order[k.split("-")[0]], int(k.split("-t")[1].split("-")[0]), int(k.split("-c")[1])),
    )
    print(",".join(["input"] + configs))
    for name in sorted(times):
        best = min(times[name].values())
        cells = [f"{math.log(times[name][c] / best):.3f}" if c in times[name] else "" for c in configs]
        print(",".join([name] + cells))


if __name__ == "__main__":
    main()
