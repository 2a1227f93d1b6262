#!/bin/bash
# Reruns steps 1-3 on this machine (no GPU needed; nvcc runs one at a time): about 40 minutes on 2 cores.
set -u
cd "$(dirname "$0")"; export KLAP=$(pwd)
python3 _json/decode.py > /dev/null           # 1. sources from the fetched JSON strings (already done; idempotent)
scripts/build_verbatim.sh                      # 2a. verbatim build (records what fails) -> build/verbatim/<B>/*.log
scripts/setup_work.sh                          # 2b. work copies with stand-ins and ports -> work/<B>
scripts/build_originals.sh                     # 2c. originals -> build/orig/<B>.orig
scripts/check_nopragma.sh                      # 3a. no pragma -> byte-identical -> build/nopragma.txt
rm -f results.tsv; python3 scripts/run_variants.py   # 3b. pragma variants -> variants/, results.tsv
