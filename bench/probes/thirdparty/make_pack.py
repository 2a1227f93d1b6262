#!/usr/bin/env python3
"""Lay out /tmp/thirdparty/pack: everything gpu_run.sh needs (no dpopt there)."""
import json, os, shutil, subprocess
TP = '/tmp/thirdparty'
PK = os.path.join(TP, 'pack')
RUNNABLE = ['md', 'at', 'sbr', 'bfs', 'bfsR', 'cms']   # adapt: its DP kernel is never launched (compile-only)
shutil.rmtree(PK, ignore_errors=True)
os.makedirs(PK)
shutil.copytree(os.path.join(TP, 'compat'), os.path.join(PK, 'compat'))
for p in RUNNABLE:
    shutil.copytree(os.path.join(TP, 'prog', p), os.path.join(PK, 'prog', p))
shutil.copy(os.path.join(TP, 'gpu_run.sh'), PK)
res = json.load(open(os.path.join(TP, 'results', 'matrix_all.json')))
files = {'md': 'mandelbrot-dyn.cu', 'at': 'dynamicParallelism.cuh', 'sbr': 'dp_sbr.cuh',
         'bfs': 'include/bfs_dynamic_parallel.h', 'bfsR': 'include/bfs_dynamic_parallel.h', 'cms': 'bar.cu'}
rows = []
for p in RUNNABLE:
    rows.append((p, 'orig', 'orig', files[p]))
# the cms original needs --migrate-sync (device-side cudaDeviceSynchronize, CDP1) to compile for sm_90
d = os.path.join(PK, 'variants', 'cms', 'orig', 'orig')
os.makedirs(d)
subprocess.run(['/work/main/target/release/dpopt', 'transform', '--migrate-sync', '-D', 'MAY_CRASH',
                os.path.join(TP, 'prog', 'cms', 'bar.cu'), '-o', os.path.join(d, 'bar.cu')], check=True)
for r in res:
    if r['prog'] in RUNNABLE and r['dpopt_rc'] == 0 and r['nvcc'] == 'OK':
        src = os.path.join(TP, 'work', 'v', r['prog'], r['site'], r['variant'], 'out', r['file'])
        dst = os.path.join(PK, 'variants', r['prog'], r['site'], r['variant'], r['file'])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(src, dst)
        # the pragma'd input too, for reference (not used by the run)
        shutil.copy(os.path.join(TP, 'work', 'v', r['prog'], r['site'], r['variant'], 'in', r['file']), dst + '.in')
        rows.append((r['prog'], r['site'], r['variant'], r['file']))
# not third-party: the repro of the consldt + helper-reads-blockIdx observation, run alongside (prog cpos)
rp = os.path.join(TP, 'repro', 'consldt_callee_position', 'app.cu')
os.makedirs(os.path.join(PK, 'prog', 'cpos'))
src = open(rp).read()
open(os.path.join(PK, 'prog', 'cpos', 'app.cu'), 'w').write(
    ''.join(l for l in src.splitlines(True) if not l.lstrip().startswith('#pragma dp')))
rows.append(('cpos', 'orig', 'orig', 'app.cu'))
for v, c in (('G', 'consldt(grid)'), ('w', 'consldt(warp)'), ('b', 'consldt(block)')):
    d = os.path.join(PK, 'variants', 'cpos', 's1_child', v)
    os.makedirs(d)
    open(os.path.join(d, 'app.cu.in'), 'w').write(src.replace('#pragma dp consldt(grid)', '#pragma dp ' + c))
    # refused now (dpopt::builtin_in_callee: the helper reads blockIdx): nothing to run
    if subprocess.run(['/work/main/target/release/dpopt', 'transform', os.path.join(d, 'app.cu.in'), '-o',
                       os.path.join(d, 'app.cu')], capture_output=True).returncode != 0:
        print('cpos', v, 'refused by dpopt')
        continue
    rows.append(('cpos', 's1_child', v, 'app.cu'))
with open(os.path.join(PK, 'manifest.tsv'), 'w') as f:
    f.write('# prog\tsite\tvariant\tfile (relative to prog/<prog>; variants/<prog>/<site>/<variant>/<file> replaces it)\n')
    for row in rows:
        f.write('\t'.join(row) + '\n')
shutil.copy(os.path.join(TP, 'results', 'matrix.tsv'), os.path.join(PK, 'matrix_here.tsv'))
open(os.path.join(PK, 'README.md'), 'w').write('''# GPU check of dpopt outputs on third-party CUDA dynamic-parallelism programs

Run here, on a machine with an sm_90 GPU and nvcc (CUDA 12/13) on PATH (or NVCC=/path/to/nvcc):

    bash gpu_run.sh            # ~93 builds (xargs -P 16) + ~137 runs (timeout 60 each), < 5 minutes
    cat out/summary.txt        # one line per run, then SAME / DIFF / TIMEOUT / BUILD_FAIL / SKIPPED counts

Options: --build-only, --run-only (reuse out/build); env JOBS (16), RUN_JOBS (8), RUN_TIMEOUT (60),
DEADLINE (270 s: runs not started by then are SKIPPED), OUT_DIR (./out), CUDA_LIB (dir of libcudart.so).
What is compared and why: /tmp/thirdparty/README.md on the dpopt machine (section 2 and 6); manifest.tsv
lists every build; variants/<prog>/<site>/<variant>/<file> replaces prog/<prog>/<file>; <file>.in is the
input with the pragma, for reference. cpos is not third-party: it is the repro of finding 5.
''')
print(len(rows), 'manifest rows')
