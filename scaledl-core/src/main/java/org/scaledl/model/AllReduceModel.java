package org.scaledl.model;

import com.google.common.base.Preconditions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.nio.file.Path;
import org.scaledl.InvalidInputException;
import org.scaledl.data.CsvTable;

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
public final class AllReduceModel {
    private final Map<String, double[]> intra;
    private final double[] pooledIntra;
    private final double[] network;

    /**
     * One measured all-reduce.
     *
     * @param device  device name (e.g. GPU model)
     * @param links   the interconnect
     * @param nodes   nodes taking part
     * @param ranks   ranks (devices) in total
     * @param bytes   message size in bytes
     * @param millis  measured time, ms
     */
    public record Measurement(String device, Interconnect links, int nodes, int ranks, double bytes, double millis) {
        /** Validates. */
        public Measurement {
            Objects.requireNonNull(device);
            Objects.requireNonNull(links);
            Preconditions.checkArgument(nodes > 0 && ranks >= 2 && ranks >= nodes, "need 2+ ranks on 1+ nodes");
            Preconditions.checkArgument(bytes > 0 && millis > 0 && Double.isFinite(millis), "bad bytes or time");
        }
    }

    /**
     * Nominal links of DeepBench's systems (its README): PCIe 3.0 x16 = 15.75 GB/s per GPU; InfiniBand FDR 4x =
     * 6.8 GB/s per node (assumed for the single-root 10-GPU nodes too, which the README does not name); Intel
     * Omni-Path 100 = 12.5 GB/s.
     */
    static final Map<String, double[]> DEEPBENCH_LINKS = Map.of(
            "M40", new double[] {15.75, 6.8}, "TitanX", new double[] {15.75, 6.8}, "P100", new double[] {15.75, 6.8},
            "1080Ti", new double[] {15.75, 6.8}, "TitanX_Pascal", new double[] {15.75, 6.8},
            "KNL7250", new double[] {12.5, 12.5});

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
    public static AllReduceModel fit(List<Measurement> data) {
        Map<String, List<Measurement>> byDevice = new HashMap<>();
        List<Measurement> single = new ArrayList<>();
        List<Measurement> multi = new ArrayList<>();
        for (Measurement m : data) {
            if (m.nodes() == 1) {
                byDevice.computeIfAbsent(m.device(), k -> new ArrayList<>()).add(m);
                single.add(m);
            } else {
                multi.add(m);
            }
        }
        Preconditions.checkArgument(single.size() >= 2 || multi.size() >= 2,
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
    private static double[] fitGroup(List<Measurement> ms, boolean network) {
        double[][] rows = new double[ms.size()][];
        double[] y = new double[ms.size()];
        for (int i = 0; i < rows.length; i++) {
            Measurement m = ms.get(i);
            rows[i] = terms(m.ranks(), m.bytes(), network ? linkGBps(m.links(), m.nodes()) : m.links()
                    .intraNodeGBps());
            y[i] = m.millis();
        }
        return Baselines.relativeNnls(rows, y);
    }

    /** {2(n−1), 2(n−1)/n · S / B in ms}. */
    private static double[] terms(int n, double bytes, double gbps) {
        return new double[] {2.0 * (n - 1), 2.0 * (n - 1) / n * bytes / (gbps * 1e6)};
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
        Preconditions.checkArgument(nodes > 0 && ranks >= 2 && ranks >= nodes, "need 2+ ranks on 1+ nodes");
        Preconditions.checkArgument(bytes > 0, "bytes must be positive: %s", bytes);
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

    /**
     * Reads DeepBench's {@code allreduce.csv} (columns {@code gpu, nodes, gpus_total, gpus_per_node, bytes,
     * time_ms}) with the nominal links of its systems: PCIe 3.0 x16 (15.75 GB/s per GPU) inside nodes, InfiniBand FDR
     * 4x (6.8 GB/s) between them; Omni-Path 100 (12.5 GB/s) for KNL.
     *
     * @throws InvalidInputException naming file and line for a device without known links or a bad value
     */
    public static List<Measurement> readDeepBench(Path file) {
        CsvTable t = CsvTable.read(file, "gpu", "nodes", "gpus_total", "gpus_per_node", "bytes", "time_ms");
        List<Measurement> out = new ArrayList<>();
        for (int r = 0; r < t.size(); r++) {
            String device = t.get(r, "gpu");
            double[] link = DEEPBENCH_LINKS.get(device);
            if (link == null) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "no interconnect known for device '"
                        + device + "'");
            }
            try {
                out.add(new Measurement(device, new Interconnect(t.positiveInt(r, "gpus_per_node"), link[0], link[1]),
                        t.positiveInt(r, "nodes"), t.positiveInt(r, "gpus_total"), t.positiveFinite(r, "bytes"),
                        t.positiveFinite(r, "time_ms")));
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(t.source(), t.line(r), e.getMessage());
            }
        }
        return out;
    }
}
