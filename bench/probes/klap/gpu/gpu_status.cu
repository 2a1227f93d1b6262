// Linked into every binary that gpu_run.sh runs (not part of the benchmarks): prints, on stderr,
//   GPU_STATUS <where> sync=<cudaDeviceSynchronize()> last=<cudaGetLastError()>
// once, just before the program's cudaDeviceReset() (BT and QT call it before exiting; the link wraps it with
// -Xlinker --wrap=cudaDeviceReset) or else at exit. A benchmark whose kernels fault keeps running on the host
// (BT, QT and SP check no CUDA error), so this line is what shows a device-side failure.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

static bool gpu_status_done = false;
static void gpu_status_report(const char *where)
{
    if (gpu_status_done) return;
    gpu_status_done = true;
    cudaError_t s = cudaDeviceSynchronize();
    cudaError_t l = cudaGetLastError();
    fprintf(stderr, "GPU_STATUS %s sync=%s last=%s\n", where, cudaGetErrorName(s), cudaGetErrorName(l));
    fflush(stderr);
}

extern "C" cudaError_t __real_cudaDeviceReset(void);
extern "C" cudaError_t __wrap_cudaDeviceReset(void)
{
    gpu_status_report("before-cudaDeviceReset");
    return __real_cudaDeviceReset();
}

static void gpu_status_at_exit(void) { gpu_status_report("at-exit"); }

// Initialise the runtime first, so that our exit handler is registered after the runtime's own and runs
// before the runtime is torn down.
static struct GpuStatusRegister {
    GpuStatusRegister() { cudaFree(0); atexit(gpu_status_at_exit); }
} gpu_status_register;
