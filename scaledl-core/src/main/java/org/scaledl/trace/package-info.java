/**
 * Reading profiler traces of PyTorch models: {@link org.scaledl.trace.FxTraceReader} turns a torch.fx node trace
 * (NeuSight's layout, one traced transformer block plus a repeat count) into a whole-model
 * {@link org.scaledl.graph.ModelGraph} and keeps the per-node measured latencies as training data.
 */
package org.scaledl.trace;
