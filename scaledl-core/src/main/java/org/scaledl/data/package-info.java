/**
 * Workloads, measured samples and the reference dataset layout ({@code runs.csv} + {@code graphs/} +
 * {@code layers.csv}), read by {@link org.scaledl.data.DatasetReader}.
 */
package org.scaledl.data;
