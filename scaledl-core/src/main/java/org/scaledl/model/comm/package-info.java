/**
 * Collective communication: all-reduce, reduce-scatter, all-gather and point-to-point times over a machine's links
 * (NVLink or PCIe inside a node, the network between nodes), hierarchical and message-size dependent, fitted on
 * measured collective tables ({@link org.scaledl.model.comm.AllReduceModel}).
 */
package org.scaledl.model.comm;
