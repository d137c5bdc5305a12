/**
 * ONNX import: {@link org.scaledl.onnx.OnnxImporter} reads a model file (graph-only exports included) into a
 * {@link org.scaledl.graph.ModelGraph}, with its own shape inference for every supported operator.
 */
package org.scaledl.onnx;
