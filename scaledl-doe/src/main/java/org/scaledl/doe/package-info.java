/**
 * D-optimal experimental design on plain numbers (knows nothing of DNNs):
 * {@link org.scaledl.doe.FedorovExchange} chooses which candidate rows to measure, and
 * {@link org.scaledl.doe.SequentialDesign} proposes the next ones given what was measured.
 */
package org.scaledl.doe;
