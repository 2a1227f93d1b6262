#!/usr/bin/env python3
"""Variant matrix for /tmp/thirdparty2: each device-side launch site x 10 pragma variants,
dpopt transform, nvcc -c of every accepted output, and the no-pragma identity check."""
import subprocess, os, re, json, shutil, sys
T = '/tmp/thirdparty2'
DPOPT = '/work/main/target/release/dpopt'
NVCC = '/work/main/.venv-nvcc/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc'
P = T + '/prog'; C = T + '/compat'
VARIANTS = [('T', 'threshold(128)'), ('C', 'coarsen(8)'),
            ('TCw', 'threshold(128) coarsen(8) consldt(warp)'), ('TCb', 'threshold(128) coarsen(8) consldt(block)'),
            ('TCm', 'threshold(128) coarsen(8) consldt(multiblock, 8)'), ('TCg', 'threshold(128) coarsen(8) consldt(grid)'),
            ('Aw', 'consldt(warp)'), ('Ag', 'consldt(grid)'), ('F', 'floor'), ('D', '')]
# config: (name, repo, file, dpopt flags, nvcc flags)
CONFIGS = {
 'pcc':  ('deeperlearning/professional-cuda-c-programming', P + '/pcc/chapter03/nestedReduce2.cu',
          ['--migrate-sync', '-I', C + '/common'], ['-I', C + '/common']),
 'sbfs1': ('stanleyedward/learn_cuda', P + '/sbfs/22_dynamic_parallelism/1_DPBfsFrontier copy.cu',
          ['-I', C + '/sbfs'], ['-I', C + '/sbfs']),
 'sbfs2': ('stanleyedward/learn_cuda', P + '/sbfs/22_dynamic_parallelism/2_DPbfs_threshold.cu',
          ['-I', C + '/sbfs'], ['-I', C + '/sbfs']),
 'bsa':  ('dleunji/BSA-SpMM_EURO-PAR-2024', P + '/bsa/src/reorder_gpu.cu',
          ['-I', P + '/bsa/include', '-I', C + '/bsa'], ['-I', P + '/bsa/include', '-I', C + '/bsa']),
 'rgbi': ('uchytilc/Recursive-Grid-Based-Integration', P + '/rgbi/kernel.cu',
          ['-I', P + '/rgbi', '-I', C + '/rgbi', '-D', 'TP2_RGBI_DROP_DEVICE_SYNC'],
          ['-I', P + '/rgbi', '-I', C + '/rgbi', '-DTP2_RGBI_DROP_DEVICE_SYNC']),
 'rgbi-ms': ('uchytilc/Recursive-Grid-Based-Integration', P + '/rgbi/kernel.cu',
          ['--migrate-sync', '-I', P + '/rgbi', '-I', C + '/rgbi'], ['-I', P + '/rgbi', '-I', C + '/rgbi']),
}
# sites: (config, site name, 1-based line of the launch statement's first line)
SITES = [('pcc', 'gpuRecursiveReduce', 92), ('pcc', 'gpuRecursiveReduceNosync', 128), ('pcc', 'gpuRecursiveReduce2', 152),
         ('sbfs1', 'bfs_child_kernel', 30), ('sbfs2', 'bfs_child_kernel', 31),
         ('bsa', 'bsa_clustering', 325),
         ('rgbi', 'internal', 225), ('rgbi', 'leaf', 228),
         ('rgbi-ms', 'internal', 225), ('rgbi-ms', 'leaf', 228)]
NVFLAGS = ['-rdc=true', '-arch=sm_90', '-c']

def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)

def first_diag(err):
    codes = re.findall(r'\[(dpopt::[a-z_0-9]+)\]', err)
    errs = [l for l in err.splitlines() if ': error:' in l]
    if errs:  # the first error's code first, then the rest in order of appearance
        m = re.search(r'\[(dpopt::[a-z_0-9]+)\]', errs[0])
        if m: codes = [m.group(1)] + [c for c in codes if c != m.group(1)]
    first_err = None
    for line in err.splitlines():
        if ': error:' in line:
            first_err = line; break
    if first_err is None:
        for line in err.splitlines():
            if ': warning:' in line:
                first_err = line; break
    return codes, first_err or ''

def first_nvcc_error(out):
    for line in out.splitlines():
        if 'error' in line: return line.strip()
    return out.strip().splitlines()[0] if out.strip() else ''

rows = []
W = T + '/work/v'
if os.path.isdir(W): shutil.rmtree(W)
for cfg, site, line in SITES:
    repo, src, dflags, nflags = CONFIGS[cfg]
    lines = open(src).read().split('\n')
    assert '<<<' in lines[line - 1], (cfg, site, lines[line - 1])
    indent = re.match(r'[ \t]*', lines[line - 1]).group(0)
    for vname, clauses in VARIANTS:
        d = f'{W}/{cfg}/{site}/{vname}'; os.makedirs(d)
        pr = (indent + '#pragma dp ' + clauses).rstrip()
        new = lines[:line - 1] + [pr] + lines[line - 1:]
        inp = d + '/in.cu'; open(inp, 'w').write('\n'.join(new))
        outp = d + '/out.cu'
        r = run([DPOPT, 'transform', inp, *dflags, '--message-format', 'short', '-o', outp])
        open(d + '/dpopt.stderr', 'w').write(r.stderr)
        panic = r.returncode == 101 or 'panicked' in r.stderr
        codes, msg = first_diag(r.stderr)
        nv = '-'
        if r.returncode == 0 and os.path.exists(outp):
            n = run([NVCC, *NVFLAGS, *nflags, outp, '-o', d + '/out.o'])
            open(d + '/nvcc.out', 'w').write(n.stdout + n.stderr)
            nv = 'OK' if n.returncode == 0 else 'FAIL: ' + first_nvcc_error(n.stdout + n.stderr)
        rows.append(dict(config=cfg, repo=repo, file=os.path.relpath(src, P), site=site, line=line, variant=vname,
                         clauses=clauses, rc=r.returncode, panic=panic, codes=','.join(dict.fromkeys(codes)),
                         first_code=codes[0] if codes else '', first=msg.replace(inp, 'in.cu'), nvcc=nv))
        print(cfg, site, vname, r.returncode, codes[:1], nv[:80], flush=True)

with open(T + '/matrix.tsv', 'w') as f:
    f.write('config\trepo\tfile\tsite\tline\tvariant\tclauses\tdpopt_rc\tfirst_code\tall_codes\tfirst_message\tnvcc\n')
    for r in rows:
        f.write('\t'.join(str(r[k]) for k in ['config', 'repo', 'file', 'site', 'line', 'variant', 'clauses', 'rc',
                                               'first_code', 'codes', 'first', 'nvcc']) + '\n')
json.dump(rows, open(T + '/matrix.json', 'w'), indent=1)
