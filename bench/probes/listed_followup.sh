#!/usr/bin/env bash
# What session 24's last GPU call did not reach (it ran out of device time): every aggregated variant of the
# corpus programs and fixtures (whose launches now fall back to the child's serial version without
# `threshold`), then temporal-hpc's Mandelbrot pack (mandelbrot-dyn and auto_test with `consldt(warp)` at
# all three launches differed at 2,048 x 2,048 before their fill and per-pixel launches got that fallback).
#   here:   bash bench/gpu_check.sh prepare && python3 bench/probes/thirdparty/position_pack.py --out gpu-tp-pos
#   on the GPU (carry gpu-build and gpu-tp-pos), from the repo root:
#           OUT=... bash bench/probes/listed_followup.sh
set -uo pipefail
out=${OUT:-gpu-out}; mkdir -p "$out"
bash bench/gpu_check.sh run '^[a-z_0-9]+ (Aw|Ab|Am|Ag|TCAw|TCAb|TCAm|TCAg) corpus|^[a-z_0-9]+ dp[AGBM] ' > "$out/gpu_check.txt" 2>&1
grep -E "runs,|VERIFICATION" -A12 "$out/gpu_check.txt" | head -30
(cd gpu-tp-pos && OUT_DIR="$out/pos" DEADLINE=200 bash gpu_run.sh > "$out/pos_run.txt" 2>&1)
grep -E "DIFF|SAME:|TIMEOUT:|BUILD_FAIL:" "$out/pos/summary.txt" | cut -c1-200
