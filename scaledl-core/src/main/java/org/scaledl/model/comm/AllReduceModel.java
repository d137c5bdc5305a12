package org.scaledl.model.comm;

import org.scaledl.model.cost.Nnls;
import org.scaledl.model.file.Fields;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.scaledl.Checks;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.Device;
import org.scaledl.workload.Topology;

/**
 * Ring all-reduce time from hardware data:
 *
 * <pre>
 *   t(n, S) = 2(n−1) · α  +  log₂ n · β  +  2(n−1)/n · S / (η · B)
 * </pre>
 *
 * where {@code n} ranks reduce {@code S} bytes over links of nominal bandwidth {@code B}, {@code η} is the achieved
 * fraction of it, {@code α} the per-step latency of a ring and {@code β} a per-level latency of the tree algorithms
 * libraries use for small messages (both non-negative: the fit takes what the data show; latency grows at most
 * linearly in {@code n}, bandwidth cost tends to {@code 2·S/(η·B)}). Across nodes the all-reduce is
 * <b>hierarchical</b>: inside each node over the intra-node links (reduce-scatter and all-gather, the single-node
 * form with the node's ranks), then across the nodes over the network (the same form with {@code n} = nodes, each
 * node's traffic through all its adapters). Intra-node coefficients are fitted per device and per kind of link
 * ({@link Topology.Link}: NVSwitch, NVLink, PCIe) from single-node measurements; a device without its own uses its
 * link's, then the pooled ones. Network coefficients come from the multi-node measurements less their intra-node
 * part (they describe the fabric, not the device). Fits minimise relative squared error with non-negative
 * coefficients. Reduce-scatter and all-gather move half an all-reduce's bytes in half its steps; across nodes they
 * run as rings (NCCL has no tree for them): a chunk crosses all {@code ranks − 1} hops in turn, {@code nodes − 1}
 * of them paying the network's latency ({@link Topology#interNodeLatencyUs()}) and the others a hop inside a node
 * ({@link #RING_HOP_US}): what stops ZeRO-3's per-layer gathers from scaling to hundreds of nodes, beyond the
 * measured 2–32 GPUs whose fitted latency grows with {@code log₂ n}.
 *
 * <pre>{@code
 * AllReduceModel m = AllReduceModel.fit(measurements);
 * double ms = m.predictMillis("M40", Topology.of(8, Topology.Link.PCIE, 15.75, 54.4), 2, 16, 8, 258e6);
 * }</pre>
 */
public final class AllReduceModel implements CommunicationModel {
    /** The {@code kind} of its saved form. */
    public static final String KIND = "ring-allreduce";
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
                byDevice.computeIfAbsent(m.topology().link().label(), k -> new ArrayList<>()).add(m);
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
                intra.put(d, fitGroup(ms));
            }
        });
        double[] pooled = single.size() >= 2 ? fitGroup(single) : networkFit(multi, intra, null);
        double[] net = multi.size() >= 2 ? networkFit(multi, intra, pooled) : pooled;
        return new AllReduceModel(Map.copyOf(intra), pooled, net);
    }

    /**
     * Fits the network's {α, 1/η} on multi-node measurements: each one's time less its intra-node part (predicted by
     * the intra-node fit; none with one rank per node), over the ring across its nodes.
     */
    private static double[] networkFit(List<CollectiveMeasurement> ms, Map<String, double[]> intra, double[] pooled) {
        double[][] rows = new double[ms.size()][];
        double[] y = new double[ms.size()];
        for (int i = 0; i < rows.length; i++) {
            CollectiveMeasurement m = ms.get(i);
            int perNode = m.ranks() / m.nodes();
            double inside = perNode > 1 && pooled != null ? Nnls.dot(terms(perNode, m.bytes(),
                    m.topology().intraNodeGBps()), intra.getOrDefault(m.device(), pooled)) : 0;
            rows[i] = terms(m.nodes(), m.bytes(), networkGBps(m.topology()));
            y[i] = Math.max(m.millis() - inside, 0.05 * m.millis());
        }
        return Nnls.relative(rows, y);
    }

    /** Fits {α (ms per step), 1/η} on one regime. */
    private static double[] fitGroup(List<CollectiveMeasurement> ms) {
        double[][] rows = new double[ms.size()][];
        double[] y = new double[ms.size()];
        for (int i = 0; i < rows.length; i++) {
            CollectiveMeasurement m = ms.get(i);
            rows[i] = terms(m.ranks(), m.bytes(), m.topology().intraNodeGBps());
            y[i] = m.millis();
        }
        return Nnls.relative(rows, y);
    }

    /** {2(n−1), log₂ n, 2(n−1)/n · S / B in ms}: ring latency, tree latency, ring bandwidth. */
    private static double[] terms(int n, double bytes, double gbps) {
        return new double[] {Collectives.ringSteps(n), Math.log(n) / Math.log(2),
            Collectives.ringVolume(n) * bytes / (gbps * 1e6)};
    }

    /** A node's network bandwidth in GB/s (the topology gives Gb/s). */
    private static double networkGBps(Topology t) {
        return t.interNodeGbps() / 8;
    }

    /** The intra-node coefficients for a device on a link: its own, its link kind's, or the pooled ones. */
    private double[] intraFor(String device, Topology t) {
        double[] c = intra.get(device);
        if (c == null) {
            c = intra.get(t.link().label());
        }
        return c == null ? pooledIntra : c;
    }

    /**
     * Predicts one all-reduce.
     *
     * @param device       device name (fitted per device or link kind when known, pooled otherwise)
     * @param topology     the links inside and between nodes
     * @param nodes        nodes taking part (positive)
     * @param ranks        ranks in total (at least 2 and at least {@code nodes})
     * @param ranksPerNode ranks on each node
     * @param bytes        message size in bytes (positive)
     * @return time in ms
     */
    public double predictMillis(String device, Topology topology, int nodes, int ranks, int ranksPerNode,
            double bytes) {
        Checks.argument(nodes > 0 && ranks >= 2 && ranks >= nodes, "need 2+ ranks on 1+ nodes");
        Checks.argument(bytes > 0, "bytes must be positive: %s", bytes);
        if (nodes == 1) {
            return Nnls.dot(terms(ranks, bytes, topology.intraNodeGBps()), intraFor(device, topology));
        }
        // Hierarchical: all-reduce inside each node (reduce-scatter + all-gather over the intra-node links, as on one
        // node), then across the nodes over the network, each node's traffic through its network adapters.
        double inside = 0;
        if (ranksPerNode > 1) {
            inside = Nnls.dot(terms(ranksPerNode, bytes, topology.intraNodeGBps()), intraFor(device, topology));
        }
        return inside + Nnls.dot(terms(nodes, bytes, networkGBps(topology)), network);
    }

    /** The achieved fraction of the network's nominal bandwidth. */
    public double networkEfficiency() {
        return network[2] > 0 ? 1 / network[2] : Double.POSITIVE_INFINITY;
    }

    /** The fitted coefficients as JSON ({@code [α ms, 1/η]} per device, pooled and network). */
    @Override
    public com.fasterxml.jackson.databind.node.ObjectNode toJson() {
        com.fasterxml.jackson.databind.node.ObjectNode o = new com.fasterxml.jackson.databind.ObjectMapper()
                .createObjectNode();
        o.put("kind", KIND);
        com.fasterxml.jackson.databind.node.ObjectNode d = o.putObject("intra_node");
        new java.util.TreeMap<>(intra).forEach((k, v) -> array(d.putArray(k), v));
        array(o.putArray("pooled_intra_node"), pooledIntra);
        array(o.putArray("network"), network);
        return o;
    }

    /**
     * Reads {@link #toJson()}.
     *
     * @throws org.scaledl.InvalidInputException for a malformed document
     */
    public static AllReduceModel fromJson(com.fasterxml.jackson.databind.JsonNode o) {
        Map<String, double[]> intra = new HashMap<>();
        o.path("intra_node").fields().forEachRemaining(e -> intra.put(e.getKey(), pair(e.getValue(),
                "intra_node " + e.getKey())));
        return new AllReduceModel(Map.copyOf(intra), pair(o.path("pooled_intra_node"), "pooled_intra_node"),
                pair(o.path("network"), "network"));
    }

    private static void array(com.fasterxml.jackson.databind.node.ArrayNode a, double[] v) {
        for (double x : v) {
            a.add(x);
        }
    }

    /** {α ring, α tree, 1/η}; files written before the tree-latency term hold {α ring, 1/η}. */
    private static double[] pair(com.fasterxml.jackson.databind.JsonNode n, String what) {
        if (n.size() != 2 && n.size() != 3) {
            throw org.scaledl.InvalidInputException.of(what + " must hold two or three coefficients");
        }
        double[] v = new double[3];
        for (int i = 0; i < n.size(); i++) {
            int at = n.size() == 2 && i == 1 ? 2 : i;   // an old file's second value is 1/η
            // latencies in ms and an inverse efficiency: fitted ones are below 10, a million is no model
            v[at] = Fields.inRange(n.get(i), what, 0, 1e6);
        }
        return v;
    }

    @Override
    public double allReduceMillis(Device device, Topology topology, int ranks, int ranksPerNode, double bytes) {
        Checks.argument(ranksPerNode > 0 && ranksPerNode <= ranks, "ranks per node %s for %s ranks",
                ranksPerNode, ranks);
        int nodes = (ranks + ranksPerNode - 1) / ranksPerNode;
        return predictMillis(device.name(), topology, nodes, ranks, ranksPerNode, bytes);
    }

    /**
     * The latency of one hop of a ring between two GPUs of a node, µs: a chunk's hand-off (NCCL's own tuning model
     * takes 3.4 µs for its bulk protocol over NVLink). The single-node measurements cannot show it (their latency is
     * fitted as the trees' per level), but a ring of hundreds of ranks pays it hundreds of times.
     */
    public static final double RING_HOP_US = 3.4;

    @Override
    public double reduceScatterMillis(Device device, Topology topology, int ranks, int ranksPerNode, double bytes) {
        double half = 0.5 * allReduceMillis(device, topology, ranks, ranksPerNode, bytes);
        int nodes = (ranks + ranksPerNode - 1) / ranksPerNode;
        if (nodes == 1) {
            return half;
        }
        // the fitted network latency of half an all-reduce, replaced by the ring's where that is larger: a chunk
        // crosses every one of the ring's ranks - 1 hops in turn, nodes - 1 of them over the network and the others
        // between two GPUs of a node
        double fitted = 0.5 * (network[0] * Collectives.ringSteps(nodes) + network[1] * Math.log(nodes) / Math.log(2));
        double ring = ((nodes - 1) * topology.interNodeLatencyUs() + (double) (ranks - nodes) * RING_HOP_US) * 1e-3;
        return half + Math.max(0, ring - fitted);
    }

    @Override
    public double sendMillis(Device device, Topology topology, boolean acrossNodes, double bytes) {
        if (acrossNodes) {
            return 1e3 * (bytes / topology.interNodeBytesPerSecondPerGpu() + topology.interNodeLatencyUs() * 1e-6);
        }
        return bytes / (topology.intraNodeGBps() * 1e6);
    }
}
