#!/usr/bin/env python3
"""Lay out /tmp/thirdparty/pack-split: the Mandelbrot programs (mandelbrot-dyn, auto_test, dp_sbr)
with `threshold` at their recursive launch (whose block waits at the barrier of `border_dwell`, a
callee), alone and at all three launches, for gpu_run.sh (run there with the pack's layout).
Variants: T (threshold(128)), TS (threshold(1048576): every launch of the site runs serially).
Also knosvoxel's BFS (bfs, and bfsR with its launch respelled) at its tail-launched recursion, with
threshold, coarsening and warp or grid aggregation.
Needs /tmp/thirdparty as make_pack.py lays it out, and target/release/dpopt."""
import os, shutil, subprocess, sys
TP = '/tmp/thirdparty'
PK = os.path.join(TP, 'pack-split')
DPOPT = os.environ.get('DPOPT', '/work/main/target/release/dpopt')
PROGS = {  # file, dpopt flags, 1-based lines of the fill, recursive and pixel launches
    'md': ('mandelbrot-dyn.cu', ['-DW=2048', '-DH=2048', '-DMAX_DWELL=512', '-DMAX_DEPTH=5', '-DMIN_SIZE=8'], [258, 262, 267]),
    'at': ('dynamicParallelism.cuh', ['-DBSX=32', '-DBSY=32'], [81, 85, 91]),
    'sbr': ('dp_sbr.cuh', ['-D', 'RDC_TRUE', '-DBSX=32', '-DBSY=32'], [80, 84, 88]),
}
shutil.rmtree(PK, ignore_errors=True)
os.makedirs(PK)
shutil.copytree(os.path.join(TP, 'pack', 'compat'), os.path.join(PK, 'compat'))
shutil.copy(os.path.join(TP, 'pack', 'gpu_run.sh'), PK)
rows = []
for p, (f, flags, lines) in PROGS.items():
    shutil.copytree(os.path.join(TP, 'pack', 'prog', p), os.path.join(PK, 'prog', p))
    rows.append((p, 'orig', 'orig', f))
    src = open(os.path.join(TP, 'pack', 'prog', p, f)).read().splitlines(True)
    for site, at in (('s2_block', [lines[1]]), ('all3', lines)):
        variants = [('T', 'threshold(128)', False), ('TS', 'threshold(1048576)', False)]
        if p != 'md':
            # the recursion's host launch is in another file: its block size stated, as the error's help says
            variants += [('TLB', 'threshold(128)', True), ('TSLB', 'threshold(1048576)', True)]
        for v, clause, bounds in variants:
            if (p != 'md') != bounds:
                continue
            out = list(src)
            for line in sorted(at, reverse=True):
                out.insert(line - 1, f'#pragma dp {clause}\n')
            if bounds:
                text = ''.join(out).replace('__global__ void dp_sbr_mandelbrot_block_k(',
                                            '__global__ void __launch_bounds__(BSX * BSY) dp_sbr_mandelbrot_block_k(')
                text = text.replace('__global__ void mandelbrot_block_k(',
                                    '__global__ void __launch_bounds__(BSX * BSY) mandelbrot_block_k(')
                out = [text]
            d = os.path.join(PK, 'variants', p, site, v)
            os.makedirs(os.path.dirname(os.path.join(d, f)), exist_ok=True)
            inp = os.path.join(d, f + '.in')
            open(inp, 'w').write(''.join(out))
            # the input's own directory first, as the original includes its neighbours
            shutil.copy(inp, os.path.join(TP, 'pack', 'prog', p, '_split_in_' + os.path.basename(f)))
            r = subprocess.run([DPOPT, 'transform', *flags, os.path.join(TP, 'pack', 'prog', p, '_split_in_' + os.path.basename(f)),
                                '-o', os.path.join(d, f)], capture_output=True, text=True)
            os.remove(os.path.join(TP, 'pack', 'prog', p, '_split_in_' + os.path.basename(f)))
            print(p, site, v, 'rc', r.returncode, r.stderr.strip().splitlines()[:2] if r.returncode else '')
            if r.returncode == 0:
                rows.append((p, site, v, f))
# knosvoxel's BFS (a recursion through cudaStreamTailLaunch whose blocks share a frontier in shared memory
# and elect the last block): the matrix's inputs with threshold, now split; TS serializes every level.
for p in ('bfs', 'bfsR'):
    f = 'include/bfs_dynamic_parallel.h'
    shutil.copytree(os.path.join(TP, 'pack', 'prog', p), os.path.join(PK, 'prog', p))
    rows.append((p, 'orig', 'orig', f))
    clauses = {'T': 'threshold(128)', 'TS': 'threshold(1048576)', 'TCw': 'threshold(128) coarsen(8) consldt(warp)',
               'TCg': 'threshold(128) coarsen(8) consldt(grid)', 'Aw': 'consldt(warp)', 'Cw': 'coarsen(8) consldt(warp)',
               'TAw': 'threshold(128) consldt(warp)', 'TSAw': 'threshold(1048576) consldt(warp)'}
    for v, clause in clauses.items():
        src = open(os.path.join(TP, 'work', 'v', p, 's1_tail', 'T', 'in', f)).read()
        src = src.replace('#pragma dp threshold(128)', '#pragma dp ' + clause)
        d = os.path.join(PK, 'variants', p, 's1_tail', v)
        os.makedirs(os.path.dirname(os.path.join(d, f)), exist_ok=True)
        inp = os.path.join(TP, 'pack', 'prog', p, 'include', '_split_in.h')
        open(inp, 'w').write(src)
        r = subprocess.run([DPOPT, 'transform', inp, '-o', os.path.join(d, f)], capture_output=True, text=True)
        os.remove(inp)
        print(p, 's1_tail', v, 'rc', r.returncode, r.stderr.strip().splitlines()[:2] if r.returncode else '')
        if r.returncode == 0:
            rows.append((p, 's1_tail', v, f))
with open(os.path.join(PK, 'manifest.tsv'), 'w') as fh:
    fh.write('# prog\tsite\tvariant\tfile\n')
    for row in rows:
        fh.write('\t'.join(row) + '\n')
print(len(rows), 'rows')
