package org.scaledl.io;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.scaledl.InvalidInputException;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.Interconnect;

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

    /**
     * Reads DeepBench's {@code allreduce.csv} (columns {@code gpu, nodes, gpus_total, gpus_per_node, bytes,
     * time_ms}, optional {@code algorithm}) with the nominal links of its systems: PCIe 3.0 x16 (15.75 GB/s per GPU) inside nodes, InfiniBand FDR
     * 4x (6.8 GB/s) between them; Omni-Path 100 (12.5 GB/s) for KNL.
     *
     * @throws InvalidInputException naming file and line for a device without known links or a bad value
     */
    public static List<CollectiveMeasurement> readDeepBench(Path file) {
        CsvTable t = CsvTable.read(file, "gpu", "nodes", "gpus_total", "gpus_per_node", "bytes", "time_ms");
        List<CollectiveMeasurement> out = new ArrayList<>();
        for (int r = 0; r < t.size(); r++) {
            String device = t.get(r, "gpu");
            double[] link = DEEPBENCH_LINKS.get(device);
            if (link == null) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "no interconnect known for device '"
                        + device + "'");
            }
            try {
                out.add(new CollectiveMeasurement(device, new Interconnect(t.positiveInt(r, "gpus_per_node"), link[0], link[1]),
                        t.positiveInt(r, "nodes"), t.positiveInt(r, "gpus_total"), t.positiveFinite(r, "bytes"),
                        t.positiveFinite(r, "time_ms"), t.opt(r, "algorithm").orElse("")));
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(t.source(), t.line(r), e.getMessage());
            }
        }
        return out;
    }
}
