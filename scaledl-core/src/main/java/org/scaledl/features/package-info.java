/**
 * Layer cost features: FLOPs (forward and backward, a multiply-accumulate counts 2), bytes moved, parameters and
 * geometry per layer ({@link org.scaledl.features.FeatureExtractor}), grouped into
 * {@link org.scaledl.workload.OpFamily operator families}.
 */
package org.scaledl.features;
