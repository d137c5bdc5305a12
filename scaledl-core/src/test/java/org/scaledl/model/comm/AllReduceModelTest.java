package org.scaledl.model.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.Topology;

class AllReduceModelTest {
    /** 8 GPUs a node on 16 GB/s links, 8 GB/s (64 Gb/s) between nodes. */
    private static final Topology LINKS = Topology.of(8, Topology.Link.PCIE, 16, 64);

    /** Ring time with latency {@code alpha} ms per step and {@code eta} of the nominal bandwidth. */
    private static double ring(int n, double bytes, double alpha, double eta, double gbps) {
        return 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / (eta * gbps * 1e6);
    }

    /**
     * Reduce-scatter and all-gather are half an all-reduce on one node and wherever the fitted latency covers the
     * ring's; across many nodes a chunk crosses each of the ring's hops in turn, the network's at its latency and
     * those inside a node at a hop's, so the time keeps growing with the nodes (by at least the latency per node)
     * where the fitted tree latency would have levelled off.
     */
    @Test
    void reduceScatterAcrossManyNodesPaysTheRingsLatency() {
        List<CollectiveMeasurement> tree = new ArrayList<>();
        for (int n : new int[] {2, 4, 8}) {
            for (double s : new double[] {4e5, 1.6e7, 2.5e8}) {
                tree.add(new CollectiveMeasurement("t", LINKS, 1, n, s, 0.05 * Math.log(n) / Math.log(2)
                        + ring(n, s, 0, 0.5, 16)));
                tree.add(new CollectiveMeasurement("t", Topology.of(1, Topology.Link.PCIE, 16, 80), n, n, s,
                        0.05 * Math.log(n) / Math.log(2) + ring(n, s, 0, 0.7, 10)));
            }
        }
        AllReduceModel m = AllReduceModel.fit(tree);
        org.scaledl.workload.Device d = org.scaledl.workload.Device.cpu("t", 8, 256, 1, 2000, 50);
        assertEquals(0.5 * m.allReduceMillis(d, LINKS, 8, 8, 1e6), m.reduceScatterMillis(d, LINKS, 8, 8, 1e6), 0.0);
        double alpha = LINKS.interNodeLatencyUs() * 1e-3;
        // 2 nodes: the ring's 53 us (one network hop of 5 us, 14 inside the nodes of 3.4 us) replaces the fitted
        // latency of half an all-reduce (half of 0.05 ms a tree level) where larger: it adds at most its whole latency
        double two = m.reduceScatterMillis(d, LINKS, 16, 8, 1e6) - 0.5 * m.allReduceMillis(d, LINKS, 16, 8, 1e6);
        com.fasterxml.jackson.databind.JsonNode network = m.toJson().get("network");
        double fitted = 0.5 * (network.get(0).asDouble() * Collectives.ringSteps(2) + network.get(1).asDouble() * 1);
        assertEquals(Math.max(0, alpha + 14 * AllReduceModel.RING_HOP_US * 1e-3 - fitted), two, 1e-12,
                "2 nodes: " + two + " (fitted " + fitted + ")");
        for (int nodes = 64; nodes <= 1024; nodes *= 2) {
            double rs = m.reduceScatterMillis(d, LINKS, 8 * nodes, 8, 1e6);
            double more = m.reduceScatterMillis(d, LINKS, 16 * nodes, 8, 1e6);
            assertTrue(rs >= 0.5 * m.allReduceMillis(d, LINKS, 8 * nodes, 8, 1e6), "never below half an all-reduce");
            assertTrue(more - rs >= 0.99 * nodes * alpha, nodes + " -> " + 2 * nodes + " nodes: " + rs + " -> " + more);
            // every hop of the ring in turn: nodes - 1 over the network, the others inside a node (the fitted latency,
            // 0.05 ms a tree level of half an all-reduce, is what the ring's replaces)
            double ring = (nodes - 1) * alpha + (8.0 * nodes - nodes) * AllReduceModel.RING_HOP_US * 1e-3;
            double half = 0.5 * m.allReduceMillis(d, LINKS, 8 * nodes, 8, 1e6);
            assertTrue(rs - half >= ring - 0.5 * 0.06 * Math.log(nodes) / Math.log(2), nodes + " nodes: " + rs);
        }
    }

    @Test
    void recoversRingParametersAndExtrapolatesAcrossNodes() {
        List<CollectiveMeasurement> train = new ArrayList<>();
        for (int n : new int[] {2, 4, 8}) {
            for (double s : new double[] {4e5, 1.6e7, 2.5e8}) {
                train.add(new CollectiveMeasurement("gpu", LINKS, 1, n, s, ring(n, s, 0.01, 0.5, 16)));
            }
        }
        // A fabric measured on another system (one rank per node) fixes the network's efficiency and latency.
        Topology net = Topology.of(1, Topology.Link.PCIE, 16, 80);
        for (int n : new int[] {2, 4, 8}) {
            for (double s : new double[] {4e5, 2.5e8}) {
                train.add(new CollectiveMeasurement("cpu", net, n, n, s, ring(n, s, 0.02, 0.7, 10)));
            }
        }
        AllReduceModel m = AllReduceModel.fit(train);
        assertEquals(0.7, m.networkEfficiency(), 1e-6);
        assertEquals(ring(4, 1e8, 0.01, 0.5, 16), m.predictMillis("gpu", LINKS, 1, 4, 4, 1e8), 1e-6);
        // 16 ranks on 2 nodes, hierarchically: the 8 ranks of each node as on one node, then the 2 nodes over the
        // network with the fabric's efficiency (0.7 of 8 GB/s) and latency.
        double expected = ring(8, 1e8, 0.01, 0.5, 16) + ring(2, 1e8, 0.02, 0.7, 8);
        assertEquals(expected, m.predictMillis("gpu", LINKS, 2, 16, 8, 1e8), 1e-6 * expected);
        // Latency that grows with log2 of the ranks (tree algorithms for small messages) is learnt as such.
        List<CollectiveMeasurement> tree = new ArrayList<>();
        for (int n : new int[] {2, 4, 8}) {
            for (double s : new double[] {4e5, 1.6e7, 2.5e8}) {
                tree.add(new CollectiveMeasurement("t", LINKS, 1, n, s, 0.05 * Math.log(n) / Math.log(2)
                        + ring(n, s, 0, 0.5, 16)));
            }
        }
        AllReduceModel t = AllReduceModel.fit(tree);
        double at64 = 0.05 * 6 + ring(64, 4e5, 0, 0.5, 16);
        assertEquals(at64, t.predictMillis("t", LINKS, 1, 64, 64, 4e5), 1e-6 * at64);
    }

    @Test
    void rejectsImpossibleConfigurations() {
        assertThrows(IllegalArgumentException.class, () -> new CollectiveMeasurement("g", LINKS, 1, 1, 10, 1));
        assertThrows(IllegalArgumentException.class, () -> Topology.of(0, Topology.Link.PCIE, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> AllReduceModel.fit(List.of()));
    }

    /**
     * The same interconnect efficiency serves every device on a kind of link: a device without measurements of its
     * own uses its link's (NVSwitch here), not the pooled PCIe one.
     */
    @Test
    void aDeviceWithoutItsOwnMeasurementsUsesItsLinkKind() {
        Topology pcie = Topology.of(8, Topology.Link.PCIE, 16, 64);
        Topology nvswitch = Topology.of(8, Topology.Link.NVSWITCH, 300, 1600);
        List<CollectiveMeasurement> train = new ArrayList<>();
        for (int n : new int[] {2, 4, 8}) {
            for (double s : new double[] {4e5, 1.6e7, 2.5e8}) {
                train.add(new CollectiveMeasurement("old", pcie, 1, n, s, ring(n, s, 0.01, 0.5, 16)));
                train.add(new CollectiveMeasurement("a100", nvswitch, 1, n, s, ring(n, s, 0.005, 0.8, 300)));
            }
        }
        AllReduceModel m = AllReduceModel.fit(train);
        org.scaledl.workload.Device h100 = org.scaledl.io.DeviceCatalog.bundled().require("NVIDIA H100 80GB HBM3");
        Topology dgx = Topology.of(8, Topology.Link.NVSWITCH, 450, 3200);
        assertEquals(ring(8, 1e8, 0.005, 0.8, 450), m.allReduceMillis(h100, dgx, 8, 8, 1e8),
                1e-6 * ring(8, 1e8, 0.005, 0.8, 450));
        assertEquals(0.5 * m.allReduceMillis(h100, dgx, 8, 8, 1e8), m.reduceScatterMillis(h100, dgx, 8, 8, 1e8),
                1e-12);
    }
}
