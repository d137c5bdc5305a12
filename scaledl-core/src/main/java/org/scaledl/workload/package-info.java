/**
 * The vocabulary every other package speaks: what to predict ({@link org.scaledl.workload.Workload}: a graph, a
 * batch, a {@link org.scaledl.workload.Phase}, a {@link org.scaledl.workload.Parallelism} and optionally a
 * {@link org.scaledl.workload.Device}), what was measured ({@link org.scaledl.workload.Sample},
 * {@link org.scaledl.workload.OpMeasurement}) and the per-layer features models read
 * ({@link org.scaledl.workload.LayerFeatures}, {@link org.scaledl.workload.OpFamily}). Values only: no I/O, no
 * fitting. Hardware is data: a {@code Device} describes an accelerator or a CPU machine by its figures.
 */
package org.scaledl.workload;
