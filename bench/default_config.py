#!/usr/bin/env python3
"""The default configuration of a bare `#pragma dp`, from the committed sweep.

    python3 bench/default_config.py [SWEEP.csv]   (default: bench/results/2026-11-24-h100-suite.csv)

Per input, each configuration's speed is the sweep's best time over its time
(1: it is the best; verified cdp runs of the T/C/A variants only). A fixed
configuration scores the geometric mean of that over the inputs. The default
is a tiny cost model from what dpopt knows statically: whether the site's
child is recursive (it launches itself: the trees). Per class, the
configuration with the best geometric mean within the class; the model's
score is the geometric mean over all inputs of each input's class choice.
Prints every fixed configuration's score (the best ten), today's fixed
configuration (t128 c8 multiblock 8), each class's ranking and the model's
score, which must beat today's and be at least the best fixed one's.
"""
import math
import sys

from sweep_times import load

RECURSIVE = {"tree_heights", "tree_descendants"}  # children that launch themselves
TODAY = ("TCAm", "t128c8g8")


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main():
    times = load()
    inputs = sorted(times)
    best = {i: min(times[i].values()) for i in inputs}
    everywhere = set.intersection(*(set(times[i]) for i in inputs))

    def score(config, among):
        return geomean([best[i] / times[i][config] for i in among])

    fixed = sorted(((score(c, inputs), c) for c in everywhere), reverse=True)
    print(f"{len(inputs)} inputs, {len(everywhere)} configurations measured on all of them")
    print("best fixed configurations (speed relative to each input's best, geometric mean):")
    for s, c in fixed[:10]:
        print(f"  {s:.3f}  {c[0]} {c[1]}")
    today = score(TODAY, inputs)
    print(f"today's default {TODAY[0]} {TODAY[1]}: {today:.3f}")
    model = {}
    for name, member in (("recursive", True), ("not recursive", False)):
        among = [i for i in inputs if (i[0] in RECURSIVE) == member]
        ranked = sorted(((score(c, among), c) for c in everywhere), reverse=True)
        model[member] = ranked[0][1]
        print(f"class {name} ({len(among)} inputs): " + ", ".join(f"{c[0]} {c[1]} {s:.3f}" for s, c in ranked[:4]))
    chosen = geomean([best[i] / times[i][model[i[0] in RECURSIVE]] for i in inputs])
    print(f"model: recursive -> {model[True][0]} {model[True][1]}, otherwise -> {model[False][0]} {model[False][1]}: {chosen:.3f}")
    ok = chosen > today and chosen >= fixed[0][0]
    print("the model beats today's default and matches the best fixed configuration" if ok else "the model does NOT meet the target")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
