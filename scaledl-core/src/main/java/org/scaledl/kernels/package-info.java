/**
 * Per-operator benchmark tables as training data for the device layer model: NeuSight's kernel measurements, DeepBench
 * GEMM and convolution results, and the nodes of profiled model traces, each row turned into a one-layer
 * {@link org.scaledl.graph.ModelGraph} so its features come from the same extractor as any model's layers.
 */
package org.scaledl.kernels;
