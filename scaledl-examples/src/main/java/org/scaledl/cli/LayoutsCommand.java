package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.LayoutSearch;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Device;
import org.scaledl.workload.Topology;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code scaledl layouts --model gpu --transformer config.json --seq 2048 --gpus 512 --global-batch 1536
 * --device "NVIDIA A100-SXM4-80GB" --precision fp16}: every valid 3D-parallel layout of a training job, fastest
 * first.
 */
@Command(name = "layouts", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Rank every valid layout of a transformer's training on a number of GPUs (tensor x pipeline x "
                + "data parallel, micro-batch, recomputation, sequence parallelism, ZeRO, interleaving) by predicted "
                + "iteration time; layouts that do not fit the GPU's memory are listed last.")
final class LayoutsCommand implements Callable<Integer> {
    @Option(names = "--model", defaultValue = "gpu", description = "Device model: a bundled name or a saved file "
            + "(default gpu)")
    String model;

    @Option(names = "--transformer", required = true, description = "Hugging Face config.json of the model")
    Path transformer;

    @Option(names = "--seq", required = true, description = "Sequence length")
    int seq;

    @Option(names = "--gpus", required = true, description = "GPUs in all")
    int gpus;

    @Option(names = "--global-batch", required = true, description = "Sequences per iteration over all replicas")
    int globalBatch;

    @Option(names = "--device", required = true, description = "GPU name (scaledl devices lists them)")
    String device;

    @Option(names = "--devices", description = "Extra device catalog CSV")
    Path devices;

    @Option(names = "--top", defaultValue = "20", description = "Layouts to print (default 20)")
    int top;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Mixin
    ClusterOptions cluster;

    @Override
    public Integer call() throws Exception {
        if (top < 1) {
            throw new IllegalArgumentException("--top must be positive, got " + top);
        }
        RuntimePredictor p = ModelArgument.load(model);
        if (!p.modelsClusters()) {
            throw new IllegalArgumentException("--model " + model + " is a host (CPU) model; layouts are searched "
                    + "with a device model such as the bundled gpu");
        }
        DeviceCatalog catalog = Catalogs.of(devices);
        Device d = catalog.require(device);
        TransformerSpec spec = HuggingFaceConfig.read(transformer);
        Topology topo = cluster.topology(d).orElse(Topology.assumedFor(d));
        long t0 = System.nanoTime();
        LayoutSearch search = new LayoutSearch(p, spec.graph(seq), d, gpus, globalBatch).topology(topo)
                .precision(cluster.precision == null ? org.scaledl.workload.Precision.FP16 : cluster.precision());
        List<LayoutSearch.Layout> all = search.search();
        double seconds = (System.nanoTime() - t0) / 1e9;
        List<LayoutSearch.Layout> shown = all.subList(0, Math.min(top, all.size()));
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("model", spec.name());
            root.put("parameters", spec.parameterCount());
            root.put("gpus", gpus);
            root.put("global_batch", globalBatch);
            root.put("device", d.name());
            root.put("topology", topo.describe());
            root.put("layouts", all.size());
            root.put("layouts_that_fit", all.stream().filter(LayoutSearch.Layout::fits).count());
            root.put("search_seconds", seconds);
            ArrayNode arr = root.putArray("ranked");
            for (LayoutSearch.Layout l : shown) {
                ObjectNode o = arr.addObject();
                o.put("tensor", l.parallelism().tensor());
                o.put("pipeline", l.parallelism().pipeline());
                o.put("data", l.parallelism().data());
                o.put("micro_batch", l.microBatch());
                o.put("micro_batches", l.parallelism().microBatches());
                o.put("virtual_stages", l.parallelism().virtualStages());
                o.put("sequence_parallel", l.parallelism().sequenceParallel());
                o.put("zero_stage", l.parallelism().zeroStage());
                o.put("recompute", l.recompute().label());
                o.put("ms", l.millis());
                o.put("sequences_per_s", l.sequencesPerSecond(globalBatch));
                o.put("memory_gb", l.memoryGb());
                o.put("fits", l.fits());
            }
            System.out.println(om.writerWithDefaultPrettyPrinter().writeValueAsString(root));
            return 0;
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%s (%.2fB parameters) on %d x %s, global "
                + "batch %d, %s:%n", spec.name(), spec.parameterCount() / 1e9, gpus, d.name(), globalBatch,
                topo.describe()));
        b.append(String.format(Locale.ROOT, "%4s %3s %3s %4s %5s %6s %3s %3s %4s %-9s %10s %9s %8s%n", "rank", "tp",
                "pp", "dp", "micro", "micros", "v", "sp", "zero", "recompute", "ms", "seq/s", "mem GiB"));
        int rank = 1;
        for (LayoutSearch.Layout l : shown) {
            b.append(String.format(Locale.ROOT, "%4d %3d %3d %4d %5d %6d %3d %3s %4d %-9s %10.1f %9.1f %8.1f%s%n",
                    rank++, l.parallelism().tensor(), l.parallelism().pipeline(), l.parallelism().data(),
                    l.microBatch(), l.parallelism().microBatches(), l.parallelism().virtualStages(),
                    l.parallelism().sequenceParallel() ? "y" : "n", l.parallelism().zeroStage(), l.recompute().label(),
                    l.millis(), l.sequencesPerSecond(globalBatch), l.memoryGb(), l.fits() ? "" : "  (out of memory)"));
        }
        b.append(String.format(Locale.ROOT, "%d layouts (%d fit) searched in %.2f s", all.size(),
                all.stream().filter(LayoutSearch.Layout::fits).count(), seconds));
        System.out.println(b);
        return 0;
    }
}
