#!/usr/bin/env python3
"""Extract the result an app prints and compare a variant's run with the baseline's.

usage: compare.py extract APP GRAPH.gr STDOUT STDERR RC      -> prints the normalized result
       compare.py compare APP GRAPH.gr BASE.result VAR.result -> exit 0 if equal, else prints why

What is compared (per app; timings, kernel-call counts and other run-to-run noise are dropped):
  all apps     exit code; any "Error: ..." line of cudaCheckError (CUDA API error)
  SpMV         y[i] values (printed by -d on stderr), numerically, rel. tol. 1e-6 (values are printed with %f)
  bfs-rec      the CPU validation line "PASS: GPU bfs rec !" / "ERROR: validation error ..."
  graph-color  the colour of every node (-d prints them); equal to the baseline, or else
               at least a valid colouring (every node coloured, no edge with equal colours):
               the parallel algorithm reads colours written in the same round, so the
               colouring itself may legitimately differ between runs
  pagerank     "PageRank ends in N iterations." (-d; the app prints no ranks)
  sssp         every "From Node s -> v is c" line (-d), exactly; plus "Unsupported solutions"
               (the app's -s 4 falls through to it)
"""
import sys, re, json

def norm(app, out, err, rc):
    r = {'rc': int(rc)}
    r['errors'] = sorted(set(l.strip() for l in (out + err).splitlines() if re.match(r'\s*Error: ', l)))
    if app == 'SpMV':
        r['y'] = [float(m.group(2)) for m in re.finditer(r'^y\[(\d+)\] = (\S+)$', err, re.M)]
    elif app == 'bfs-rec':
        r['check'] = [l.strip() for l in out.splitlines() if l.startswith('PASS:') or l.startswith('ERROR:')]
    elif app == 'graph-color':
        r['colors'] = [int(m.group(2)) for m in re.finditer(r'^Node (\d+): (-?\d+)$', out, re.M)]
    elif app == 'pagerank':
        r['iters'] = re.findall(r'PageRank ends in (\d+) iterations', err)
    elif app == 'sssp':
        r['cost'] = re.findall(r'^From Node .*$', out, re.M)
        r['unsupported'] = 'Unsupported solutions' in out
    return r

def edges(gr):
    e = []
    for l in open(gr):
        if l.startswith('a '):
            _, u, v, _w = l.split()
            e.append((int(u) - 1, int(v) - 1))
    return e

def nodes(gr):
    for l in open(gr):
        if l.startswith('p '):
            return int(l.split()[2])
    return -1

def valid_coloring(colors, gr):
    # every node of the graph coloured (> 0) and no edge between equal colours
    if len(colors) != nodes(gr) or any(c <= 0 for c in colors):
        return False
    return all(colors[u] != colors[v] for u, v in edges(gr) if u != v)

def compare(app, gr, a, b):
    why = []
    if a['rc'] != b['rc']:
        why.append('exit code %d != baseline %d' % (b['rc'], a['rc']))
    if a['errors'] != b['errors']:
        why.append('CUDA errors differ: %s' % b['errors'][:3])
    if app == 'SpMV':
        ya, yb = a['y'], b['y']
        if len(ya) != len(yb):
            why.append('%d y values != baseline %d' % (len(yb), len(ya)))
        else:
            bad = [i for i, (p, q) in enumerate(zip(ya, yb)) if abs(p - q) > 1e-6 * max(1.0, abs(p))]
            if bad:
                why.append('y differs at %d rows, first y[%d]=%r (baseline %r)' % (len(bad), bad[0], yb[bad[0]], ya[bad[0]]))
    elif app == 'bfs-rec':
        if a['check'] != b['check']:
            why.append('validation %s != baseline %s' % (b['check'], a['check']))
    elif app == 'graph-color':
        if a['colors'] != b['colors'] and not valid_coloring(b['colors'], gr):
            why.append('colouring differs from the baseline and is not a valid colouring')
    elif app == 'pagerank':
        if a['iters'] != b['iters']:
            why.append('iterations %s != baseline %s' % (b['iters'], a['iters']))
    elif app == 'sssp':
        if a['cost'] != b['cost']:
            why.append('costs differ (%d lines vs %d)' % (len(b['cost']), len(a['cost'])))
        if a['unsupported'] != b['unsupported']:
            why.append('"Unsupported solutions" printed differently')
    return why

if __name__ == '__main__':
    if sys.argv[1] == 'extract':
        app, gr, so, se, rc = sys.argv[2:7]
        print(json.dumps(norm(app, open(so, errors='replace').read(), open(se, errors='replace').read(), rc)))
    elif sys.argv[1] == 'compare':
        app, gr, fa, fb = sys.argv[2:6]
        why = compare(app, gr, json.load(open(fa)), json.load(open(fb)))
        if why:
            print('; '.join(why))
            sys.exit(1)
