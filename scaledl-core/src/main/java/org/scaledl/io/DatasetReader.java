package org.scaledl.io;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.ModelGraph;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Device;
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
 * ({@code graph} relative to DIR). Optional: {@code resolution}; {@code family} (the group held out together; else
 * the model name's leading letters); {@code device} (the machine of each row); {@code params}, which when present
 * must equal the imported graph's parameter count (a mismatch is logged as a warning). A {@code machine.json} beside
 * the runs describes the machine ({@link #machine}); every workload then carries it as its {@link Device}. Each graph file is imported once.
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
        Optional<Device> machine = machine(dir.resolve("machine.json"));
        Map<String, Device> byName = new HashMap<>();
        machine.ifPresent(m -> byName.put(m.name(), m));
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
            String family = t.opt(r, "family").orElse(Dataset.familyOf(model));
            Workload.Builder w = Workload.builder(g).batch(batch).phase(phase).worldSize(world).threads(threads)
                    .tag("model", model).tag("family", family).tag("row", Integer.toString(r))
                    .tag("graph", graphPath);
            Optional<String> deviceName = t.opt(r, "device");
            if (deviceName.isPresent()) {
                w.device(byName.computeIfAbsent(deviceName.get(), n -> Device.cpu(n, Math.max(1, threads * world),
                        0, 0, 0, 0)));
            } else {
                machine.ifPresent(w::device);
            }
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

    /**
     * The machine a dataset was measured on, from its {@code machine.json}: {@code name} (else {@code cpu}) names it,
     * {@code cpus} its cores, {@code avx512} / {@code avx2} its vector width, {@code l2} (lscpu's "4 MiB (2
     * instances)": the total) its L2, {@code clock_mhz} and {@code memory_bandwidth_gbps} where known. Empty when
     * there is no such file.
     *
     * @throws InvalidInputException naming the file for malformed JSON or a missing name or core count
     */
    public static Optional<Device> machine(Path file) {
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        JsonNode m;
        try {
            m = new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw InvalidInputException.wrap(file.toString(), "not a machine description (invalid JSON: "
                    + e.getMessage() + ")", e);
        }
        String name = m.path("name").asText(m.path("cpu").asText(""));
        int cores = m.path("cpus").asInt(0);
        if (name.isBlank() || cores <= 0) {
            throw InvalidInputException.inSource(file.toString(), "a machine description needs \"name\" (or \"cpu\") "
                    + "and a positive \"cpus\"");
        }
        int simd = m.path("avx512").asBoolean(false) ? 512 : m.path("avx2").asBoolean(false) ? 256 : 0;
        double l2 = 0;
        Matcher mb = MIB.matcher(m.path("l2").asText(""));
        if (mb.find()) {
            l2 = Double.parseDouble(mb.group(1)) * (mb.group(2).startsWith("K") ? 1.0 / 1024 : 1);
        }
        double clock = m.path("clock_mhz").asDouble(0);
        double bw = m.path("memory_bandwidth_gbps").asDouble(0);
        if (!(clock >= 0 && bw >= 0 && Double.isFinite(clock) && Double.isFinite(bw))) {
            throw InvalidInputException.inSource(file.toString(), "clock_mhz and memory_bandwidth_gbps must be >= 0");
        }
        return Optional.of(Device.cpu(name, cores, simd, l2, clock, bw));
    }

    private static final Pattern MIB = Pattern.compile("([0-9.]+)\\s*([KM])i?B");

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
