/**
 * The stages a predictor is built from: {@link org.scaledl.model.cost.LayerStage} (a layer cost stage: per-layer times,
 * workload-level terms and memory as a {@link org.scaledl.model.cost.StageCost}) and the solvers they share.
 * Exported because {@code RuntimePredictor.operators()} returns its {@link org.scaledl.model.cost.OperatorCost}: the
 * types a predictor returns are the API; the rest (the solvers, quantiles, rooflines) are the stages' internals, which
 * may change between releases without notice.
 */
package org.scaledl.model.cost;
