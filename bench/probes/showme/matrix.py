#!/usr/bin/env python3
"""Run the dpopt x show-me-dynamic-parallelism matrix (compile/link only).

For every configuration (an app's kernel file under one set of -D macros),
every device-side launch site in it, and every pragma variant: insert the
pragma on the line before the launch, run `dpopt transform` on the kernel
file (the file that holds the pragma; the app's wrapper #includes it), and,
when dpopt writes an output, compile the app's wrapper (which #includes the
transformed kernel) and link the app as its Makefile does (sm_90, -O3).

Everything goes under /tmp/showme/variants/<config>/<site>/<variant>/:
  in/                the sources given to dpopt (kernel with the pragma)
  src/               dpopt's output kernel + the app's other sources
  cmd.sh             the exact commands (dpopt, nvcc compile, nvcc link)
  dpopt.txt          dpopt's stderr (human format), dpopt.short.txt (short)
  nvcc.txt           nvcc compile+link output
  outcome            one word: panic | refused | nvcc_error | link_error | ok
Results: /tmp/showme/results/matrix.tsv (+ matrix.md).

Usage: matrix.py [--only CONFIG] [--jobs 1]
"""
import os, re, shutil, subprocess, sys, json, argparse

SHOWME = os.environ.get('SHOWME', '/tmp/showme')
NVCC = os.environ.get('NVCC', '/work/main/.venv-nvcc/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc')
DPOPT = os.environ.get('DPOPT', '/work/main/target/release/dpopt')
NVFLAGS = ['-Xcompiler', '-fopenmp', '-arch=sm_90', '-rdc=true', '-O3']

APPS = {
    # app: (kernel, wrapper, main cpp, binary, Makefile -D macros)
    'SpMV':        ('SpMV_kernel.cu', 'SpMV_wrapper.cu', 'SpMV.cpp', 'gpu-SpMV', ['CONSOLIDATE_LEVEL=0', 'BUFFER_ALLOCATOR=2']),
    'bfs-rec':     ('bfs_rec_kernel.cu', 'bfs_rec_wrapper.cu', 'bfs_rec.cpp', 'gpu-bfs-rec', []),
    'graph-color': ('graph_color_kernel.cu', 'graph_color_wrapper.cu', 'graph_color.cpp', 'gpu-graph-color', []),
    'pagerank':    ('pagerank_kernel.cu', 'pagerank_wrapper.cu', 'pagerank.cpp', 'gpu-pg', []),
    'sssp':        ('sssp_kernel.cu', 'sssp_wrapper.cu', 'sssp.cpp', 'gpu-sssp', ['CONSOLIDATE_LEVEL=0', 'BUFFER_ALLOCATOR=2']),
}

# config name: (app, tree root that holds apps/<app>/src, needs --migrate-sync)
CONFIGS = {
    'SpMV':            ('SpMV', 'port', False),
    'bfs-rec':         ('bfs-rec', 'port', False),
    'graph-color':     ('graph-color', 'port', False),
    # pagerank as written (ported): pg_multidp_kernel has a CDP1 device-side
    # cudaDeviceSynchronize(), so every run gets --migrate-sync
    'pagerank':        ('pagerank', 'port', True),
    # pagerank with that sync removed by hand (port_nosync.patch)
    'pagerank-nosync': ('pagerank', 'port_nosync', False),
    'sssp':            ('sssp', 'port', False),
}

VARIANTS = [
    ('T',           'threshold(128)'),
    ('C',           'coarsen(8)'),
    ('TCA-warp',    'threshold(128) coarsen(8) consldt(warp)'),
    ('TCA-block',   'threshold(128) coarsen(8) consldt(block)'),
    ('TCA-mb8',     'threshold(128) coarsen(8) consldt(multiblock, 8)'),
    ('TCA-grid',    'threshold(128) coarsen(8) consldt(grid)'),
    ('A-grid',      'consldt(grid)'),
    ('floor',       'floor'),
    ('bare',        ''),
]

def find_sites(path):
    """Device-side launches: lines with <<< that are not comments, with the
    enclosing __global__ function (every launch in these *_kernel.cu files is
    inside a __global__ kernel)."""
    sites = []
    fn = None
    in_block_comment = False
    for i, line in enumerate(open(path).read().split('\n'), 1):
        s = line.strip()
        m = re.search(r'__global__\s+void\s+(\w+)', line)
        if m:
            fn = m.group(1)
        if in_block_comment:
            if '*/' in s:
                in_block_comment = False
            continue
        if s.startswith('/*') and '*/' not in s:
            in_block_comment = True
            continue
        if '<<<' in line and not s.startswith('//'):
            m2 = re.search(r'(\w+)\s*<<<', line)
            sites.append({'line': i, 'parent': fn, 'child': m2.group(1),
                          'text': s, 'launch_col': m2.start(1)})
    return sites

def insert_pragma(text, site, clauses, inline):
    lines = text.split('\n')
    idx = site['line'] - 1
    launch = lines[idx]
    pragma_text = ('dp ' + clauses).strip()
    if inline:
        # operator form on the launch's own line, right before the kernel name
        c = site['launch_col']
        lines[idx] = launch[:c] + '_Pragma("%s") ' % pragma_text + launch[c:]
    else:
        indent = re.match(r'[ \t]*', launch).group(0)
        lines.insert(idx, indent + '#pragma ' + pragma_text)
    return '\n'.join(lines)

def run(cmd, cwd, timeout=600):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors='replace')
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 'timeout', (e.stdout or '') if isinstance(e.stdout, str) else ''

def run_sep(cmd, cwd, timeout=600):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, text=True, errors='replace')
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 'timeout', '', 'TIMEOUT'

def shq(a):
    return "'" + a.replace("'", "'\\''") + "'" if re.search(r'[^\w@%+=:,./-]', a) else a

def first_diag(short):
    """code + message of the first error (else warning) in --message-format short output"""
    for kind in ('error', 'warning'):
        for l in short.splitlines():
            m = re.match(r'^(.*?):(\d+):(\d+): ' + kind + r': (.*?)(?: \[(dpopt::\w+)\])?(?: help: .*)?$', l)
            if m:
                return '%s %s:%s:%s: %s' % (m.group(5) or '?', os.path.basename(m.group(1)), m.group(2), m.group(3), m.group(4))
    return short.strip().splitlines()[0] if short.strip() else ''

def diag_codes(short):
    return sorted(set(re.findall(r'\[(dpopt::\w+)\]', short)))

def is_panic(rc, text):
    return rc == 101 or 'panicked' in text or 'RUST_BACKTRACE' in text or 'stack backtrace' in text

def do_variant(cfg, app, root, migrate, site, vname, clauses, inline, global_o):
    kernel, wrapper, cpp, binname, defs = APPS[app]
    srcdir = os.path.join(SHOWME, root, 'apps', app, 'src')
    common = os.path.join(SHOWME, root, 'common')
    site_id = 'L%d_%s' % (site['line'], site['parent'])
    vdir = os.path.join(SHOWME, 'variants', cfg, site_id, vname + ('@inline' if inline else ''))
    if os.path.exists(vdir):
        shutil.rmtree(vdir)
    indir, outdir = os.path.join(vdir, 'in'), os.path.join(vdir, 'src')
    os.makedirs(indir); os.makedirs(outdir)
    for f in os.listdir(srcdir):
        if f.endswith(('.cu', '.cpp', '.h')):
            shutil.copy(os.path.join(srcdir, f), indir)
            if f != kernel:
                shutil.copy(os.path.join(srcdir, f), outdir)
    text = open(os.path.join(srcdir, kernel)).read()
    open(os.path.join(indir, kernel), 'w').write(insert_pragma(text, site, clauses, inline))
    dargs = ['transform'] + (['--migrate-sync'] if migrate else [])
    for d in defs:
        dargs += ['-D', d]
    dargs += ['-I', '.', '-I', common, kernel, '-o', '../src/' + kernel]
    rc, out, err = run_sep([DPOPT] + dargs, indir)
    open(os.path.join(vdir, 'dpopt.txt'), 'w').write(err + out)
    src_rc, short_out, short_err = run_sep([DPOPT] + dargs[:-2] + ['--message-format', 'short', '-o', '-'], indir)
    open(os.path.join(vdir, 'dpopt.short.txt'), 'w').write(short_err)
    ccmd = [NVCC] + ['-D' + d for d in defs] + NVFLAGS + ['-I.', '-I' + common, '-c', wrapper, '-o', 'wrapper.o']
    lcmd = [NVCC] + NVFLAGS + ['-I.', '-I' + common, global_o, 'wrapper.o', cpp, '-lcudadevrt', '-o', binname]
    with open(os.path.join(vdir, 'cmd.sh'), 'w') as f:
        f.write('#!/bin/bash\n# reproduce this variant\nset -x\ncd %s/in\n%s\ncd ../src\n%s && \\\n%s\n' % (
            vdir, ' '.join(shq(a) for a in [DPOPT] + dargs), ' '.join(shq(a) for a in ccmd), ' '.join(shq(a) for a in lcmd)))
    res = {'config': cfg, 'app': app, 'site': site_id, 'line': site['line'], 'parent': site['parent'],
           'child': site['child'], 'variant': vname + ('@inline' if inline else ''), 'pragma': '#pragma dp ' + clauses if not inline else '_Pragma("dp %s")' % clauses,
           'migrate': migrate, 'dpopt_rc': rc, 'codes': diag_codes(short_err), 'diag': '', 'nvcc': '', 'vdir': vdir}
    warns = [l for l in short_err.splitlines() if ': warning: ' in l]
    res['warnings'] = sorted(set(re.findall(r'\[(dpopt::\w+)\]', '\n'.join(warns))))
    if is_panic(rc, err + out) or is_panic(src_rc, short_err):
        res['outcome'] = 'panic'
        res['diag'] = (err + out).strip().splitlines()[0:3]
    elif rc != 0 or not os.path.exists(os.path.join(outdir, kernel)):
        res['outcome'] = 'refused'
        res['diag'] = first_diag(short_err)
    else:
        crc, cout = run(ccmd, outdir)
        lrc, lout = (None, '')
        if crc == 0:
            lrc, lout = run(lcmd, outdir)
        open(os.path.join(vdir, 'nvcc.txt'), 'w').write('$ compile\n' + cout + '\n$ link\n' + lout)
        errs = [l for l in cout.splitlines() if ' error' in l or 'error:' in l]
        if crc != 0:
            res['outcome'] = 'nvcc_error'
            res['nvcc'] = '\n'.join(cout.strip().splitlines()[:20])
            res['nvcc_first'] = errs[0] if errs else cout.strip().splitlines()[0]
        elif lrc != 0:
            res['outcome'] = 'link_error'
            res['nvcc'] = '\n'.join(lout.strip().splitlines()[:20])
        else:
            res['outcome'] = 'ok'
            res['diag'] = first_diag(short_err) if warns else ''
    open(os.path.join(vdir, 'outcome'), 'w').write(res['outcome'] + '\n')
    json.dump(res, open(os.path.join(vdir, 'result.json'), 'w'), indent=1)
    return res

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--only', action='append')
    a = ap.parse_args()
    global_o = os.path.join(SHOWME, 'build', 'global.o')
    if not os.path.exists(global_o):
        os.makedirs(os.path.dirname(global_o), exist_ok=True)
        subprocess.check_call([NVCC] + NVFLAGS + ['-I' + os.path.join(SHOWME, 'port', 'common'), '-c',
                               os.path.join(SHOWME, 'port', 'common', 'global.cpp'), '-o', global_o])
    results = []
    for cfg, (app, root, migrate) in CONFIGS.items():
        if a.only and cfg not in a.only:
            continue
        kernel = APPS[app][0]
        sites = find_sites(os.path.join(SHOWME, root, 'apps', app, 'src', kernel))
        for site in sites:
            modes = [False]
            if re.match(r'^(if|else)\b', site['text']):
                modes.append(True)   # launch shares its line with an `if`: also try _Pragma on that line
            for inline in modes:
                for vname, clauses in VARIANTS:
                    r = do_variant(cfg, app, root, migrate, site, vname, clauses, inline, global_o)
                    print('%-16s %-40s %-18s %-10s %s' % (cfg, r['site'], r['variant'], r['outcome'],
                          (r['diag'] if isinstance(r['diag'], str) else ' '.join(r['diag'])) or r.get('nvcc_first', '')), flush=True)
                    results.append(r)
    os.makedirs(os.path.join(SHOWME, 'results'), exist_ok=True)
    name = 'matrix' if not a.only else 'matrix_' + '_'.join(a.only)
    json.dump(results, open(os.path.join(SHOWME, 'results', name + '.json'), 'w'), indent=1)
    with open(os.path.join(SHOWME, 'results', name + '.tsv'), 'w') as f:
        f.write('config\tsite\tchild\tvariant\toutcome\tdpopt_codes\twarnings\tdiag_or_nvcc_first_error\tdir\n')
        for r in results:
            d = r['diag'] if isinstance(r['diag'], str) else ' '.join(r['diag'])
            f.write('\t'.join([r['config'], r['site'], r['child'], r['variant'], r['outcome'], ','.join(r['codes']),
                               ','.join(r['warnings']), (d or r.get('nvcc_first', '')).replace('\t', ' '),
                               os.path.relpath(r['vdir'], SHOWME)]) + '\n')

if __name__ == '__main__':
    main()
