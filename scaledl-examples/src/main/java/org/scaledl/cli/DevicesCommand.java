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

    @Override
    public Integer call() throws Exception {
        DeviceCatalog c = devices == null ? DeviceCatalog.bundled() : DeviceCatalog.read(devices)
                .with(DeviceCatalog.bundled());
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ArrayNode arr = om.createArrayNode();
            for (Device d : c.devices()) {
                ObjectNode o = arr.addObject();
                o.put("name", d.name());
                o.put("form_factor", d.formFactor());
                o.put("memory_gb", d.memoryGB());
                o.put("memory_bw_gbps", d.memoryBandwidthGBps());
                o.put("compute_units", d.computeUnits());
                for (Precision p : Precision.values()) {
                    o.put(p.label() + "_matrix_tflops", d.peakFlopsPerSecond(p, true) / 1e12);
                }
                o.put("fp32_vector_tflops", d.peakFlopsPerSecond(false) / 1e12);
                o.put("link_gbps", d.linkGBps());
                o.put("pcie_gbps", d.pcieGBps());
            }
            System.out.println(om.writerWithDefaultPrettyPrinter().writeValueAsString(arr));
            return 0;
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%-34s %-6s %7s %8s %8s %8s %8s %8s %8s%n",
                "name", "form", "mem GB", "GB/s", "fp32 TF", "tf32 TF", "fp16 TF", "bf16 TF", "link GB/s"));
        for (Device d : c.devices()) {
            b.append(String.format(Locale.ROOT, "%-34s %-6s %7.0f %8.0f %8.1f %8.1f %8.1f %8.1f %8s%n", d.name(),
                    d.formFactor().isEmpty() ? "-" : d.formFactor(), d.memoryGB(), d.memoryBandwidthGBps(),
                    d.peakFlopsPerSecond(Precision.FP32, true) / 1e12, d.peakFlopsPerSecond(Precision.TF32, true)
                            / 1e12, d.peakFlopsPerSecond(Precision.FP16, true) / 1e12,
                    d.peakFlopsPerSecond(Precision.BF16, true) / 1e12, d.linkGBps() > 0
                            ? String.format(Locale.ROOT, "%.0f", d.linkGBps()) : "pcie"));
        }
        b.append(c.devices().size()).append(" devices; names as torch.cuda.get_device_name() reports them (aliases "
                + "accepted); peaks are dense (no sparsity); a GPU without matrix units for a precision runs it at "
                + "its FP32 peak");
        System.out.println(b);
        return 0;
    }
}
