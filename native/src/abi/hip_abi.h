// Hand-written declarations of the part of the HIP runtime C API that tickwise
// intercepts or that its fakes implement. Each mirrors a declaration of
// hip/hip_runtime_api.h (ROCm 5.x/6.x, AMD platform); the mirrored C
// declaration is named above each one. Nothing here is copied from HIP.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// mirrors: typedef enum hipError_t { hipSuccess = 0, ... } hipError_t;
typedef int hipError_t;
constexpr hipError_t kHipSuccess = 0;
constexpr hipError_t kHipErrorInvalidValue = 1;
constexpr hipError_t kHipErrorNotInitialized = 3;
constexpr hipError_t kHipErrorInvalidDevice = 101;
constexpr hipError_t kHipErrorInvalidResourceHandle = 400;

// mirrors: typedef struct ihipStream_t* hipStream_t; (and the other opaque handles)
typedef struct ihipStream_t* hipStream_t;
typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
typedef struct ihipEvent_t* hipEvent_t;
typedef struct ihipGraph* hipGraph_t;
typedef struct hipGraphNode* hipGraphNode_t;
typedef struct hipGraphExec* hipGraphExec_t;

// mirrors: typedef struct dim3 { uint32_t x; uint32_t y; uint32_t z; } dim3;
struct dim3 {
  uint32_t x, y, z;
};

// mirrors: typedef struct hipLaunchAttribute_st hipLaunchAttribute; (opaque here)
struct hipLaunchAttribute;

// mirrors: typedef struct HIP_LAUNCH_CONFIG_st { dim3 gridDim; dim3 blockDim;
//   size_t dynamicSmemBytes; hipStream_t stream; hipLaunchAttribute* attrs;
//   unsigned int numAttrs; } hipLaunchConfig_t;
struct hipLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  hipStream_t stream;
  hipLaunchAttribute* attrs;
  unsigned int numAttrs;
};

// mirrors: typedef struct hipKernelNodeParams { dim3 blockDim; void** extra;
//   void* func; dim3 gridDim; void** kernelParams; unsigned int sharedMemBytes; } hipKernelNodeParams;
struct hipKernelNodeParams {
  dim3 blockDim;
  void** extra;
  void* func;
  dim3 gridDim;
  void** kernelParams;
  unsigned int sharedMemBytes;
};

// mirrors: hipDeviceAttribute_t's hipDeviceAttributeWallClockRate ("constant
// frequency of the wall clock in kHz"), in the AMD-specific range.
typedef int hipDeviceAttribute_t;
constexpr hipDeviceAttribute_t kHipDeviceAttributeWallClockRate = 10017;

// mirrors: hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks,
//   dim3 dimBlocks, void** args, size_t sharedMemBytes, hipStream_t stream);
hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                           size_t sharedMemBytes, hipStream_t stream);
// mirrors: hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, ...
//   unsigned int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream, void** kernelParams, void** extra);
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                 unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                 unsigned int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream,
                                 void** kernelParams, void** extra);
// mirrors: hipError_t hipExtLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks,
//   void** args, size_t sharedMemBytes, hipStream_t stream, hipEvent_t startEvent, hipEvent_t stopEvent, int flags);
hipError_t hipExtLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                              size_t sharedMemBytes, hipStream_t stream, hipEvent_t startEvent,
                              hipEvent_t stopEvent, int flags);
// mirrors: hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* fPtr, void** args);
hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* fPtr, void** args);
// mirrors: hipError_t hipLaunchCooperativeKernel(const void* f, dim3 gridDim, dim3 blockDimX,
//   void** kernelParams, unsigned int sharedMemBytes, hipStream_t stream);
hipError_t hipLaunchCooperativeKernel(const void* f, dim3 gridDim, dim3 blockDimX, void** kernelParams,
                                      unsigned int sharedMemBytes, hipStream_t stream);
// mirrors: hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream);
hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream);
// mirrors: hipError_t hipDeviceSynchronize(void);
hipError_t hipDeviceSynchronize(void);
// mirrors: hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
// mirrors: hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname);
hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname);
// mirrors: hipError_t hipModuleLoadData(hipModule_t* module, const void* image);
hipError_t hipModuleLoadData(hipModule_t* module, const void* image);
// mirrors: const char* hipKernelNameRef(const hipFunction_t f);
const char* hipKernelNameRef(const hipFunction_t f);
// mirrors: const char* hipKernelNameRefByPtr(const void* hostFunction, hipStream_t stream);
const char* hipKernelNameRefByPtr(const void* hostFunction, hipStream_t stream);
// mirrors: hipError_t hipGetDeviceCount(int* count);
hipError_t hipGetDeviceCount(int* count);
// mirrors: hipError_t hipDeviceGetAttribute(int* pi, hipDeviceAttribute_t attr, int deviceId);
hipError_t hipDeviceGetAttribute(int* pi, hipDeviceAttribute_t attr, int deviceId);
// mirrors: hipError_t hipSetDevice(int deviceId); hipError_t hipGetDevice(int* deviceId);
hipError_t hipSetDevice(int deviceId);
hipError_t hipGetDevice(int* deviceId);
// mirrors: hipError_t hipStreamCreate(hipStream_t* stream); hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamCreate(hipStream_t* stream);
hipError_t hipStreamDestroy(hipStream_t stream);
// mirrors: hipError_t hipGraphCreate(hipGraph_t* pGraph, unsigned int flags);
hipError_t hipGraphCreate(hipGraph_t* pGraph, unsigned int flags);
// mirrors: hipError_t hipGraphAddKernelNode(hipGraphNode_t* pGraphNode, hipGraph_t graph,
//   const hipGraphNode_t* pDependencies, size_t numDependencies, const hipKernelNodeParams* pNodeParams);
hipError_t hipGraphAddKernelNode(hipGraphNode_t* pGraphNode, hipGraph_t graph, const hipGraphNode_t* pDependencies,
                                 size_t numDependencies, const hipKernelNodeParams* pNodeParams);
// mirrors: hipError_t hipGraphInstantiate(hipGraphExec_t* pGraphExec, hipGraph_t graph,
//   hipGraphNode_t* pErrorNode, char* pLogBuffer, size_t bufferSize);
hipError_t hipGraphInstantiate(hipGraphExec_t* pGraphExec, hipGraph_t graph, hipGraphNode_t* pErrorNode,
                               char* pLogBuffer, size_t bufferSize);
// mirrors: hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec); hipError_t hipGraphDestroy(hipGraph_t graph);
hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec);
hipError_t hipGraphDestroy(hipGraph_t graph);
// mirrors: void** __hipRegisterFatBinary(const void* data);
void** __hipRegisterFatBinary(const void* data);
// mirrors: void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction,
//   const char* deviceName, unsigned int threadLimit, uint3* tid, uint3* bid, dim3* blockDim, dim3* gridDim, int* wSize);
void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction, const char* deviceName,
                           unsigned int threadLimit, void* tid, void* bid, dim3* blockDim, dim3* gridDim, int* wSize);

}  // extern "C"

// Declared with C++ linkage, as hip/hip_ext.h declares it (HIP_PUBLIC_API, outside
// any extern "C"): libamdhip64 exports it only under its mangled name
// _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j
// (hip_4.2 in HIP 5.2.3's libamdhip64.so.5), which every caller therefore references.
// Linking native/tests/apps/app_real_hip.cpp against the real library checks this name.
// mirrors: HIP_PUBLIC_API hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX, ...
//   uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream, void** kernelParams,
//   void** extra, hipEvent_t startEvent, hipEvent_t stopEvent, uint32_t flags);
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY,
                                    uint32_t globalWorkSizeZ, uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream,
                                    void** kernelParams, void** extra, hipEvent_t startEvent,
                                    hipEvent_t stopEvent, uint32_t flags);
