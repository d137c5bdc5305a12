/**
 * The stages a predictor is built from: {@link org.scaledl.model.cost.LayerStage} (a layer cost stage: per-layer times,
 * workload-level terms and memory as a {@link org.scaledl.model.cost.StageCost}) and the solvers they share.
 * Internal to the core module.
 */
package org.scaledl.model.cost;
