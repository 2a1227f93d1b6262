#!/usr/bin/env python3
"""Step 3: for every device-side launch in work/<B>/kernel.base.cu, make pragma variants, run dpopt, build the output.

usage: run_variants.py [BENCH ...]      (default: all)
Writes /tmp/klap/variants/<B>/<site>/<variant>/{in.cu, out.cu, dpopt.human, dpopt.short, dpopt.rc, nvcc.log, result}
and appends to /tmp/klap/results.tsv:  bench site variant outcome detail
outcome: PANIC | REFUSED | NVCC_FAIL | LINK_FAIL | OK
"""
import os, re, subprocess, sys, shutil
K = '/tmp/klap'
DPOPT = os.environ.get('DPOPT', '/work/main/target/release/dpopt')
# device-side launches of kernel.base.cu (1-based line numbers of the launch statement), found by reading the files
SITES = {
    'BFS':  [28],
    'BT':   [52],
    'GC':   [31],
    'MST':  [31, 74],
    'QT':   [323],
    'SP':   [36],
    'SSSP': [19],
}
VARIANTS = [
    ('T',      'threshold(128)'),
    ('C',      'coarsen(8)'),
    ('TCAw',   'threshold(128) coarsen(8) consldt(warp)'),
    ('TCAb',   'threshold(128) coarsen(8) consldt(block)'),
    ('TCAm8',  'threshold(128) coarsen(8) consldt(multiblock, 8)'),
    ('TCAg',   'threshold(128) coarsen(8) consldt(grid)'),
    ('Ag',     'consldt(grid)'),
    ('floor',  'floor'),
    ('bare',   ''),
]

def make(src_lines, lines, clause):
    out = list(src_lines)
    for ln in sorted(lines, reverse=True):
        launch = out[ln - 1]
        assert '<<<' in launch, (ln, launch)
        indent = re.match(r'[ \t]*', launch).group(0)
        out.insert(ln - 1, indent + ('#pragma dp ' + clause).rstrip() + '\n')
    return ''.join(out)

def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)

def main():
    benches = sys.argv[1:] or list(SITES)
    res = open(f'{K}/results.tsv', 'a')
    for b in benches:
        work = f'{K}/work/{b}'
        src = open(f'{work}/kernel.base.cu', newline='').readlines()
        groups = [(f'L{ln}', [ln]) for ln in SITES[b]]
        if len(SITES[b]) > 1:
            groups.append(('all', SITES[b]))
        for site, lines in groups:
            for vname, clause in VARIANTS:
                d = f'{K}/variants/{b}/{site}/{vname}'
                shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
                open(f'{d}/in.cu', 'w', newline='').write(make(src, lines, clause))
                base = [DPOPT, 'transform', '-I', work, '-I', f'{K}/_standin', f'{d}/in.cu']
                h = run(base + ['-o', f'{d}/out.cu'], env=dict(os.environ, RUST_BACKTRACE='1', NO_COLOR='1'))
                open(f'{d}/dpopt.human', 'w').write(h.stdout + h.stderr)
                open(f'{d}/dpopt.rc', 'w').write(f'{h.returncode}\n')
                s = run(base + ['-o', '/dev/null', '--message-format', 'short'])
                open(f'{d}/dpopt.short', 'w').write(s.stdout + s.stderr)
                text = h.stdout + h.stderr
                if h.returncode == 101 or 'panicked' in text or 'RUST_BACKTRACE' in text or 'stack backtrace' in text:
                    outcome, detail = 'PANIC', text.strip().splitlines()[0] if text.strip() else ''
                elif h.returncode != 0 or not os.path.exists(f'{d}/out.cu'):
                    outcome = 'REFUSED'
                    codes = sorted(set(re.findall(r'\[(dpopt::[a-z_]+)\]', s.stdout + s.stderr)))
                    first = next((l for l in (s.stdout + s.stderr).splitlines() if 'error' in l), (s.stdout + s.stderr).strip()[:200])
                    detail = ','.join(codes) + ' | ' + first
                else:
                    r = run([f'{K}/scripts/build_work.sh', b, f'{d}/out.cu', f'{d}/bin', f'{d}/nvcc.log'])
                    outcome = {0: 'OK', 3: 'NVCC_FAIL', 4: 'LINK_FAIL'}.get(r.returncode, f'BUILD_RC{r.returncode}')
                    warn = sorted(set(re.findall(r'\[(dpopt::[a-z_]+)\]', s.stdout + s.stderr)))
                    detail = ('warnings:' + ','.join(warn)) if warn else ''
                    if outcome != 'OK':
                        errs = [l for l in open(f'{d}/nvcc.log').read().splitlines() if 'error' in l]
                        detail += ' | ' + (errs[0] if errs else '')
                    for f in ('bin.kernel.o',):
                        if os.path.exists(f'{d}/{f}'): os.remove(f'{d}/{f}')
                open(f'{d}/result', 'w').write(f'{outcome}\t{detail}\n')
                line = f'{b}\t{site}\t{vname}\t{outcome}\t{detail}'
                print(line, flush=True); res.write(line + '\n'); res.flush()

main()
