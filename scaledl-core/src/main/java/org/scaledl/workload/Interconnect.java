package org.scaledl.workload;

import org.scaledl.Checks;


/**
 * The links a collective runs over, as hardware data: devices per node and the nominal (data-sheet) bandwidth of
 * the link each device uses inside a node and of each node's network link. For example 8 GPUs per node on PCIe 3.0
 * x16 (15.75 GB/s) with InfiniBand FDR 4x (6.8 GB/s) between nodes is {@code new Interconnect(8, 15.75, 6.8)}.
 *
 * @param devicesPerNode devices (ranks) per node
 * @param intraNodeGBps  nominal per-device link bandwidth inside a node, GB/s (ignored with one device per node)
 * @param interNodeGBps  nominal per-node network bandwidth, GB/s
 */
public record Interconnect(int devicesPerNode, double intraNodeGBps, double interNodeGBps) {

    /** Validates. */
    public Interconnect {
        Checks.argument(devicesPerNode > 0, "devices per node must be positive: %s", devicesPerNode);
        Checks.argument(intraNodeGBps > 0 && interNodeGBps > 0, "bandwidths must be positive");
    }
}
