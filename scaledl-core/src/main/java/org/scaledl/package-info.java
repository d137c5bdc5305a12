/**
 * ScaleDL: predicts the runtime of deep-learning workloads before they run.
 *
 * <p>Entry points: {@link org.scaledl.onnx.OnnxImporter} reads a graph, {@link org.scaledl.io.DatasetReader} reads
 * measured runs, {@link org.scaledl.model.RuntimePredictor} fits and predicts. Bad data anywhere raises
 * {@link org.scaledl.InvalidInputException}.
 */
package org.scaledl;
