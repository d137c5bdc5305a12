/**
 * How a job executes across devices: {@link org.scaledl.model.exec.ParallelExecution} (data, tensor and pipeline
 * parallelism of any graph, eager dispatch, memory) and {@link org.scaledl.model.exec.MegatronExecution} (a
 * configuration-built transformer the way Megatron runs it: layer roles and block kinds, interleaved 1F1B pipelines,
 * tensor, sequence, context and expert parallelism, ZeRO, precision recipes, recomputation, memory per stage), whose
 * iteration is a set of named {@link org.scaledl.model.exec.ExecutionTerm terms} that
 * {@link org.scaledl.model.exec.MegatronFit} fits on whole-iteration times. Internal to the core module.
 */
package org.scaledl.model.exec;
