#!/usr/bin/env python3
"""GPU pack for /tmp/thirdparty2 (pcc, sbfs1, sbfs2, bsa, rgbi): builds the baselines and every
variant that dpopt accepted and nvcc compiled (manifest.tsv), in parallel; runs them (60 s timeout
each, up to RUN_JOBS at a time), compares each variant with its baseline exactly as
/tmp/thirdparty2/scripts/gpu_run.py's key()/same() do, and writes $OUT/tp2/results.tsv and
$OUT/tp2/summary.txt.  Each baseline is run twice (determinism).

Environment:
  OUT           output folder (results go to $OUT/tp2); default ./out
  NVCC          nvcc to use; default `nvcc` on PATH, else /usr/local/cuda/bin/nvcc
  BUILD_JOBS    parallel builds (default min(16, cpu count))
  RUN_JOBS      parallel runs (default 4)
  RUN_TIMEOUT   seconds per run (default 60)
  TOTAL_S       global wall budget in seconds from start (default 530); a run is only started
                while start + RUN_TIMEOUT + 10 <= TOTAL_S, otherwise it is SKIPPED
  DRY=1         no GPU: build only (full compile+link, same command) DRY_N items (default 3,
                'all' for every item), using the local pip nvcc unless NVCC is set; no runs
  ARGS_<cfg>    override a program's arguments, e.g. ARGS_rgbi="1024"
  ONLY          comma list of configs to keep (testing)
  BUILD_DIR     where executables go (default $TMPDIR or /tmp, /gpu-tp2-build), outside the pack
Usage: python3 run.py            (normal)
       python3 run.py --finalize (rewrite results.tsv/summary.txt from $OUT/tp2/records.jsonl)
"""
import concurrent.futures as cf
import json, os, re, shutil, signal, subprocess, sys, threading, time

T0 = time.time()
PACK = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.abspath(os.environ.get('OUT') or os.path.join(PACK, 'out')), 'tp2')
DRY = os.environ.get('DRY', '') not in ('', '0')
LOCAL_NVCC = '/work/main/.venv-nvcc/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc'


def find_nvcc():
    if os.environ.get('NVCC'):
        return os.environ['NVCC']
    if DRY and os.path.exists(LOCAL_NVCC):
        return LOCAL_NVCC
    p = shutil.which('nvcc')
    if p:
        return p
    return '/usr/local/cuda/bin/nvcc'


NVCC = find_nvcc()
NV = ['-rdc=true', '-arch=sm_90', '-O2', '-diag-suppress', '174']
BUILD_JOBS = int(os.environ.get('BUILD_JOBS') or min(16, os.cpu_count() or 4))
RUN_JOBS = int(os.environ.get('RUN_JOBS') or 4)
RUN_TIMEOUT = float(os.environ.get('RUN_TIMEOUT') or 60)
TOTAL_S = float(os.environ.get('TOTAL_S') or 530)
BUILD_TIMEOUT = 240
BUILD_DEADLINE = TOTAL_S - RUN_TIMEOUT - 10   # builds not started by then are skipped (their run could not start)

P, C, Dr = 'prog', 'compat', 'drivers'
BUILD = {  # config -> (nvcc flags, extra sources (drivers), run args)   (as gpu_run.py)
    'pcc':   (['-I', C + '/common'], [], []),
    'sbfs1': (['-I', C + '/sbfs'], [Dr + '/sbfs_main.cu'], []),
    'sbfs2': (['-I', C + '/sbfs'], [Dr + '/sbfs_main.cu'], []),
    'bsa':   (['-I', P + '/bsa/include', '-I', C + '/bsa'], [Dr + '/bsa_main.cu'], []),
    'rgbi':  (['-I', P + '/rgbi', '-I', C + '/rgbi', '-DTP2_RGBI_DROP_DEVICE_SYNC'], [Dr + '/rgbi_main.cu'], []),
}
BASE = {'pcc': 'base/pcc_ms.cu',  # the original after `dpopt transform --migrate-sync`
        'sbfs1': P + '/sbfs/22_dynamic_parallelism/1_DPBfsFrontier copy.cu',
        'sbfs2': P + '/sbfs/22_dynamic_parallelism/2_DPbfs_threshold.cu',
        'bsa': P + '/bsa/src/reorder_gpu.cu', 'rgbi': P + '/rgbi/kernel.cu'}


def run_args(cfg):
    a = os.environ.get('ARGS_' + cfg.replace('-', '_'))
    return a.split() if a is not None else BUILD[cfg][2]


# ---- key()/same() exactly as gpu_run.py ----
def key(cfg, out):
    if cfg == 'pcc': return re.findall(r'gpu_sum: (-?\d+)', out) + re.findall(r'cpu_sum: (\d+)', out)
    if cfg.startswith('sbfs'): return re.findall(r'(PASS|FAIL)', out)[:1] + re.findall(r'checksum (\d+)', out)
    if cfg == 'bsa': return re.findall(r'clusters (\d+) permutation-hash (\w+)', out) + re.findall(r'(PASS|FAIL)', out)[:1]
    if cfg == 'rgbi': return re.findall(r'sparse ([\d.]+)', out) + re.findall(r'(PASS|FAIL)', out)[-1:]


def same(cfg, a, b):
    if cfg == 'rgbi':
        try: return abs(float(a[0]) - float(b[0])) <= 1e-3 * abs(float(b[0])) and a[1] == 'PASS'
        except Exception: return False
    return a == b


def self_check(cfg, out):
    """The program's own correctness verdict (not part of same()): pcc: every gpu_sum == cpu_sum;
    the others: their driver's PASS line."""
    if cfg == 'pcc':
        g, c = re.findall(r'gpu_sum: (-?\d+)', out), re.findall(r'cpu_sum: (\d+)', out)
        if not g or not c: return 'NONE'
        return 'PASS' if all(x == c[0] for x in g) else 'FAIL'
    v = re.findall(r'(PASS|FAIL)', out)
    if cfg == 'rgbi': v = v[-1:]   # as key(): the last PASS/FAIL; sbfs/bsa: the first
    return v[0] if v else 'NONE'


# ---- work list ----
def load_items():
    items = []  # dict(name, config, site, variant, clauses, src)
    only = set(filter(None, os.environ.get('ONLY', '').split(',')))
    for cfg, src in BASE.items():
        items.append(dict(name=f'{cfg}__base', config=cfg, site='(baseline)', variant='-', clauses='', src=src))
    groups = {}
    with open(os.path.join(PACK, 'manifest.tsv')) as f:
        next(f)
        for line in f:
            cfg, site, var, clauses, src = line.rstrip('\n').split('\t')
            groups.setdefault((cfg, site), []).append(
                dict(name=f'{cfg}__{site}__{var}', config=cfg, site=site, variant=var, clauses=clauses, src=src))
    # round-robin over the launch sites so a deadline cut leaves every site some coverage
    gl = list(groups.values())
    while any(gl):
        for g in gl:
            if g: items.append(g.pop(0))
    if only:
        items = [i for i in items if i['config'] in only]
    return items


BUILD_DIR = os.environ.get('BUILD_DIR') or os.path.join(os.environ.get('TMPDIR') or '/tmp', 'gpu-tp2-build')


def exe_path(it):
    return os.path.join(BUILD_DIR, it['name'])


def build(it):
    if time.time() - T0 > BUILD_DEADLINE:
        return dict(status='SKIPPED', log='build not started before the deadline', secs=0)
    fl, extra, _ = BUILD[it['config']]
    cmd = [NVCC] + NV + fl + [it['src']] + extra + ['-o', exe_path(it), '-lcudadevrt']
    t = time.time()
    tmo = max(5.0, min(BUILD_TIMEOUT, TOTAL_S - 15 - (t - T0)))
    try:
        b = subprocess.run(cmd, cwd=PACK, capture_output=True, text=True, timeout=tmo)
        ok, log = b.returncode == 0, b.stdout + b.stderr
    except subprocess.TimeoutExpired:
        ok, log = False, f'build timed out after {tmo:.0f} s'
    except OSError as e:
        ok, log = False, f'cannot run nvcc: {e}'
    log = ' '.join(map(shlex_quote, cmd)) + '\n' + log
    with open(os.path.join(OUT, 'logs', it['name'] + '.build.txt'), 'w') as f:
        f.write(log)
    return dict(status='OK' if ok else 'BUILD-FAIL', log=log, secs=round(time.time() - t, 1))


def shlex_quote(s):
    import shlex
    return shlex.quote(s)


_lock = threading.Lock()
ACTIVE = set()   # pids (= process group ids) of running programs
ITEMS = []


def on_term(signum, frame):
    for pid in list(ACTIVE):
        try: os.killpg(pid, signal.SIGKILL)
        except OSError: pass
    try:
        recs = [json.loads(l) for l in open(os.path.join(OUT, 'records.jsonl'))]
        finalize(recs, ITEMS or None, note=f'NOTE: runner got signal {signum} at {time.time() - T0:.0f} s; '
                                            'unfinished items are SKIPPED')
    except Exception as e:
        print('[tp2] finalize after signal failed:', e, flush=True)
    os._exit(0)


def record(rec):
    with _lock:
        with open(os.path.join(OUT, 'records.jsonl'), 'a') as f:
            f.write(json.dumps(rec) + '\n')


def run_one(it, tag, bfut):
    """Wait for the build, then run it once (unless past the deadline)."""
    rec = dict(name=it['name'], config=it['config'], site=it['site'], variant=it['variant'] if tag == '' else tag,
               clauses=it['clauses'], exit='-', out='', seconds=0, build_seconds=0)
    # wait for the build, at most until the last moment a run may start
    latest = TOTAL_S - RUN_TIMEOUT - 10
    try:
        b = bfut.result(timeout=max(0.0, latest - (time.time() - T0)))
    except cf.TimeoutError:
        rec.update(status='SKIPPED', out='build not finished before the deadline'); record(rec); return rec
    rec['build_seconds'] = b['secs']
    if b['status'] != 'OK':
        rec.update(status=b['status'], out=b['log'].split('\n', 1)[-1][:4000]); record(rec); return rec
    if DRY:
        rec.update(status='BUILT (dry)'); record(rec); return rec
    if time.time() - T0 > latest:
        rec.update(status='SKIPPED', out='run not started before the deadline'); record(rec); return rec
    t = time.time()
    try:
        p = subprocess.Popen([exe_path(it)] + run_args(it['config']), cwd=BUILD_DIR,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        ACTIVE.add(p.pid)
        try:
            out, _ = p.communicate(timeout=RUN_TIMEOUT)
            rec.update(status='RAN', exit=p.returncode)
        except subprocess.TimeoutExpired:
            try: os.killpg(p.pid, signal.SIGKILL)
            except OSError: pass
            out, _ = p.communicate()
            rec.update(status='TIMEOUT', exit='-')
        ACTIVE.discard(p.pid)
        out = out.decode('utf-8', 'replace')
    except OSError as e:
        out = f'cannot run: {e}'; rec.update(status='RAN', exit='oserror')
    rec['seconds'] = round(time.time() - t, 2)
    with open(os.path.join(OUT, 'logs', it['name'] + (('.' + tag) if tag else '') + '.run.txt'), 'w') as f:
        f.write(out)
    rec['out'] = out[-100000:] if len(out) > 200000 else out
    record(rec)
    return rec


# ---- results ----
def finalize(recs, items=None, note=''):
    """recs: run records (dicts as written to records.jsonl). Items without a record are SKIPPED."""
    by = {}
    for r in recs:
        by[(r['name'], r['variant'] if r['site'] == '(baseline)' else '')] = r
    if items is not None:
        for it in items:
            for tag in (['run1', 'run2'] if it['site'] == '(baseline)' else ['']):
                if (it['name'], tag) not in by:
                    by[(it['name'], tag)] = dict(name=it['name'], config=it['config'], site=it['site'],
                                                 variant=tag or it['variant'], clauses=it['clauses'], exit='-',
                                                 out='not run (killed at the global deadline)', seconds=0,
                                                 build_seconds=0, status='SKIPPED')
    base = {}
    for (name, tag), r in by.items():
        if r['site'] == '(baseline)' and r['status'] == 'RAN':
            base.setdefault(r['config'], {})[tag] = r
    rows = []
    counts = {}
    def k_of(r):
        return key(r['config'], r['out']) if r['status'] == 'RAN' else None
    order = sorted(by.values(), key=lambda r: (r['site'] != '(baseline)', r['config'], r['site'], r['variant']))
    for r in order:
        cfg = r['config']
        k = k_of(r)
        sc = self_check(cfg, r['out']) if r['status'] == 'RAN' else '-'
        b1, b2 = base.get(cfg, {}).get('run1'), base.get(cfg, {}).get('run2')
        if r['site'] == '(baseline)':
            if r['variant'] == 'run2' and b1 is not None and k is not None:
                sab = same(cfg, k, k_of(b1))
            else:
                sab = '-'
            status = {'RAN': 'OK' if r['exit'] == 0 else 'RUN-FAIL'}.get(r['status'], r['status'])
            sab2 = '-'
        else:
            if r['status'] != 'RAN':
                status, sab, sab2 = r['status'], '-', '-'
            else:
                sab = same(cfg, k, k_of(b1)) if b1 is not None else 'no-baseline'
                sab2 = same(cfg, k, k_of(b2)) if b2 is not None else 'no-baseline'
                bexit = b1['exit'] if b1 is not None else 0
                if not k or (r['exit'] != 0 and r['exit'] != bexit):
                    status = 'RUN-FAIL'
                elif sab is True:
                    status = 'SAME'
                else:
                    status = 'DIFF'
            counts[status] = counts.get(status, 0) + 1
        r['_status'], r['_sc'], r['_sab2'] = status, sc, sab2
        rows.append([cfg, r['site'], r['variant'], r['exit'], k if k is not None else '-', sab, r['seconds'],
                     status, sc, sab2, r.get('clauses', ''), r.get('build_seconds', 0)])
    with open(os.path.join(OUT, 'results.tsv'), 'w') as f:
        f.write('config\tsite\tvariant\texit\tkey\tsame_as_baseline\tseconds\tstatus\tself_check\t'
                'same_as_baseline_run2\tclauses\tbuild_seconds\n')
        for row in rows:
            f.write('\t'.join(str(x) for x in row) + '\n')
    with open(os.path.join(OUT, 'summary.txt'), 'w') as f:
        f.write(f'tp2 GPU pack: {len([r for r in by.values() if r["site"] != "(baseline)"])} variants, '
                f'{len(base)} configs with a baseline run; wall {time.time() - T0:.0f} s; nvcc {NVCC}; DRY={int(DRY)}\n')
        if note: f.write(note + '\n')
        f.write('variant counts: ' + '  '.join(f'{s} {counts.get(s, 0)}' for s in
                                               ['SAME', 'DIFF', 'BUILD-FAIL', 'TIMEOUT', 'RUN-FAIL', 'SKIPPED'])
                + ''.join(f'  {s} {n}' for s, n in counts.items()
                          if s not in ('SAME', 'DIFF', 'BUILD-FAIL', 'TIMEOUT', 'RUN-FAIL', 'SKIPPED')) + '\n\n')
        f.write('baselines (run1 key / run2 key; deterministic = same(run2, run1)):\n')
        for cfg in BASE:
            rs = [by.get((f'{cfg}__base', t)) for t in ('run1', 'run2')]
            desc = []
            for t, r in zip(('run1', 'run2'), rs):
                if r is None: desc.append(f'{t}: none'); continue
                desc.append(f'{t}: {r["_status"]} exit {r["exit"]} key {k_of(r)} self_check '
                            f'{self_check(cfg, r["out"]) if r["status"] == "RAN" else "-"} {r["seconds"]} s')
            det = '-'
            if all(r is not None and r['status'] == 'RAN' for r in rs):
                det = same(cfg, k_of(rs[1]), k_of(rs[0]))
            f.write(f'  {cfg}: ' + ' | '.join(desc) + f' | deterministic {det}\n')
        f.write('\nnon-SAME rows (first 300 characters of output):\n')
        for r in order:
            if r['site'] != '(baseline)' and r['_status'] == 'SAME': continue
            if r['site'] == '(baseline)' and r['_status'] == 'OK': continue
            txt = r['out'][:300].replace('\n', ' | ')
            extra = ''
            if r['site'] != '(baseline)' and r['status'] == 'RAN':
                extra = f' (self_check {r["_sc"]}, same as baseline run2: {r["_sab2"]})'
            f.write(f'  {r["config"]} {r["site"]} {r["variant"]} [{r["_status"]}]{extra} exit {r["exit"]}: {txt}\n')
    return counts


def main():
    os.makedirs(os.path.join(OUT, 'logs'), exist_ok=True)
    if sys.argv[1:] == ['--finalize']:
        recs = []
        if os.path.exists(os.path.join(OUT, 'records.jsonl')):
            for line in open(os.path.join(OUT, 'records.jsonl')):
                try: recs.append(json.loads(line))
                except ValueError: pass
        c = finalize(recs, load_items(), note='NOTE: finalized from records.jsonl after the runner was stopped')
        print(c); return
    if os.path.exists(os.path.join(OUT, 'records.jsonl')):
        os.remove(os.path.join(OUT, 'records.jsonl'))
    os.makedirs(BUILD_DIR, exist_ok=True)
    items = load_items()
    if DRY:
        n = os.environ.get('DRY_N', '3')
        if n != 'all':  # pick items of distinct configs first
            picked, seen = [], set()
            for it in items[5:] + items[:5]:
                if it['config'] not in seen: picked.append(it); seen.add(it['config'])
            items = picked[:int(n)]
    ITEMS[:] = items
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    try:
        v = subprocess.run([NVCC, '--version'], capture_output=True, text=True).stdout.strip().splitlines()[-1:]
    except OSError as e:
        v = [f'nvcc not runnable: {e}']
    gpu = '-'
    if not DRY and shutil.which('nvidia-smi'):
        gpu = subprocess.run(['nvidia-smi', '-L'], capture_output=True, text=True).stdout.strip()
    print(f'[tp2] {len(items)} builds, nvcc {NVCC} ({" ".join(v)}), GPU {gpu}, BUILD_JOBS {BUILD_JOBS}, '
          f'RUN_JOBS {RUN_JOBS}, RUN_TIMEOUT {RUN_TIMEOUT}, TOTAL_S {TOTAL_S}, DRY {int(DRY)}', flush=True)
    bpool = cf.ThreadPoolExecutor(BUILD_JOBS)
    rpool = cf.ThreadPoolExecutor(1 if DRY else RUN_JOBS)
    bfut = {it['name']: bpool.submit(build, it) for it in items}
    runs = []
    bases = [it for it in items if it['site'] == '(baseline)']
    for tag in ('run1', 'run2'):
        for it in bases:
            runs.append(rpool.submit(run_one, it, tag, bfut[it['name']]))
    for it in items:
        if it['site'] != '(baseline)':
            runs.append(rpool.submit(run_one, it, '', bfut[it['name']]))
    recs = []
    for fu in cf.as_completed(runs):
        r = fu.result()
        recs.append(r)
        print(f'[tp2 {time.time() - T0:5.0f}s] {r["config"]} {r["site"]} {r["variant"]}: {r["status"]} '
              f'exit {r["exit"]} {r["seconds"]} s {key(r["config"], r["out"]) if r["status"] == "RAN" else ""}',
              flush=True)
    try: bpool.shutdown(wait=False, cancel_futures=True)   # Python >= 3.9
    except TypeError: bpool.shutdown(wait=False)
    rpool.shutdown()
    c = finalize(recs, items if not DRY else None)
    print('[tp2] done in %.0f s: %s' % (time.time() - T0, c), flush=True)
    print(open(os.path.join(OUT, 'summary.txt')).read())


if __name__ == '__main__':
    main()
