package org.scaledl.io;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.scaledl.InvalidInputException;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.Topology;

/**
 * Reads measured collectives: DeepBench's all-reduce table, with the nominal links of the systems DeepBench ran
 * on.
 *
 * <pre>{@code
 * List<CollectiveMeasurement> m = CollectiveTables.readDeepBench(Path.of("datasets/deepbench/allreduce.csv"));
 * }</pre>
 */
public final class CollectiveTables {
    private CollectiveTables() {
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

    /** The largest message an all-reduce table's row may give, bytes (a terabyte: beyond any GPU's memory). */
    static final double MAX_BYTES = 1e12;

    /**
     * Reads DeepBench's {@code allreduce.csv} (columns {@code gpu, nodes, gpus_total, gpus_per_node, bytes,
     * time_ms}, optional {@code algorithm} and {@code elements}) with the nominal links of its systems: PCIe 3.0 x16 (15.75 GB/s per GPU) inside nodes, InfiniBand FDR
     * 4x (6.8 GB/s) between them; Omni-Path 100 (12.5 GB/s) for KNL.
     *
     * @throws InvalidInputException naming file and line for a device without known links or a bad value: ranks,
     *                               nodes and ranks per node that disagree, a message beyond {@link #MAX_BYTES} or not
     *                               a whole number of 1-, 2-, 4- or 8-byte elements, a time beyond a kernel's, or
     *                               a row repeating an earlier one in every column read (a copied row, which would
     *                               weigh twice)
     */
    public static List<CollectiveMeasurement> readDeepBench(Path file) {
        CsvTable t = CsvTable.read(file, "gpu", "nodes", "gpus_total", "gpus_per_node", "bytes", "time_ms");
        List<CollectiveMeasurement> out = new ArrayList<>();
        // the same collective measured again differs in its time; a row equal in every column read is a copy
        t.refuseCopiedRows(List.of("gpu", "nodes", "gpus_total", "gpus_per_node", "bytes", "time_ms", "algorithm",
                "elements"));
        for (int r = 0; r < t.size(); r++) {
            String device = t.get(r, "gpu");
            double[] link = DEEPBENCH_LINKS.get(device);
            if (link == null) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "no interconnect known for device '"
                        + device + "'");
            }
            try {
                int nodes = t.positiveInt(r, "nodes");
                int ranks = t.positiveInt(r, "gpus_total");
                int perNode = t.positiveInt(r, "gpus_per_node");
                if ((ranks + perNode - 1) / perNode != nodes || ranks < nodes) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), String.format(java.util.Locale.ROOT,
                            "%d GPUs at %d a node do not make %d nodes (gpus_total, gpus_per_node and nodes disagree)",
                            ranks, perNode, nodes));
                }
                double bytes = t.numberInRange(r, "bytes", 1, MAX_BYTES);
                // elements, where given, of 1-, 2-, 4- or 8-byte values
                java.util.OptionalDouble elements = t.optionalNumberInRange(r, "elements", 1, MAX_BYTES);
                if (elements.isPresent() && java.util.stream.IntStream.of(1, 2, 4, 8)
                        .noneMatch(w -> Math.abs(bytes - w * elements.getAsDouble()) <= 1e-9 * bytes)) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), "bytes " + t.get(r, "bytes")
                            + " are not 1, 2, 4 or 8 times the " + t.get(r, "elements") + " elements");
                }
                double ms = t.positiveFinite(r, "time_ms");
                if (ms > KernelTables.MAX_KERNEL_MILLIS) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), "time_ms " + t.get(r, "time_ms")
                            + " is no all-reduce's time (at most " + CsvTable.plain(KernelTables.MAX_KERNEL_MILLIS)
                            + " ms): a unit slip?");
                }
                // a ring moves 2(n − 1)/n of the message through each link: half that time at the nominal
                // bandwidth (inside the node, or between the nodes) is faster than any all-reduce runs
                int n = nodes > 1 ? nodes : ranks;
                double floor = 2.0 * (n - 1) / n * bytes / ((nodes > 1 ? link[1] : link[0]) * 1e6) / 2;
                if (ms < floor) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), String.format(java.util.Locale.ROOT,
                            "time_ms %s is faster than an all-reduce of %s bytes over %d %s can run (%.3g ms at twice "
                            + "the links' nominal %s GB/s): a time in seconds?", t.get(r, "time_ms"), t.get(r,
                            "bytes"), n, nodes > 1 ? "nodes" : "GPUs", floor, CsvTable.plain(nodes > 1 ? link[1]
                            : link[0])));
                }
                Topology topo = new Topology(perNode, Topology.Link.PCIE, link[0], link[1] * 8, 0, false);
                out.add(new CollectiveMeasurement(device, topo, nodes, ranks, bytes, ms,
                        t.opt(r, "algorithm").orElse("")));
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(t.source(), t.line(r), e.getMessage());
            }
        }
        return out;
    }

    /**
     * Reads nccl-tests all-reduce tables inside one node ({@code allreduce_<n>gpu.csv}, columns {@code size(B)} and the
     * out-of-place {@code time(ns)}, as vTrain published them for A100 and V100 servers), one measurement per row,
     * every {@code every}-th row (the tables hold 1,024 sizes each; a few dozen per rank count describe the curve).
     *
     * @param dir      the folder of the tables
     * @param device   the catalog name of the GPU they were measured on
     * @param topology the server's links
     * @param every    keep every {@code every}-th row (1: all)
     * @throws InvalidInputException naming file and line for a bad value, or a folder without tables
     */
    public static List<CollectiveMeasurement> readNcclTests(Path dir, String device, Topology topology, int every) {
        List<CollectiveMeasurement> out = new ArrayList<>();
        for (int n = 2; n <= 64; n++) {
            Path f = dir.resolve("allreduce_" + n + "gpu.csv");
            if (!java.nio.file.Files.isRegularFile(f)) {
                continue;
            }
            List<String> lines;
            try {
                lines = new ArrayList<>(java.nio.file.Files.readAllLines(f, java.nio.charset.StandardCharsets.UTF_8));
            } catch (java.io.IOException e) {
                throw InvalidInputException.unreadable(f, "cannot read", e);
            }
            // nccl-tests name the out-of-place and in-place columns alike: the first pair is out-of-place
            if (lines.isEmpty() || !lines.get(0).startsWith("size(B),count,type,time(ns)")) {
                throw InvalidInputException.atLine(f.toString(), 1, "not an nccl-tests table (expected the header "
                        + "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s))");
            }
            lines.set(0, "size,count,type,time_ns,busbw,time_ns_in_place,busbw_in_place");
            CsvTable t = CsvTable.parse(f.toString(), lines, "size", "time_ns");
            for (int r = 0; r < t.size(); r += Math.max(1, every)) {
                try {
                    out.add(new CollectiveMeasurement(device, topology, 1, n, t.positiveFinite(r, "size"),
                            t.positiveFinite(r, "time_ns") / 1e6, "nccl-tests"));
                } catch (IllegalArgumentException e) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), e.getMessage());
                }
            }
        }
        if (out.isEmpty()) {
            throw InvalidInputException.inSource(dir.toString(), "no nccl-tests table (allreduce_<n>gpu.csv) here");
        }
        return out;
    }
}
