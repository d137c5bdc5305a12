/**
 * The workload graph: {@link org.scaledl.graph.ModelGraph} (layers in topological order, tensors, edges) and its
 * immutable parts, with tensor shapes as affine functions of the batch size ({@link org.scaledl.graph.Dim}).
 */
package org.scaledl.graph;
