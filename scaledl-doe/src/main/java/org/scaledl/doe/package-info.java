/**
 * D-optimal experimental design on plain numbers (knows nothing of DNNs):
 * {@link org.scaledl.doe.FedorovExchange} chooses which candidate rows to measure,
 * {@link org.scaledl.doe.SequentialDesign} proposes the next ones given what was measured, and
 * {@link org.scaledl.doe.RepresentativeDesign} chooses the rows most like the others (k-medoids), for a model whose
 * few runs estimate one shared quantity.
 */
package org.scaledl.doe;
