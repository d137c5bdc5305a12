package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.InvalidInputException;
import org.scaledl.io.Candidates;
import org.scaledl.io.CsvTable;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.Prediction;
import org.scaledl.model.PredictionWarning;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.file.SafeFiles;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl predict --model model.sdl --graph g.onnx --batch 8 ...} predicts one workload;
 * {@code --candidates grid.csv [--out predictions.csv|.jsonl]} scores a table of them. A device model
 * ({@code fit --gpu}) needs {@code --device NAME}; a host model knowing several machines too.
 */
@Command(name = "predict", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Predict one workload, or every row of a candidate table, with a saved model. Warnings (where "
                + "the workload leaves what the model was fitted on) go to stderr.")
final class PredictCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, description = "Saved model (scaledl fit)")
    Path model;

    @Option(names = "--graph", description = "ONNX graph (one workload)")
    Path graph;

    @Option(names = "--batch", description = "Samples per worker (one workload)")
    Integer batch;

    @Option(names = "--world-size", defaultValue = "1", description = "Data-parallel workers (default 1)")
    int worldSize;

    @Option(names = "--tensor", defaultValue = "1", description = "Tensor-parallel degree (device models; default 1)")
    int tensor;

    @Option(names = "--pipeline", defaultValue = "1", description = "Pipeline stages (device models; default 1)")
    int pipeline;

    @Option(names = "--micro-batches", defaultValue = "1", description = "Pipeline micro-batches (default 1)")
    int microBatches;

    @Option(names = "--threads", defaultValue = "1", description = "Threads per worker (default 1)")
    int threads;

    @Option(names = "--phase", defaultValue = "train", description = "train or infer (default train)")
    Phase phase;

    @Option(names = "--device", description = "GPU of a device model (\"NVIDIA H100 80GB HBM3\"), or the CPU "
            + "machine of a host model that knows several")
    String device;

    @Option(names = "--devices", description = "Extra device catalog CSV (NeuSight device_configs layout)")
    Path devices;

    @Option(names = "--candidates", description = "Score every row of this CSV: columns graph (path relative to "
            + "the CSV), batch, world_size, threads, phase, and optionally device, tensor, pipeline, micro_batches; "
            + "other columns are carried through")
    Path candidates;

    @Option(names = "--out", description = "With --candidates: write here (.csv or .jsonl) instead of stdout")
    Path out;

    @Option(names = "--json", description = "Print JSON (one workload)")
    boolean json;

    @picocli.CommandLine.Mixin
    GraphOptions graphOptions;

    @Override
    public Integer call() throws Exception {
        RuntimePredictor p = RuntimePredictor.load(model);
        if (graphOptions.allowPartial) {
            p = p.allowingPartialGraphs();
        }
        if (candidates != null) {
            if (graph != null || batch != null || json) {
                throw new IllegalArgumentException("--candidates replaces --graph, --batch and --json");
            }
            return scoreCandidates(p);
        }
        if (graph == null || batch == null) {
            throw new IllegalArgumentException("say what to predict: --graph and --batch (or --candidates)");
        }
        if (out != null) {
            throw new IllegalArgumentException("--out applies to --candidates");
        }
        Workload.Builder wb = Workload.builder(graphOptions.read(graph)).batch(batch).threads(threads).phase(phase)
                .parallelism(Parallelism.of(worldSize, tensor, pipeline, microBatches));
        resolveDevice(p, device).ifPresent(wb::device);
        Workload w = wb.build();
        Prediction pr = p.predict(w);
        for (PredictionWarning x : pr.warnings()) {
            System.err.printf(Locale.ROOT, "scaledl: warning: %s (%s, %.0f%% of the prediction)%n", x.message(),
                    x.kind().name().toLowerCase(Locale.ROOT), 100 * x.share());
        }
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            ObjectNode wl = root.putObject("workload");
            wl.put("graph", w.graph().name());
            wl.put("batch", w.batch());
            wl.put("phase", w.phase().label());
            wl.put("world_size", w.worldSize());
            wl.put("threads", w.threads());
            wl.put("parallelism", w.parallelism().label());
            if (w.device().isPresent()) {
                wl.put("device", w.device().get().name());
            } else {
                wl.putNull("device");
            }
            root.put("ms", pr.millis());
            root.put("low_ms", pr.lowMillis());
            root.put("high_ms", pr.highMillis());
            warnings(root.putArray("warnings"), pr);
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

    private static void warnings(ArrayNode arr, Prediction pr) {
        for (PredictionWarning x : pr.warnings()) {
            ObjectNode o = arr.addObject();
            o.put("kind", x.kind().name().toLowerCase(Locale.ROOT));
            o.put("message", x.message());
            o.put("share", x.share());
            if (x.value().isPresent()) {
                o.put("value", x.value().get());
            }
            if (!x.range().isEmpty()) {
                o.put("range", x.range());
            }
        }
    }

    /** The device of a workload: a GPU of the catalog for device models, a known machine for host ones. */
    private java.util.Optional<Device> resolveDevice(RuntimePredictor p, String name) {
        if (p.layerCostKind().equals("device")) {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException(model + " is a device model: say which GPU with --device NAME");
            }
            DeviceCatalog catalog = EvaluateGpuCommand.catalog(devices);
            try {
                return java.util.Optional.of(catalog.require(name));
            } catch (InvalidInputException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
        }
        if (devices != null) {
            throw new IllegalArgumentException("--devices applies to device models (scaledl fit --gpu); " + model
                    + " is not one");
        }
        if (name == null || name.isEmpty()) {
            return java.util.Optional.empty();
        }
        if (!p.machines().contains(name)) {
            throw new IllegalArgumentException("machine '" + name + "' is not one of this model's " + p.machines()
                    + org.scaledl.Suggestions.closest(name, p.machines()).map(s -> "; did you mean '" + s + "'?").orElse(""));
        }
        return java.util.Optional.of(Device.cpu(name, 1, 0, 0, 0, 0));
    }

    /** Candidates read, scored and written at a time: memory stays flat in the table's length. */
    static final int CHUNK_ROWS = 4096;

    /**
     * Scores a candidate table chunk by chunk (read, predict on every core, write in row order), to {@code --out}
     * through a temporary file that replaces it only when every row is written, or to stdout; prints the throughput
     * on stderr.
     */
    private int scoreCandidates(RuntimePredictor p) throws IOException {
        boolean jsonl = out != null && out.getFileName().toString().endsWith(".jsonl");
        long[] counts = new long[2];
        long[] nanos = new long[1];
        try (Candidates.Chunks in = Candidates.open(candidates, graphOptions::read,
                name -> resolveDevice(p, name.isEmpty() ? device : name))) {
            SafeFiles.Content content = stream -> {
                Writer w = new BufferedWriter(new OutputStreamWriter(stream, StandardCharsets.UTF_8), 1 << 16);
                List<String> cols = in.columns();
                if (!jsonl) {
                    w.write(String.join(",", cols.stream().map(CsvTable::quote).toList()));
                    w.write(",predicted_ms,low_ms,high_ms,warnings\n");
                }
                ObjectMapper om = new ObjectMapper();
                for (Candidates c = in.next(CHUNK_ROWS); !c.workloads().isEmpty(); c = in.next(CHUNK_ROWS)) {
                    long t0 = System.nanoTime();
                    Prediction[] scored = score(p, c);
                    nanos[0] += System.nanoTime() - t0;
                    CsvTable t = c.table();
                    for (int r = 0; r < t.size(); r++) {
                        w.write(jsonl ? jsonLine(om, t, r, cols, scored[r]) : csvLine(t, r, cols, scored[r]));
                    }
                    counts[0] += t.size();
                }
                counts[1] = in.graphs();
                w.flush();
            };
            if (out == null) {
                content.writeTo(System.out);
            } else {
                SafeFiles.write(out, content);
            }
        }
        double seconds = nanos[0] / 1e9;
        if (!Main.quiet) {
            System.err.printf(Locale.ROOT, "scored %d candidates over %d graphs in %.3f s (%.0f / s)%n", counts[0],
                    counts[1], seconds, counts[0] / Math.max(seconds, 1e-9));
        }
        return 0;
    }

    /**
     * The candidates' predictions, on every core (the predictor is thread-safe, and a prediction does not depend
     * on the order or the thread asking: {@link RuntimePredictor#predictScored}); a row the model refuses is
     * reported at its line, the first such row of the chunk whatever the threads did.
     */
    private static Prediction[] score(RuntimePredictor p, Candidates c) {
        List<Workload> ws = c.workloads();
        Prediction[] scored = new Prediction[ws.size()];
        String[] refused = new String[ws.size()];
        java.util.stream.IntStream.range(0, ws.size()).parallel().forEach(i -> {
            try {
                scored[i] = p.predictScored(ws.get(i));
            } catch (IllegalArgumentException e) {
                refused[i] = e.getMessage();
            }
        });
        for (int i = 0; i < refused.length; i++) {
            if (refused[i] != null) {
                throw InvalidInputException.atLine(c.table().source(), c.table().line(i), refused[i]);
            }
        }
        return scored;
    }

    private static String csvLine(CsvTable t, int r, List<String> cols, Prediction pr) {
        StringBuilder sb = new StringBuilder();
        for (String c : cols) {
            sb.append(CsvTable.quote(t.get(r, c))).append(',');
        }
        sb.append(String.format(Locale.ROOT, "%.4f,%.4f,%.4f,", pr.millis(), pr.lowMillis(), pr.highMillis()));
        List<String> kinds = pr.warnings().stream().map(x -> x.kind().name().toLowerCase(Locale.ROOT)).distinct()
                .toList();
        return sb.append(String.join(";", kinds)).append('\n').toString();
    }

    private static String jsonLine(ObjectMapper om, CsvTable t, int r, List<String> cols, Prediction pr)
            throws IOException {
        ObjectNode o = om.createObjectNode();
        for (String c : cols) {
            o.put(c, t.get(r, c));
        }
        o.put("predicted_ms", pr.millis());
        o.put("low_ms", pr.lowMillis());
        o.put("high_ms", pr.highMillis());
        warnings(o.putArray("warnings"), pr);
        return om.writeValueAsString(o) + "\n";
    }
}
