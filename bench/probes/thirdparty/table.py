#!/usr/bin/env python3
"""results/matrix_all.json -> results/matrix.tsv and results/matrix.md (program x site x variant)."""
import json, collections
r = json.load(open('/tmp/thirdparty/results/matrix_all.json'))
PN = {'md': 'mandelbrot-dyn', 'adapt': 'mandelbrot-adapt', 'at': 'auto_test', 'sbr': 'src/dp_sbr',
      'bfs': 'bfs-dp', 'bfsR': 'bfs-dp (respelled)', 'cms': 'cms test-dp'}
def outcome(x):
    if x['panic']:
        return 'PANIC'
    if x['dpopt_rc'] != 0:
        return 'refused'
    return 'nvcc OK' if x['nvcc'] == 'OK' else 'nvcc FAIL'
with open('/tmp/thirdparty/results/matrix.tsv', 'w') as f:
    f.write('prog\tsite\tkernel\tvariant\tclauses\tdpopt_rc\tcodes\tfirst_message\tnvcc\tnvcc_first_error\n')
    for x in r:
        f.write('\t'.join([x['prog'], x['site'], x['kernel'], x['variant'], x['clauses'], str(x['dpopt_rc']),
                           ','.join(x['codes']), x['first'].replace('\t', ' '), x['nvcc'],
                           x.get('nvcc_first', '')]) + '\n')
# compact markdown: one row per program/site, one column per variant
vars_ = ['T', 'C', 'TCw', 'TCb', 'TCm', 'TCg', 'G', 'F', 'D', 'Tct', 'T+C', 'TCg+G']
ABBR = {'not_serializable': 'ns', 'builtin_in_callee': 'bic', 'block_aggregation': 'ba', 'floor': 'fl',
        'no_launch': 'nl', 'threshold_decided': 'td'}
cells = collections.OrderedDict()
for x in r:
    cells.setdefault((x['prog'], x['site']), {})[x['variant']] = x
lines = ['| program | site (child) | ' + ' | '.join(vars_) + ' |', '|' + '---|' * (len(vars_) + 2)]
for (p, s), d in cells.items():
    row = []
    for v in vars_:
        x = d.get(v)
        if not x:
            row.append('')
            continue
        o = outcome(x)
        codes = '/'.join(ABBR.get(c, c) for c in x['codes'])
        if o == 'refused':
            row.append('R:' + codes)
        elif o == 'nvcc OK':
            row.append('OK' + ('(' + codes + ')' if codes else ''))
        elif o == 'nvcc FAIL':
            row.append('**NVCC-FAIL**')
        else:
            row.append('**PANIC**')
    kern = next(iter(d.values()))['kernel']
    lines.append(f'| {PN[p]} | {s} ({kern}) | ' + ' | '.join(row) + ' |')
tot = collections.Counter(outcome(x) for x in r)
brief = [x for x in r if x['variant'] in ('T', 'C', 'TCw', 'TCb', 'TCm', 'TCg', 'G', 'F', 'D') and x['site'] != 'all3']
tb = collections.Counter(outcome(x) for x in brief)
open('/tmp/thirdparty/results/matrix.md', 'w').write('\n'.join(lines) + '\n\n' +
    f'all {len(r)} cells: ' + ', '.join(f'{k} {v}' for k, v in sorted(tot.items())) + '\n\n' +
    f"the brief's 9 variants x 15 single sites (bfsR = bfs with the launch respelled) ({len(brief)} cells): " + ', '.join(f'{k} {v}' for k, v in sorted(tb.items())) + '\n')
print(open('/tmp/thirdparty/results/matrix.md').read())
