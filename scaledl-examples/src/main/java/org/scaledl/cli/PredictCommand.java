package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl predict --model model.sdl --graph g.onnx --batch 8 ...}; a device model ({@code fit --gpu}) needs
 * {@code --device NAME}.
 */
@Command(name = "predict", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Predict one workload with a saved model.")
final class PredictCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, description = "Saved model (scaledl fit)")
    Path model;

    @Option(names = "--graph", required = true, description = "ONNX graph")
    Path graph;

    @Option(names = "--batch", required = true, description = "Samples per worker")
    int batch;

    @Option(names = "--world-size", defaultValue = "1", description = "Data-parallel workers (default 1)")
    int worldSize;

    @Option(names = "--threads", defaultValue = "1", description = "Threads per worker (default 1)")
    int threads;

    @Option(names = "--phase", defaultValue = "train", description = "train or infer (default train)")
    Phase phase;

    @Option(names = "--device", description = "GPU to predict on (device models from fit --gpu), e.g. "
            + "\"NVIDIA H100 80GB HBM3\"")
    String device;

    @Option(names = "--devices", description = "Extra device catalog CSV (NeuSight device_configs layout)")
    Path devices;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @picocli.CommandLine.Mixin
    GraphOptions graphOptions;

    @Override
    public Integer call() throws Exception {
        RuntimePredictor p = RuntimePredictor.load(model);
        if (graphOptions.allowPartial) {
            p = p.allowingPartialGraphs();
        }
        Workload.Builder wb = Workload.builder(graphOptions.read(graph)).batch(batch).worldSize(worldSize)
                .threads(threads).phase(phase);
        if (p.layerCostKind().equals("device")) {
            if (device == null) {
                throw new IllegalArgumentException(model + " is a device model: say which GPU with --device NAME");
            }
            wb.device(EvaluateGpuCommand.catalog(devices).require(device));
        } else if (device != null || devices != null) {
            throw new IllegalArgumentException("--device and --devices apply to device models (scaledl fit --gpu); "
                    + model + " is not one");
        }
        Workload w = wb.build();
        Prediction pr = p.predict(w);
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("ms", pr.millis());
            root.put("low_ms", pr.lowMillis());
            root.put("high_ms", pr.highMillis());
            ArrayNode b = root.putArray("breakdown");
            for (Prediction.Contribution c : pr.breakdown()) {
                b.addObject().put("name", c.name()).put("kind", c.label()).put("ms", c.millis());
            }
            System.out.println(om.writerWithDefaultPrettyPrinter().writeValueAsString(root));
        } else {
            if (pr.lowMillis() < pr.highMillis()) {
                System.out.printf(Locale.ROOT, "%s: %.2f ms (90%% interval %.2f–%.2f ms)%n", w, pr.millis(),
                        pr.lowMillis(), pr.highMillis());
            } else {
                System.out.printf(Locale.ROOT, "%s: %.2f ms (no interval: the model gives a point prediction)%n", w,
                        pr.millis());
            }
            pr.breakdown().stream().limit(10).forEach(c -> System.out.printf(Locale.ROOT, "  %-50s %-20s %9.3f ms%n",
                    c.name(), c.label(), c.millis()));
        }
        return 0;
    }
}
