// loops_switch.cu - corpus program for dpopt: a task interpreter whose
// parent threads launch children inside a `for` loop (one launch per chunk
// of a range), a `while` loop (chunks that double in size) and the cases of
// a `switch` on the task's opcode. Every element of the output is written
// by exactly one child thread (or by the parent for the no-launch opcode).
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o loops_switch loops_switch.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHUNK 512
#define TPB 64

#define cudaCheck(stmt)                                                         \
  do {                                                                          \
    cudaError_t e = (stmt);                                                     \
    if (e != cudaSuccess) {                                                     \
      printf("[%s:%d] %s -> %s\n", __FILE__, __LINE__, #stmt, cudaGetErrorString(e)); \
      exit(2);                                                                  \
    }                                                                           \
  } while (0)

enum Op { OP_FILL = 0, OP_RAMP = 1, OP_MIRROR = 2, OP_INLINE = 3 };

struct Task {
  int op;
  int begin;
  int len;
};

__device__ unsigned failed_launches;

__global__ void fill(int *out, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

__global__ void ramp(int *out, int n, int base, int step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + step * i;
}

__global__ void mirror(int *out, const int *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[n - 1 - i];
}

__device__ void note(cudaError_t e) {
  if (e != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

__global__ void run_tasks(const Task *tasks, int ntasks, const int *in, int *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= ntasks) return;
  const Task task = tasks[t];
  switch (task.op) {
    case OP_FILL:
      for (int c = 0; c < task.len; c += CHUNK) {
        int m = min(CHUNK, task.len - c);
#pragma dp threshold(128)
        fill<<<(m + TPB - 1) / TPB, TPB>>>(out + task.begin + c, m, t * 10 + c / CHUNK);
        note(cudaGetLastError());
      }
      break;
    case OP_RAMP: {
      int done = 0, step = 64;
      while (done < task.len) {
        int m = min(step, task.len - done);
#pragma dp threshold(128)
        ramp<<<(m + TPB - 1) / TPB, TPB>>>(out + task.begin + done, m, t + done, 3);
        note(cudaGetLastError());
        done += m;
        step *= 2;
      }
      break;
    }
    case OP_MIRROR:
#pragma dp threshold(128)
      mirror<<<(task.len + TPB - 1) / TPB, TPB>>>(out + task.begin, in + task.begin, task.len);
      note(cudaGetLastError());
      break;
    default:
      for (int i = 0; i < task.len; ++i) out[task.begin + i] = -in[task.begin + i];
      break;
  }
}

static int expected_value(const std::vector<Task> &tasks, const std::vector<int> &in, int t, int i) {
  const Task &task = tasks[t];
  switch (task.op) {
    case OP_FILL: return t * 10 + i / CHUNK;
    case OP_RAMP: {
      int done = 0, step = 64;
      while (i >= done + step) { done += step; step *= 2; }
      return t + done + 3 * (i - done);
    }
    case OP_MIRROR: return in[task.begin + task.len - 1 - i];
    default: return -in[task.begin + i];
  }
}

int main() {
  const int ntasks = 3000;
  std::vector<Task> tasks(ntasks);
  int total = 0;
  for (int t = 0; t < ntasks; ++t) {
    int len = (t % 37 == 0) ? 1500 + (t * 71) % 2600 : 1 + (t * 19) % 200;
    tasks[t] = Task{(t * 7) % 4, total, len};
    total += len;
  }
  std::vector<int> in(total), out(total);
  for (int i = 0; i < total; ++i) in[i] = (i * 193) % 4099 - 2000;

  cudaCheck(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 15));
  Task *d_tasks;
  int *d_in, *d_out;
  cudaCheck(cudaMalloc(&d_tasks, ntasks * sizeof(Task)));
  cudaCheck(cudaMalloc(&d_in, total * sizeof(int)));
  cudaCheck(cudaMalloc(&d_out, total * sizeof(int)));
  cudaCheck(cudaMemcpy(d_tasks, tasks.data(), ntasks * sizeof(Task), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(d_in, in.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemset(d_out, 0x7f, total * sizeof(int)));

  cudaEvent_t e0, e1;
  cudaCheck(cudaEventCreate(&e0));
  cudaCheck(cudaEventCreate(&e1));
  cudaCheck(cudaEventRecord(e0));
  run_tasks<<<(ntasks + 127) / 128, 128>>>(d_tasks, ntasks, d_in, d_out);
  cudaCheck(cudaGetLastError());
  cudaCheck(cudaEventRecord(e1));
  cudaCheck(cudaDeviceSynchronize());
  float ms = 0;
  cudaCheck(cudaEventElapsedTime(&ms, e0, e1));

  cudaCheck(cudaMemcpy(out.data(), d_out, total * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned failures = 0;
  cudaCheck(cudaMemcpyFromSymbol(&failures, failed_launches, sizeof failures));
  bool ok = true;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int t = 0; t < ntasks; ++t)
    for (int i = 0; i < tasks[t].len; ++i) {
      int v = out[tasks[t].begin + i];
      if (v != expected_value(tasks, in, t, i)) ok = false;
      h = (h ^ (uint32_t)v) * 0x100000001b3ull;
    }
  printf("result example=loops_switch input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, failures);
  cudaCheck(cudaFree(d_tasks));
  cudaCheck(cudaFree(d_in));
  cudaCheck(cudaFree(d_out));
  return (ok && failures == 0) ? 0 : 1;
}
