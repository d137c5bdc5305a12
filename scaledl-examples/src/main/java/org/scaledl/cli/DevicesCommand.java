package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.workload.Device;
import org.scaledl.workload.Precision;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code scaledl devices [--devices my.csv] [--json]}: the GPUs the catalog describes. */
@Command(name = "devices", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "List the device catalog: every GPU a device model can predict, with its peaks per precision, "
                + "memory, bandwidth and links.")
final class DevicesCommand implements Callable<Integer> {
    @Option(names = "--devices", description = "Extra device catalog CSV (the catalog's or NeuSight's layout)")
    Path devices;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    /** A precision's dense matrix peak in TFLOP/s, or {@code -} where the GPU cannot run it. */
    private static String peak(Device d, Precision p) {
        return d.runs(p).isPresent() ? String.format(Locale.ROOT, "%.0f", d.peakFlopsPerSecond(p, true) / 1e12) : "-";
    }

    @Override
    public Integer call() throws Exception {
        DeviceCatalog c = Catalogs.of(devices);
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ArrayNode arr = om.createArrayNode();
            for (Device d : c.devices()) {
                ObjectNode o = arr.addObject();
                o.put("name", d.name());
                o.put("form_factor", d.formFactor());
                o.put("architecture", d.architecture());
                // whether a product whose rows break 16 bytes pays TensorCoreAlignment's measured factor on it
                o.put("tensor_memory_accelerator", d.tensorMemoryAccelerator());
                // whether per-tensor FP8 keeps one quantised copy (no transposed one)
                o.put("fp8_either_layout", d.fp8EitherLayout());
                o.put("superchip", d.superchip());
                o.put("memory_gb", d.memoryGB());
                o.put("memory_bw_gbps", d.memoryBandwidthGBps());
                o.put("compute_units", d.computeUnits());
                for (Precision p : Precision.values()) {
                    if (d.runs(p).isPresent()) {
                        o.put(p.label() + "_matrix_tflops", d.peakFlopsPerSecond(p, true) / 1e12);
                    } else {
                        o.putNull(p.label() + "_matrix_tflops");
                    }
                }
                o.put("fp32_vector_tflops", d.peakFlopsPerSecond(false) / 1e12);
                o.put("exponentials_per_second", d.exponentialsPerSecond());
                if (d.boardPowerW() > 0) {
                    o.put("board_power_w", d.boardPowerW());
                } else {
                    o.putNull("board_power_w");
                }
                // the share of its data-sheet peaks the board's power sustains (at most 1; null: no board power)
                java.util.OptionalDouble powered = org.scaledl.model.exec.MegatronExecution.powerSustainedShare(d,
                        Precision.BF16);
                if (powered.isPresent()) {
                    o.put("power_sustained_share", powered.getAsDouble());
                } else {
                    o.putNull("power_sustained_share");
                }
                o.put("link_kind", d.platform().linkKind());
                o.put("link_gbps", d.linkGBps());
                o.put("pcie_gbps", d.pcieGBps());
                o.put("gpus_per_node", d.platform().gpusPerNode());
                o.put("nvlink_domain", d.platform().nvlinkDomain());
                o.put("network_gbps_per_gpu", d.platform().networkGbpsPerGpu());
            }
            Reports.printJson(arr);
            return 0;
        }
        // the name column as wide as the longest name (a user's catalog may hold long ones: cut at 60)
        int width = Math.max(4, c.devices().stream().mapToInt(d -> org.scaledl.InvalidInputException.printable(
                d.name(), 60).length()).max().orElse(4));
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%-" + width + "s %-9s %6s %6s %7s %7s %7s "
                + "%7s %7s %7s %7s %7s %-14s %4s %9s%n", "name", "form", "memGiB", "TB/s", "fp32", "tf32", "fp16",
                "bf16", "fp8", "mxfp8", "nvfp4", "domain", "link GB/s", "node", "net Gb/s"));
        for (Device d : c.devices()) {
            b.append(String.format(Locale.ROOT, "%-" + width + "s %-9s %6.0f %6.2f %7s %7s %7s %7s %7s %7s %7s "
                    + "%7d %-14s %4s %9s%n", org.scaledl.InvalidInputException.printable(d.name(), 60),
                    d.formFactor().isEmpty() ? "-" : d.formFactor(), d.memoryGB(),
                    d.memoryBandwidthGBps() / 1e3, peak(d, Precision.FP32), peak(d, Precision.TF32),
                    peak(d, Precision.FP16), peak(d, Precision.BF16), peak(d, Precision.FP8),
                    peak(d, Precision.MXFP8), peak(d, Precision.NVFP4),
                    Math.max(1, d.platform().nvlinkDomain()), d.linkGBps() > 0 ? d.platform().linkKind() + " "
                            + String.format(Locale.ROOT, "%.0f", d.linkGBps()) : "pcie",
                    d.platform().gpusPerNode() > 0 ? Integer.toString(d.platform().gpusPerNode()) : "-",
                    d.platform().networkGbpsPerGpu() > 0 ? String.format(Locale.ROOT, "%.0f",
                            d.platform().networkGbpsPerGpu()) : "-"));
        }
        b.append(c.devices().size()).append(" devices; names as torch.cuda.get_device_name() reports them (aliases "
                + "and unambiguous parts accepted: A100, H100 SXM, GB200, MI300X); peaks are dense TFLOP/s (no "
                + "sparsity) per precision, '-' where the GPU has no such units (a precision it falls back from shows "
                + "the fallback's peak); for the GPUs NeuSight or DeepBench measured, memGiB, TB/s and fp32 are their "
                + "figures, which the models fitted on them take (GPU_CATALOG.md lists the data sheets'); domain: "
                + "GPUs in one NVLink domain, link: its link and GB/s per direction; node: GPUs a node of the standard "
                + "system, net: its network's Gb/s a GPU (--inter-node-gbps gives a node's, in Gb/s); --devices FILE "
                + "adds your own");
        System.out.println(b);
        return 0;
    }
}
