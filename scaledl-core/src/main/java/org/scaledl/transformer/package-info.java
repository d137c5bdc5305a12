/**
 * Transformers from a configuration, without an export or weights: {@link org.scaledl.transformer.TransformerSpec}
 * (decoder-only, encoder-only, encoder-decoder; GQA/MQA, GELU/ReLU or SwiGLU feed-forward, mixture of experts) read
 * from Hugging Face {@code config.json} files or built by hand, as a compact layer graph in the ONNX importer's
 * vocabulary.
 */
package org.scaledl.transformer;
