#!/bin/bash
# Recreate port/ (apps as fetched + port.patch: the non-CDP CUDA 13 fixes) and
# port_nosync/ (pagerank of port/ + port_nosync.patch: the CDP1 sync removed by hand).
set -e
cd "$(dirname "$0")/.."
rm -rf port port_nosync
mkdir port && cp -r apps common datasets port/
(cd port && patch -s -p0 < ../port.patch)
mkdir -p port_nosync/apps && cp -r port/common port/datasets port_nosync/ && cp -r port/apps/pagerank port_nosync/apps/
patch -s -p0 port_nosync/apps/pagerank/src/pagerank_kernel.cu < port_nosync.patch
echo "port/ and port_nosync/ recreated"
