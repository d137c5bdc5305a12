/**
 * What to profile: {@link org.scaledl.model.plan.ProfilingPlan} chooses D-optimal runs (Fedorov exchange on the
 * predictor's design rows), of a given number or within a budget of profiling time or GPU-hours priced by
 * {@link org.scaledl.model.plan.ProfilingCost}.
 */
package org.scaledl.model.plan;
