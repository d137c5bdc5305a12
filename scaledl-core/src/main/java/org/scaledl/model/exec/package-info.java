/**
 * How a job executes across devices: {@link org.scaledl.model.exec.ParallelExecution} (data, tensor and pipeline
 * parallelism of any graph, eager dispatch, memory) and {@link org.scaledl.model.exec.MegatronExecution} (a
 * configuration-built transformer the way Megatron runs it: layer roles and block kinds, interleaved 1F1B pipelines,
 * tensor, sequence, context and expert parallelism, ZeRO, precision recipes, recomputation, memory per stage), whose
 * iteration is a set of named {@link org.scaledl.model.exec.ExecutionTerm terms} that
 * {@link org.scaledl.model.exec.MegatronFit} fits on whole-iteration times. Exported because
 * {@code RuntimePredictor.executionModel()} returns its {@link org.scaledl.model.exec.MegatronModel} and terms: those
 * are the API; the execution models' and the fit's other members are internals, which may change between releases
 * without notice.
 */
package org.scaledl.model.exec;
