#!/bin/bash
# pack.sh -- here (no GPU): after matrix.py, pack what the GPU run needs into
# gpu-showme/ at the repository root (ignored; send it with the run's carry):
# the ported sources (port/, port_nosync/), the datasets (data_test.gr, and two
# generated DIMACS9 graphs), and, per variant whose dpopt output compiled and
# linked here (outcome ok), only that output (the app's kernel file).
#
#     SHOWME=/tmp/showme bash bench/probes/showme/pack.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
SHOWME=${SHOWME:-/tmp/showme}
P=gpu-showme
rm -rf "$P" && mkdir -p "$P/variants" "$P/datasets"
cp -r "$SHOWME/port" "$SHOWME/port_nosync" "$P/"
cp "$SHOWME/datasets/data_test.gr" "$P/datasets/"
cp bench/probes/showme/compare.py bench/probes/showme/gpu_run.sh "$P/"
# hubs: node 1 linked to all, hubs 100, 200, ... linked to their next 199 nodes (3,000 nodes)
awk 'BEGIN{ n=3000;
     for (i=2;i<=n;i++) { w=(i*7)%1000+1; print "a 1 " i " " w; print "a " i " 1 " w }
     for (h=100;h<n;h+=100) for (j=h+1;j<h+200 && j<=n;j++) { w=(h*13+j)%1000+1; print "a " h " " j " " w; print "a " j " " h " " w } }' > "$P/arcs"
{ echo "c hubs: node 1 linked to all, hubs 100,200,.. linked to their next 199 nodes"
  echo "p sp 3000 $(wc -l < "$P/arcs")"; cat "$P/arcs"; } > "$P/datasets/hubs.gr"
# powerlaw: 20,000 nodes, node v linked to about 20000/(v+1)^0.8 random others, both ways (fixed seed)
awk 'BEGIN{ n=20000; srand(7);
     for (v=1;v<=n;v++) { d=int(20000/(v^0.8)); if (d<1) d=1; if (d>4000) d=4000;
       for (k=0;k<d;k++) { u=1+int(rand()*n); if (u==v) continue; w=1+int(rand()*1000); print "a " v " " u " " w; print "a " u " " v " " w } } }' > "$P/arcs"
{ echo "c powerlaw: 20,000 nodes, degrees about 20000/v^0.8, symmetric"
  echo "p sp 20000 $(wc -l < "$P/arcs")"; cat "$P/arcs"; } > "$P/datasets/powerlaw.gr"
rm "$P/arcs"
n=0
for oc in "$SHOWME"/variants/*/*/*/outcome; do
  [ "$(cat "$oc")" = ok ] || continue
  v=$(dirname "$oc"); variant=$(basename "$v"); site=$(basename "$(dirname "$v")"); cfg=$(basename "$(dirname "$(dirname "$v")")")
  d="$P/variants/$cfg/$site/$variant"; mkdir -p "$d"
  for k in SpMV_kernel.cu bfs_rec_kernel.cu graph_color_kernel.cu pagerank_kernel.cu sssp_kernel.cu; do
    [ -f "$v/src/$k" ] && cp "$v/src/$k" "$d/"
  done
  n=$((n + 1))
done
echo "packed $P: $n variants, $(du -sh "$P" | cut -f1)"
