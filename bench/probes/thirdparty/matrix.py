#!/usr/bin/env python3
"""Build the dpopt x third-party matrix: for each program, each device-side launch (site) and
each pragma variant, insert `#pragma dp <clauses>` before the launch, run `dpopt transform`,
then compile (and link) the output with nvcc. Results go to results/matrix.tsv and
results/matrix.json; the outputs to work/v/<prog>/<site>/<variant>/.

Usage: matrix.py [--jobs 2] [--only PROG] [--no-nvcc]
"""
import argparse, concurrent.futures as cf, json, os, re, shutil, subprocess, sys, time

TP = os.path.dirname(os.path.abspath(__file__))
DPOPT = os.environ.get('DPOPT', '/work/main/target/release/dpopt')
NVCC = os.environ.get('NVCC', '/work/main/.venv-nvcc/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc')
CUDA_LIB = os.environ.get('CUDA_LIB', os.path.join(TP, 'locallib'))
COMPAT = os.path.join(TP, 'compat')

VARIANTS = [
    ('T', 'threshold(128)'),
    ('C', 'coarsen(8)'),
    ('TCw', 'threshold(128) coarsen(8) consldt(warp)'),
    ('TCb', 'threshold(128) coarsen(8) consldt(block)'),
    ('TCm', 'threshold(128) coarsen(8) consldt(multiblock, 8)'),
    ('TCg', 'threshold(128) coarsen(8) consldt(grid)'),
    ('G', 'consldt(grid)'),
    ('F', 'floor'),
    ('D', ''),
]

# program -> (site file relative to prog/<p>, dpopt flags, [(site name, 1-based line of the launch's first line, kernel)])
PROGRAMS = {
    'md': ('mandelbrot-dyn.cu', [], [
        ('s1_fill', 258, 'dwell_fill_k'), ('s2_block', 262, 'mandelbrot_block_k'), ('s3_pixel', 267, 'mandelbrot_pixel_k')]),
    'adapt': ('mandelbrot-dyn.cu', [], [
        ('s1_fill', 252, 'dwell_fill_k'), ('s2_block', 256, 'mandelbrot_block_k'), ('s3_pixel', 261, 'mandelbrot_pixel_k')]),
    'at': ('dynamicParallelism.cuh', [], [
        ('s1_fill', 81, 'dwell_fill_k'), ('s2_block', 85, 'mandelbrot_block_k'), ('s3_pixel', 91, 'mandelbrot_pixel_k')]),
    'sbr': ('dp_sbr.cuh', ['-D', 'RDC_TRUE'], [
        ('s1_fill', 80, 'dp_sbr_dwell_fill_k'), ('s2_block', 84, 'dp_sbr_mandelbrot_block_k'),
        ('s3_pixel', 88, 'dp_sbr_mandelbrot_pixel_k')]),
    'bfs': ('include/bfs_dynamic_parallel.h', [], [('s1_tail', 84, 'bfsDynamicParallel')]),
    # bfs with the device launch respelled `<<<`/`>>>` (patches/bfsR_respell_launch.patch), to get past finding 1
    'bfsR': ('include/bfs_dynamic_parallel.h', [], [('s1_tail', 84, 'bfsDynamicParallel')]),
    'cms': ('bar.cu', ['--migrate-sync', '-D', 'MAY_CRASH'], [('s1_bar', 17, 'bar')]),
}

OMP = ['-Xcompiler', '-fopenmp']


def build_cmds(prog):
    """Shell commands (run in a copy of prog/<p> with the variant file overlaid) that build it."""
    nv = NVCC
    if prog == 'md':
        return [f'{nv} -O3 -arch=sm_90 -rdc=true -Xcompiler -fopenmp -diag-suppress 2464 -I{COMPAT}/png '
                f'-DcudaThreadSynchronize=cudaDeviceSynchronize -DW=2048 -DH=2048 -DMAX_DWELL=512 -DMAX_DEPTH=5 '
                f'-DMIN_SIZE=8 mandelbrot-dyn.cu -o app -lcudadevrt']
    if prog == 'adapt':
        return [f'{nv} -O3 -arch=sm_90 -rdc=true -Xcompiler -fopenmp -diag-suppress 2464 -I{COMPAT}/png '
                f'-DcudaThreadSynchronize=cudaDeviceSynchronize mandelbrot-dyn.cu -o app -lcudadevrt']
    if prog == 'at':
        return [f'{nv} -O3 -arch=sm_90 -rdc=true -Xcompiler -fopenmp -I{COMPAT}/png -Dno -DBSX=32 -DBSY=32 '
                f'-DREPEATS=1 main.cu -o app -lcudadevrt']
    if prog == 'sbr':
        return [f'{nv} -O3 -arch=sm_90 -rdc=true -I{COMPAT}/png -DRDC_TRUE -DBSX=32 -DBSY=32 sbr_driver.cu -o app '
                f'-lcudadevrt']
    if prog in ('bfs', 'bfsR'):
        return [f'{nv} -std=c++20 -O3 -arch=sm_90 -rdc=true -diag-suppress 375 -Iinclude -I{COMPAT}/bfs '
                f'-DBFS_GRID_SIZE=2048 src/main.cu -o app -lcudadevrt']
    if prog == 'cms':
        f = (f'--expt-relaxed-constexpr --expt-extended-lambda -std=c++14 -O2 --cudart=shared -arch=sm_90 '
             f'-I{COMPAT}/cms --compiler-options -O2,-pthread,-fPIC')
        l = f'-L{CUDA_LIB} -lcudart -lcudadevrt -Wl,-rpath,{CUDA_LIB}'
        return [f'{nv} {f} -dc foo.cu -o foo.o', f'{nv} {f} -dlink foo.o -o foo_dlink.o',
                f'g++ -O2 -pthread -fPIC --shared foo.o foo_dlink.o {l} -o libfoo.so',
                f'{nv} {f} -DMAY_CRASH -dc bar.cu -o bar_crash.o',
                f'{nv} {f} -dlink bar_crash.o -o bar_crash_dlink.o',
                f'g++ -O2 -pthread -fPIC --shared bar_crash.o bar_crash_dlink.o {l} -o libbar_crash.so',
                f'g++ -DMAY_CRASH -O2 -pthread -fPIC main.cc -L. -lfoo -ldl -Wl,-rpath,. {l} -o crash']
    raise KeyError(prog)


def insert_pragma(path, line, clauses):
    """line: 1-based line of the launch (an int), or a list of (line, clauses) for several sites."""
    data = open(path, 'rb').read().decode('utf-8')
    nl = '\r\n' if '\r\n' in data else '\n'
    lines = data.split(nl)
    todo = line if isinstance(line, list) else [(line, clauses)]
    for ln, cl in sorted(todo, reverse=True):
        target = lines[ln - 1]
        indent = target[:len(target) - len(target.lstrip())]
        lines.insert(ln - 1, (indent + '#pragma dp ' + cl).rstrip())
    open(path, 'wb').write(nl.join(lines).encode('utf-8'))


def run(cmd, cwd, timeout=600):
    t = time.time()
    p = subprocess.run(cmd, cwd=cwd, shell=isinstance(cmd, str), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.time() - t


def summarize_dpopt(out):
    codes = []
    for c in re.findall(r'dpopt::([a-z_0-9]+)', out):
        if c not in codes:
            codes.append(c)
    first = ''
    for ln in out.splitlines():
        m = re.search(r'(error|warning): (.*)', ln)
        if m:
            first = m.group(1) + ': ' + m.group(2)
            break
    return codes, first


def do_cell(prog, site, line, kernel, vname, clauses, nvcc=True):
    fname, dflags, _ = PROGRAMS[prog]
    vdir = os.path.join(TP, 'work', 'v', prog, site, vname)
    shutil.rmtree(vdir, ignore_errors=True)
    src = os.path.join(TP, 'prog', prog)
    shutil.copytree(src, os.path.join(vdir, 'in'))
    insert_pragma(os.path.join(vdir, 'in', fname), line, clauses)
    os.makedirs(os.path.dirname(os.path.join(vdir, 'out', fname)), exist_ok=True)
    rec = dict(prog=prog, site=site, kernel=kernel, variant=vname, clauses=clauses, file=fname)
    # short format: one line per diagnostic (easy to read codes and first message)
    cmd = [DPOPT, 'transform', '--message-format', 'short'] + dflags + [fname, '-o', os.path.join('..', 'out', fname)]
    rc, so, se, dt = run(cmd, os.path.join(vdir, 'in'))
    out = so + se
    open(os.path.join(vdir, 'dpopt.log'), 'w').write(' '.join(cmd) + '\n' + out)
    # the human format too, for the record
    rc2, so2, se2, _ = run([DPOPT, 'transform'] + dflags + [fname, '-o', '/dev/null'], os.path.join(vdir, 'in'))
    open(os.path.join(vdir, 'dpopt.human.log'), 'w').write(so2 + se2)
    codes, first = summarize_dpopt(out)
    rec.update(dpopt_rc=rc, codes=codes, first=first, panic=(rc == 101 or 'panicked' in out))
    outfile = os.path.join(vdir, 'out', fname)
    rec['output'] = os.path.exists(outfile)
    if rc != 0 and os.path.exists(outfile):
        rec['note'] = 'output written despite non-zero exit'
    if rc == 0 and os.path.exists(outfile) and nvcc:
        bdir = os.path.join(vdir, 'build')
        shutil.copytree(src, bdir)
        shutil.copyfile(outfile, os.path.join(bdir, fname))
        ok, log = True, ''
        for c in build_cmds(prog):
            brc, bso, bse, bdt = run(c, bdir)
            log += f'$ {c}\n{bso}{bse}(rc={brc}, {bdt:.1f}s)\n'
            if brc != 0:
                ok = False
                break
        open(os.path.join(vdir, 'nvcc.log'), 'w').write(log)
        rec['nvcc'] = 'OK' if ok else 'FAIL'
        if not ok:
            m = re.search(r'(error[^\n]*)', log)
            rec['nvcc_first'] = m.group(1) if m else log[-300:]
        # keep only what is needed
        for f in os.listdir(bdir):
            pth = os.path.join(bdir, f)
            if f not in ('app', 'crash', 'libfoo.so', 'libbar_crash.so'):
                shutil.rmtree(pth) if os.path.isdir(pth) else os.remove(pth)
    else:
        rec['nvcc'] = '-'
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--only', action='append')
    ap.add_argument('--no-nvcc', action='store_true')
    a = ap.parse_args()
    cells = []
    for prog, (fname, dflags, sites) in PROGRAMS.items():
        if a.only and prog not in a.only:
            continue
        for site, line, kernel in sites:
            for vname, clauses in VARIANTS:
                cells.append((prog, site, line, kernel, vname, clauses))
    # all three sites of a Mandelbrot kernel at once (the way a user would annotate it)
    for prog in ('md', 'adapt', 'at', 'sbr'):
        if a.only and prog not in a.only:
            continue
        (l1, _, _), (l2, _, _), (l3, _, _) = [(x[1], 0, 0) for x in PROGRAMS[prog][2]]
        for vname, per in (('D', ('', '', '')), ('C', ('coarsen(8)',) * 3),
                           ('TCg+G', ('threshold(128) coarsen(8) consldt(grid)', 'consldt(grid)',
                                      'threshold(128) coarsen(8) consldt(grid)')),
                           ('T+C', ('threshold(128)', 'coarsen(8)', 'threshold(128)'))):
            cells.append((prog, 'all3', [(l1, per[0]), (l2, per[1]), (l3, per[2])], 'all three', vname,
                          ' | '.join(per)))
    # extra (not in the brief's list): a threshold that the non-recursive children actually cross, with the
    # child's real thread count stated (dpopt counts grid x block, >= 256, for `divup()` grids)
    for prog in ('md', 'adapt', 'at', 'sbr'):
        if a.only and prog not in a.only:
            continue
        for site, line, kernel in PROGRAMS[prog][2]:
            if site in ('s1_fill', 's3_pixel'):
                cells.append((prog, site, line, kernel, 'Tct', 'threshold(1024) child_threads(d * d)'))
    results = []
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(do_cell, *c, nvcc=not a.no_nvcc): c for c in cells}
        for f in cf.as_completed(futs):
            r = f.result()
            results.append(r)
            print(f"{r['prog']:5} {r['site']:9} {r['variant']:4} dpopt={r['dpopt_rc']} nvcc={r['nvcc']:4} "
                  f"{','.join(r['codes'])} {r['first'][:110]}", flush=True)
    order = {(p, s, v): i for i, (p, s, _, _, v, _) in enumerate(cells)}
    results.sort(key=lambda r: order[(r['prog'], r['site'], r['variant'])])
    os.makedirs(os.path.join(TP, 'results'), exist_ok=True)
    tag = '_'.join(a.only) if a.only else 'all'
    json.dump(results, open(os.path.join(TP, 'results', f'matrix_{tag}.json'), 'w'), indent=1)


if __name__ == '__main__':
    main()
