#!/usr/bin/env python3
"""Lay out a pack (default /tmp/thirdparty/pack-pos) with the Mandelbrot programs (mandelbrot-dyn md,
auto_test at, dp_sbr sbr) where `consldt(...)` or the bare pragma applies at their recursive launch,
whose child calls a helper that reads threadIdx/blockDim (`border_dwell`): dpopt copies such helpers as
`dpopt_pos_<name>` and passes them the child's positions (these sites were refused before with
dpopt::builtin_in_callee). For gpu_run.sh, with the pack's layout (compat/, gpu_run.sh, prog/<p>/,
variants/<p>/<site>/<variant>/<file> with <file>.in the pragma'd input, manifest.tsv); also
dpopt_here.tsv: every variant with dpopt's exit code and first error line (refused variants are left
out of manifest.tsv).

Sites: s2_block (the recursive launch only) and all3 (the same clause at all three launches).
Variants: G consldt(grid), W consldt(warp), B consldt(block), M consldt(multiblock, 8), D bare
`#pragma dp`, TG threshold(128) consldt(grid), TCG threshold(128) coarsen(8) consldt(grid),
TW threshold(128) consldt(warp). For at and sbr, whose recursion's host launch is in another file,
a variant with threshold also gets `__launch_bounds__(BSX * BSY)` on the recursive kernel, as
split_pack.py's TLB variants do (same names here: TG, TCG, TW).

Expected: at 2,048 x 2,048 (the medium input) md and at with only the recursive launch annotated
(s2_block) can exceed the default pending-launch limit (2,048; neither program raises it, and this pack
does not add cudaDeviceSetLimit: see limit_probe.sh), because the unannotated fill/pixel launches stay
as written; so s2_block variants may show DIFF at the medium size for that reason (documented, not a
wrong result of the transformation by itself). Compare with split_pack's results for the same sites.
B and M are refused (block_aggregation: the launching block runs `border_dwell`, which has a barrier).
at's variants are kept although nvcc rejects every one of them (README finding 2: the aggregation
headers declare std::complex, at's main.cu defines `complex` and writes `using namespace std;`;
gpu_run.sh shows them as BUILD_FAIL); md's and sbr's compile and link (nvcc 13.5, checked here).

Usage: python3 position_pack.py [--out DIR]   (e.g. --out /work/main/gpu-tp-pos, an ignored path, to
send it to a GPU machine with the working tree; run there: cd gpu-tp-pos && bash gpu_run.sh).
Needs /tmp/thirdparty as make_pack.py lays it out (pack/), and target/release/dpopt (or DPOPT=)."""
import argparse, os, shutil, subprocess

TP = '/tmp/thirdparty'
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument('--out', default=os.path.join(TP, 'pack-pos'), help='pack directory (replaced)')
PK = os.path.abspath(ap.parse_args().out)
DPOPT = os.environ.get('DPOPT', '/work/main/target/release/dpopt')
PROGS = {  # file, dpopt flags, 1-based lines of the fill, recursive and pixel launches (as split_pack.py)
    'md': ('mandelbrot-dyn.cu', ['-DW=2048', '-DH=2048', '-DMAX_DWELL=512', '-DMAX_DEPTH=5', '-DMIN_SIZE=8'], [258, 262, 267]),
    'at': ('dynamicParallelism.cuh', ['-DBSX=32', '-DBSY=32'], [81, 85, 91]),
    'sbr': ('dp_sbr.cuh', ['-D', 'RDC_TRUE', '-DBSX=32', '-DBSY=32'], [80, 84, 88]),
}
VARIANTS = [('G', 'consldt(grid)'), ('W', 'consldt(warp)'), ('B', 'consldt(block)'),
            ('M', 'consldt(multiblock, 8)'), ('D', ''), ('TG', 'threshold(128) consldt(grid)'),
            ('TCG', 'threshold(128) coarsen(8) consldt(grid)'), ('TW', 'threshold(128) consldt(warp)')]
RECURSIVE = {'md': 'mandelbrot_block_k', 'at': 'mandelbrot_block_k', 'sbr': 'dp_sbr_mandelbrot_block_k'}

shutil.rmtree(PK, ignore_errors=True)
os.makedirs(PK)
shutil.copytree(os.path.join(TP, 'pack', 'compat'), os.path.join(PK, 'compat'))
shutil.copy(os.path.join(TP, 'pack', 'gpu_run.sh'), PK)
rows, here = [], []
for p, (f, flags, lines) in PROGS.items():
    shutil.copytree(os.path.join(TP, 'pack', 'prog', p), os.path.join(PK, 'prog', p))
    rows.append((p, 'orig', 'orig', f))
    src = open(os.path.join(TP, 'pack', 'prog', p, f)).read().splitlines(True)
    # the launches must be where split_pack.py says (the pragma goes directly before each)
    for line in lines:
        assert '<<<' in src[line - 1], (p, line, src[line - 1])
    for site, at in (('s2_block', [lines[1]]), ('all3', lines)):
        for v, clause in VARIANTS:
            out = list(src)
            for line in sorted(at, reverse=True):
                indent = out[line - 1][:len(out[line - 1]) - len(out[line - 1].lstrip())]
                out.insert(line - 1, f'{indent}#pragma dp {clause}'.rstrip() + '\n')
            text = ''.join(out)
            if p != 'md' and 'threshold' in clause:
                # the recursion's host launch is in another file: its block size stated, as split_pack's TLB
                k = RECURSIVE[p]
                assert f'__global__ void {k}(' in text, (p, k)
                text = text.replace(f'__global__ void {k}(', f'__global__ void __launch_bounds__(BSX * BSY) {k}(')
            d = os.path.join(PK, 'variants', p, site, v)
            os.makedirs(os.path.dirname(os.path.join(d, f)), exist_ok=True)
            open(os.path.join(d, f + '.in'), 'w').write(text)
            # transformed in the original's own directory, as the original includes its neighbours
            inp = os.path.join(TP, 'pack', 'prog', p, '_pos_in_' + os.path.basename(f))
            open(inp, 'w').write(text)
            try:
                r = subprocess.run([DPOPT, 'transform', '--message-format', 'short', *flags, inp,
                                    '-o', os.path.join(d, f)], capture_output=True, text=True)
            finally:
                os.remove(inp)
            msgs = [m for m in r.stderr.strip().splitlines() if m.strip()]
            first = next((m for m in msgs if 'error' in m), msgs[0] if msgs else '') if r.returncode else \
                '; '.join(m for m in msgs if 'warning' in m)
            first = first.replace(inp, f)
            print(p, site, v, 'rc', r.returncode, first[:300])
            here.append((p, site, v, str(r.returncode), first))
            if r.returncode == 0:
                rows.append((p, site, v, f))
            else:
                shutil.rmtree(d)   # refused: nothing to build (the input is in dpopt_here.tsv's first line)
with open(os.path.join(PK, 'manifest.tsv'), 'w') as fh:
    fh.write('# prog\tsite\tvariant\tfile\n')
    for row in rows:
        fh.write('\t'.join(row) + '\n')
with open(os.path.join(PK, 'dpopt_here.tsv'), 'w') as fh:
    fh.write('# prog\tsite\tvariant\tdpopt rc\tfirst error (refused) or warnings (accepted)\n')
    for row in here:
        fh.write('\t'.join(row) + '\n')
print(len(rows), 'rows;', sum(1 for h in here if h[3] != '0'), 'refused;', PK)
