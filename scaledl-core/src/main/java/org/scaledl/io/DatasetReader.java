package org.scaledl.io;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.ModelGraph;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a dataset folder in the reference layout:
 *
 * <pre>
 * DIR/runs.csv     model,resolution,batch,world_size,threads,phase,iter_ms_p50,...,params,graph
 * DIR/graphs/*.onnx
 * DIR/layers.csv   optional: model,resolution,batch,threads,module,module_type,calls,fwd_ms_p50
 * </pre>
 *
 * <p>Required {@code runs.csv} columns: {@code model, batch, world_size, threads, phase, iter_ms_p50, graph}
 * ({@code graph} relative to DIR). Optional: {@code resolution}; {@code params}, which when present must equal the
 * imported graph's parameter count (a mismatch is logged as a warning). Each graph file is imported once.
 * {@code layers.csv} rows are attached to the inference, single-worker sample with the same model, resolution,
 * batch and threads.
 *
 * <pre>{@code
 * Dataset d = DatasetReader.read(Path.of("datasets/cpu-ddp"));
 * }</pre>
 *
 * <p>Every problem (missing column, unparsable or non-positive number, unknown phase, missing graph file) is an
 * {@link InvalidInputException} naming the file and line; nothing is silently dropped.
 */
public final class DatasetReader {
    private static final Logger LOG = LoggerFactory.getLogger(DatasetReader.class);

    private DatasetReader() {
    }

    /**
     * Reads {@code dir/runs.csv}, its graphs and, if present, {@code dir/layers.csv}.
     *
     * @throws InvalidInputException for any malformed input
     */
    public static Dataset read(Path dir) {
        Path runs = dir.resolve("runs.csv");
        if (!Files.isRegularFile(runs)) {
            throw InvalidInputException.inSource(dir.toString(), "no runs.csv in this folder");
        }
        return readRuns(runs);
    }

    /**
     * Reads a runs file in the {@code runs.csv} format under any name; graph paths are relative to its folder, and
     * {@code layers.csv} beside it is attached when present.
     *
     * @throws InvalidInputException for any malformed input
     */
    public static Dataset readRuns(Path runs) {
        Path dir = runs.toAbsolutePath().getParent();
        if (!Files.isRegularFile(runs)) {
            throw InvalidInputException.inSource(runs.toString(), "file not found");
        }
        CsvTable t = CsvTable.read(runs, "model", "batch", "world_size", "threads", "phase", "iter_ms_p50", "graph");
        Map<String, Map<String, Double>> layerTimes = readLayers(dir.resolve("layers.csv"));
        Map<String, ModelGraph> graphs = new HashMap<>();
        List<Sample> samples = new ArrayList<>(t.size());
        for (int r = 0; r < t.size(); r++) {
            String model = t.get(r, "model");
            if (model.isEmpty()) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "empty model name");
            }
            String graphPath = t.get(r, "graph");
            Path file = dir.resolve(graphPath).normalize();
            int line = t.line(r);
            ModelGraph g = graphs.computeIfAbsent(graphPath, k -> {
                if (!Files.isRegularFile(file)) {
                    throw InvalidInputException.atLine(t.source(), line, "graph file not found: " + file);
                }
                return OnnxImporter.read(file);
            });
            Phase phase;
            try {
                phase = Phase.parse(t.get(r, "phase"));
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(t.source(), line, e.getMessage());
            }
            int batch = t.positiveInt(r, "batch");
            int world = t.positiveInt(r, "world_size");
            int threads = t.positiveInt(r, "threads");
            double ms = t.positiveFinite(r, "iter_ms_p50");
            Workload.Builder w = Workload.builder(g).batch(batch).phase(phase).worldSize(world).threads(threads)
                    .tag("model", model).tag("family", Dataset.familyOf(model)).tag("row", Integer.toString(r))
                    .tag("graph", graphPath);
            t.opt(r, "resolution").ifPresent(v -> w.tag("resolution", v));
            t.opt(r, "params").ifPresent(p -> {
                if (!p.equals(Long.toString(g.parameterCount()))) {
                    LOG.warn("{}:{}: params column says {} but graph {} has {} parameters", t.source(), line, p,
                            graphPath, g.parameterCount());
                }
            });
            Map<String, Double> layers = Map.of();
            if (phase == Phase.INFER && world == 1) {
                layers = layerTimes.getOrDefault(key(model, t.opt(r, "resolution").orElse(""), batch, threads),
                        Map.of());
            }
            samples.add(new Sample(w.build(), ms, layers));
        }
        if (samples.isEmpty()) {
            throw InvalidInputException.inSource(runs.toString(), "no data rows");
        }
        return new Dataset(dir.getFileName() == null ? dir.toString() : dir.getFileName().toString(), samples);
    }

    private static String key(String model, String resolution, int batch, int threads) {
        return model + "|" + resolution + "|" + batch + "|" + threads;
    }

    private static Map<String, Map<String, Double>> readLayers(Path file) {
        if (!Files.isRegularFile(file)) {
            return Map.of();
        }
        CsvTable t = CsvTable.read(file, "model", "batch", "threads", "module", "fwd_ms_p50");
        Map<String, Map<String, Double>> out = new HashMap<>();
        for (int r = 0; r < t.size(); r++) {
            String k = key(t.get(r, "model"), t.opt(r, "resolution").orElse(""), t.positiveInt(r, "batch"),
                    t.positiveInt(r, "threads"));
            String module = t.get(r, "module");
            if (module.isEmpty()) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "empty module name");
            }
            out.computeIfAbsent(k, x -> new LinkedHashMap<>()).merge(module, t.positiveFinite(r, "fwd_ms_p50"),
                    Double::sum);
        }
        return out;
    }
}
