/**
 * The GNN interaction stage: hand-written message passing over the layer DAG on ND4J, trained on the residuals of
 * the layer-wise model, found by {@link java.util.ServiceLoader} as an {@code InteractionCodec}.
 */
package org.scaledl.gnn;
