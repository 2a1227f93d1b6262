#!/usr/bin/env python3
"""Render results/matrix.json as a markdown table (config x site x variant -> outcome)."""
import json, os, collections
S = os.environ.get('SHOWME', '/tmp/showme')
R = json.load(open(os.path.join(S, 'results', 'matrix.json')))
V = ['T', 'C', 'TCA-warp', 'TCA-block', 'TCA-mb8', 'TCA-grid', 'A-grid', 'floor', 'bare']
ABBR = {'dpopt::not_serializable': 'R:nser', 'dpopt::floor': 'R:floor', 'dpopt::no_launch': 'R:nolaunch',
        'dpopt::block_aggregation': 'R:blkagg', 'dpopt::postwork_nested': 'R:postwork'}
rows = collections.OrderedDict()
for r in R:
    inline = r['variant'].endswith('@inline')
    key = (r['config'], r['site'] + (' (_Pragma inline)' if inline else ''), r['child'])
    v = r['variant'].replace('@inline', '')
    if r['outcome'] == 'refused':
        code = r['diag'].split()[0] if r['diag'] else '?'
        cell = ABBR.get(code, 'R:' + code.replace('dpopt::', ''))
    elif r['outcome'] == 'ok':
        cell = 'ok' + ('*' if r['warnings'] else '')
    else:
        cell = r['outcome'].upper()
    rows.setdefault(key, {})[v] = cell
out = ['| config | site (line_parent) | child | ' + ' | '.join(V) + ' |', '|' + '---|' * (3 + len(V))]
for (cfg, site, child), cells in rows.items():
    out.append('| %s | %s | %s | %s |' % (cfg, site, child, ' | '.join(cells.get(v, '') for v in V)))
c = collections.Counter(r['outcome'] for r in R)
out.append('')
out.append('Totals: %d runs: %s. ok = dpopt output compiled and linked (nvcc 13.5, sm_90); ok* = same, with dpopt warnings '
           '(threshold_decided / alloc_not_aggregated); R:x = refused with dpopt::x (nser = not_serializable, '
           'blkagg = block_aggregation, postwork = postwork_nested); no panics, no nvcc or link errors.' % (len(R), dict(c)))
out.append('Variants: T=threshold(128), C=coarsen(8), TCA-x=threshold(128) coarsen(8) consldt(x) (mb8 = multiblock, 8), '
           'A-grid=consldt(grid), floor, bare=`#pragma dp`.')
open(os.path.join(S, 'results', 'matrix.md'), 'w').write('\n'.join(out) + '\n')
print('\n'.join(out))
