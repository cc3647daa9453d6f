/** @tickwise/ceiling: The iGPU/NPU split model: pure functions, no I/O. */
export {};
