#!/usr/bin/env python3
"""SP self-check: outputs/partial.cnf must be the input formula simplified by the fixed variables of
outputs/sp_sol.dat -- exactly what the decimate kernels (decimate / decimate_child, the transformed site)
compute: a clause with a literal made true by a fixed variable is dropped (clauses.sat), the others keep
their unfixed literals (vars.sat). Prints 'consistent nfixed=N' or 'inconsistent: ...'.
usage: sp_check.py INPUT.cnf outputs/sp_sol.dat outputs/partial.cnf"""
import sys
cnf, sol, part = sys.argv[1:4]
clauses = []
for line in open(cnf):
    t = line.split()
    if not t or t[0] in ('c', 'p'): continue
    lits = [int(x) for x in t]
    assert lits[-1] == 0
    clauses.append(lits[:-1])
fixed = {}
for line in open(sol):
    if line.strip():
        l = int(line); fixed[abs(l)] = l > 0
exp = []
for c in clauses:
    if any(abs(l) in fixed and fixed[abs(l)] == (l > 0) for l in c): continue
    exp.append(' '.join(str(l) for l in c if abs(l) not in fixed) + (' ' if any(abs(l) not in fixed for l in c) else '') + '0')
got = open(part).read().splitlines()
header, body = got[0], got[1:]
nv = max(abs(l) for c in clauses for l in c)
if body != exp:
    bad = next(i for i in range(max(len(body), len(exp))) if i >= len(body) or i >= len(exp) or body[i] != exp[i])
    print(f'inconsistent: {len(body)} clauses in partial.cnf, expected {len(exp)}; first difference at clause line {bad + 1}:'
          f' got {body[bad] if bad < len(body) else None!r} expected {exp[bad] if bad < len(exp) else None!r}')
    sys.exit(1)
print(f'consistent nfixed={len(fixed)} remaining={len(exp)}')
