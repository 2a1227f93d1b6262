# QT port to CUDA 13 / sm_90 (kernel.base.cu itself is left byte-identical):
# 1. common.h declares __shfl_up itself, and kernel.base.cu uses __any/__ballot/__shfl_up without _sync,
#    which ptxas rejects for sm_70+ ("Instruction 'vote' without '.sync' is not supported on .target sm_70").
#    Replace the declaration with macros to the _sync forms (full mask: every use is warp-uniform).
python3 - <<'PY'
s = open('common.h').read()
old = '__device__ int __shfl_up(int var, unsigned int delta, int width);'
assert old in s
s = s.replace(old, '#define __any(p) __any_sync(0xffffffffu, (p))\n#define __ballot(p) __ballot_sync(0xffffffffu, (p))\n#define __shfl_up(v, d, w) __shfl_up_sync(0xffffffffu, (v), (d), (w))')
open('common.h', 'w').write(s)
# 2. main.cu relied on thrust headers that older Thrust pulled in transitively (tuple, zip_iterator,
#    generate, host_vector) and on <iostream> via helper_cuda.h.
m = open('main.cu').read()
old = '#include <thrust/device_vector.h>\n'
assert old in m
m = m.replace(old, old + '#include <thrust/host_vector.h>\n#include <thrust/tuple.h>\n#include <thrust/generate.h>\n#include <thrust/iterator/zip_iterator.h>\n#include <iostream>\n', 1)
open('main.cu', 'w').write(m)
PY
