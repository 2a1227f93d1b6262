# CUDA 13 removed cudaThreadSynchronize (deprecated since CUDA 4): LonestarGPU's common.h calls it in CudaTest().
sed -i 's/cudaThreadSynchronize()/cudaDeviceSynchronize()/' lonestargpu/common.h
