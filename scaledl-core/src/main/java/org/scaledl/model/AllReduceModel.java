package org.scaledl.model;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.scaledl.Checks;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.Device;
import org.scaledl.workload.Interconnect;

/**
 * Ring all-reduce time from hardware data:
 *
 * <pre>
 *   t(n, S) = 2(n−1) · α  +  2(n−1)/n · S / (η · B)
 * </pre>
 *
 * where {@code n} ranks reduce {@code S} bytes, {@code B} is the nominal bandwidth of the ring's slowest link (the
 * intra-node link on one node; the minimum of the intra-node and network link across nodes, since every ring step
 * crosses a node boundary somewhere and steps are synchronous), {@code η} the achieved fraction of it and {@code α}
 * the per-step latency. Intra-node {@code η, α} are fitted per device from its single-node measurements; network
 * {@code η, α} are fitted from all multi-node measurements in the training data (they describe the fabric's
 * efficiency, not the device). A device or fabric without training data uses the pooled values. Fits minimise
 * relative squared error with non-negative {@code α} and {@code 1/η}.
 *
 * <pre>{@code
 * AllReduceModel m = AllReduceModel.fit(measurements);
 * double ms = m.predictMillis("M40", new Interconnect(8, 15.75, 6.8), 2, 16, 258e6);
 * }</pre>
 */
public final class AllReduceModel implements CommunicationModel {
    private final Map<String, double[]> intra;
    private final double[] pooledIntra;
    private final double[] network;

    private AllReduceModel(Map<String, double[]> intra, double[] pooledIntra, double[] network) {
        this.intra = intra;
        this.pooledIntra = pooledIntra;
        this.network = network;
    }

    /**
     * Fits on measurements.
     *
     * @throws IllegalArgumentException if there are no single-node measurements with at least two sizes
     */
    public static AllReduceModel fit(List<CollectiveMeasurement> data) {
        Map<String, List<CollectiveMeasurement>> byDevice = new HashMap<>();
        List<CollectiveMeasurement> single = new ArrayList<>();
        List<CollectiveMeasurement> multi = new ArrayList<>();
        for (CollectiveMeasurement m : data) {
            if (m.nodes() == 1) {
                byDevice.computeIfAbsent(m.device(), k -> new ArrayList<>()).add(m);
                single.add(m);
            } else {
                multi.add(m);
            }
        }
        Checks.argument(single.size() >= 2 || multi.size() >= 2,
                "need at least 2 measurements to fit an all-reduce model");
        Map<String, double[]> intra = new HashMap<>();
        byDevice.forEach((d, ms) -> {
            if (ms.size() >= 2) {
                intra.put(d, fitGroup(ms, false));
            }
        });
        double[] pooled = single.size() >= 2 ? fitGroup(single, false) : fitGroup(multi, true);
        double[] net = multi.size() >= 2 ? fitGroup(multi, true) : pooled;
        return new AllReduceModel(Map.copyOf(intra), pooled, net);
    }

    /** Fits {α (ms per step), 1/η} on one regime. */
    private static double[] fitGroup(List<CollectiveMeasurement> ms, boolean network) {
        double[][] rows = new double[ms.size()][];
        double[] y = new double[ms.size()];
        for (int i = 0; i < rows.length; i++) {
            CollectiveMeasurement m = ms.get(i);
            rows[i] = terms(m.ranks(), m.bytes(), network ? linkGBps(m.links(), m.nodes()) : m.links()
                    .intraNodeGBps());
            y[i] = m.millis();
        }
        return Baselines.relativeNnls(rows, y);
    }

    /** {2(n−1), 2(n−1)/n · S / B in ms}. */
    private static double[] terms(int n, double bytes, double gbps) {
        return new double[] {Collectives.ringSteps(n), Collectives.ringVolume(n) * bytes / (gbps * 1e6)};
    }

    private static double linkGBps(Interconnect links, int nodes) {
        return nodes > 1 && links.devicesPerNode() > 1 ? Math.min(links.intraNodeGBps(), links.interNodeGBps())
                : links.interNodeGBps();
    }

    /**
     * Predicts one all-reduce.
     *
     * @param device device name (fitted per device when known, pooled otherwise)
     * @param links  the interconnect
     * @param nodes  nodes taking part (positive)
     * @param ranks  ranks in total (at least 2 and at least {@code nodes})
     * @param bytes  message size in bytes (positive)
     * @return time in ms
     */
    public double predictMillis(String device, Interconnect links, int nodes, int ranks, double bytes) {
        Checks.argument(nodes > 0 && ranks >= 2 && ranks >= nodes, "need 2+ ranks on 1+ nodes");
        Checks.argument(bytes > 0, "bytes must be positive: %s", bytes);
        if (nodes == 1) {
            double[] c = intra.getOrDefault(device, pooledIntra);
            return Baselines.dot(terms(ranks, bytes, links.intraNodeGBps()), c);
        }
        double[] c = intra.getOrDefault(device, pooledIntra);
        double intraBw = links.devicesPerNode() > 1 && c[1] > 0 ? links.intraNodeGBps() / c[1] : Double.MAX_VALUE;
        double netBw = network[1] > 0 ? links.interNodeGBps() / network[1] : Double.MAX_VALUE;
        double[] t = terms(ranks, bytes, Math.min(intraBw, netBw));
        return t[0] * network[0] + t[1];
    }

    /** The achieved fraction of the network's nominal bandwidth. */
    public double networkEfficiency() {
        return network[1] > 0 ? 1 / network[1] : Double.POSITIVE_INFINITY;
    }

    /** The fitted coefficients as JSON ({@code [α ms, 1/η]} per device, pooled and network). */
    com.fasterxml.jackson.databind.node.ObjectNode toJson() {
        com.fasterxml.jackson.databind.node.ObjectNode o = new com.fasterxml.jackson.databind.ObjectMapper()
                .createObjectNode();
        o.put("kind", "ring-allreduce");
        com.fasterxml.jackson.databind.node.ObjectNode d = o.putObject("intra_node");
        new java.util.TreeMap<>(intra).forEach((k, v) -> d.putArray(k).add(v[0]).add(v[1]));
        o.putArray("pooled_intra_node").add(pooledIntra[0]).add(pooledIntra[1]);
        o.putArray("network").add(network[0]).add(network[1]);
        return o;
    }

    /**
     * Reads {@link #toJson()}.
     *
     * @throws org.scaledl.InvalidInputException for a malformed document
     */
    static AllReduceModel fromJson(com.fasterxml.jackson.databind.JsonNode o) {
        Map<String, double[]> intra = new HashMap<>();
        o.path("intra_node").fields().forEachRemaining(e -> intra.put(e.getKey(), pair(e.getValue(),
                "intra_node " + e.getKey())));
        return new AllReduceModel(Map.copyOf(intra), pair(o.path("pooled_intra_node"), "pooled_intra_node"),
                pair(o.path("network"), "network"));
    }

    private static double[] pair(com.fasterxml.jackson.databind.JsonNode n, String what) {
        if (n.size() != 2) {
            throw org.scaledl.InvalidInputException.of(what + " must hold two coefficients");
        }
        double a = ModelFile.finite(n.get(0), what);
        double b = ModelFile.finite(n.get(1), what);
        if (a < 0 || b < 0) {
            throw org.scaledl.InvalidInputException.of(what + " coefficients must be >= 0");
        }
        return new double[] {a, b};
    }

    @Override
    public double allReduceMillis(Device device, int ranks, int ranksPerNode, double bytes) {
        Checks.argument(ranksPerNode > 0 && ranksPerNode <= ranks, "ranks per node %s for %s ranks",
                ranksPerNode, ranks);
        double link = linkOf(device);
        int nodes = (ranks + ranksPerNode - 1) / ranksPerNode;
        return predictMillis(device.name(), new Interconnect(ranksPerNode, link, link), nodes, ranks, bytes);
    }

    @Override
    public double sendMillis(Device device, double bytes) {
        return bytes / (linkOf(device) * 1e6);
    }

    private static double linkOf(Device d) {
        return d.link().orElseThrow(() -> new IllegalArgumentException("device " + d.name()
                + " has no link bandwidth (link_GBps in the device catalog) to communicate over"));
    }
}
