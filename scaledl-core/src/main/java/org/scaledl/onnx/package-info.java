/**
 * ONNX import: {@link org.scaledl.onnx.OnnxImporter} reads a model file (graph-only exports and exports with
 * external data included) into a {@link org.scaledl.graph.ModelGraph}, with its own shape inference for every
 * supported operator, in the form of the model's opset. Hostile files end in a
 * {@link org.scaledl.InvalidInputException} naming the file, node and tensor, after work linear in their size; names
 * are escaped as they are read so that printing them is safe.
 */
package org.scaledl.onnx;
