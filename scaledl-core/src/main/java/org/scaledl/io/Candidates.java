package org.scaledl.io;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.ModelGraph;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * Workloads that could be run, not yet measured: a candidate table with the column names of {@code runs.csv}, or a
 * grid spec that expands into one. {@code predict --candidates} scores them, {@code plan} chooses which to measure.
 *
 * <p>A <b>candidate table</b> is a CSV with the columns {@code graph} (an ONNX file, relative to the table's folder),
 * {@code batch}, {@code world_size}, {@code threads}, {@code phase}; optionally {@code tensor}, {@code pipeline},
 * {@code micro_batches}, {@code device}, and {@code model}, {@code family}, {@code resolution} (carried as tags, as
 * in a dataset). Any other column is carried through untouched.
 *
 * <p>A <b>grid spec</b> is a text file of {@code key = value, value, ...} lines ({@code #} starts a comment) whose
 * cartesian product is the candidate set:
 *
 * <pre>
 * model      = resnet18, mobilenet_v3_small     # required
 * resolution = 112, 64                          # input size (sequence length for sequence models); optional
 * batch      = 2, 8, 32                         # required
 * threads    = 1, 2                             # default 1
 * world_size = 1, 2                             # default 1
 * phase      = train, infer                     # default train
 * graph      = graphs/{model}_r{resolution}.onnx   # the default; relative to the spec's folder
 * cores      = 2                                # optional: drop combinations with world_size x threads > cores
 * </pre>
 *
 * The graph template's {@code {model}} and {@code {resolution}} are replaced per candidate; every graph it names must
 * exist (the error says which, and how to export it). Rows come out in the order model, resolution, batch, threads,
 * world size, phase.
 *
 * @param table      the candidate rows (for a grid: the expanded table), with every column
 * @param workloads  one workload per row, in row order, tagged {@code model}, {@code family}, {@code resolution},
 *                   {@code graph} and {@code row} where known
 */
public record Candidates(CsvTable table, List<Workload> workloads) {
    private static final List<String> REQUIRED = List.of("graph", "batch", "world_size", "threads", "phase");
    private static final List<String> GRID_KEYS = List.of("model", "resolution", "batch", "threads", "world_size",
            "phase", "graph", "cores");

    /** Copies. */
    public Candidates {
        workloads = List.copyOf(workloads);
    }

    /**
     * Reads a candidate table.
     *
     * @param csv      the table
     * @param importer reads a graph file (called once per distinct file)
     * @param devices  resolves a {@code device} value (called with {@code ""} when the column is absent or empty);
     *                 an {@link IllegalArgumentException} it throws is reported at the row's line
     * @throws InvalidInputException naming the file and line of any bad row or missing graph
     */
    public static Candidates read(Path csv, Function<Path, ModelGraph> importer,
            Function<String, Optional<Device>> devices) {
        CsvTable t = CsvTable.read(csv, REQUIRED.toArray(new String[0]));
        return of(t, csv.toAbsolutePath().getParent(), importer, devices);
    }

    /**
     * Expands a grid spec (see the class documentation).
     *
     * @throws InvalidInputException naming the spec's file and line for an unknown key, a bad value or a graph file
     *         that does not exist
     */
    public static Candidates grid(Path spec, Function<Path, ModelGraph> importer) {
        List<String> lines = CsvTable.readLines(spec);
        String source = spec.toString();
        Map<String, List<String>> values = new LinkedHashMap<>();
        Map<String, Integer> lineOf = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            if (hash >= 0) {
                line = line.substring(0, hash);
            }
            if (line.isBlank()) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq < 0) {
                throw InvalidInputException.atLine(source, i + 1, "expected 'key = value, ...', got '" + line.trim()
                        + "'");
            }
            String key = line.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            if (!GRID_KEYS.contains(key)) {
                throw InvalidInputException.atLine(source, i + 1, "unknown key '" + key + "'"
                        + org.scaledl.Suggestions.closest(key, GRID_KEYS).map(s -> "; did you mean '" + s + "'?")
                                .orElse("") + " (known: " + String.join(", ", GRID_KEYS) + ")");
            }
            if (values.containsKey(key)) {
                throw InvalidInputException.atLine(source, i + 1, "'" + key + "' given twice (first on line "
                        + lineOf.get(key) + ")");
            }
            List<String> vs = new ArrayList<>();
            for (String v : line.substring(eq + 1).split(",")) {
                if (v.isBlank()) {
                    throw InvalidInputException.atLine(source, i + 1, "empty value for '" + key + "'");
                }
                vs.add(v.trim());
            }
            values.put(key, vs);
            lineOf.put(key, i + 1);
        }
        for (String k : List.of("model", "batch")) {
            if (!values.containsKey(k)) {
                throw InvalidInputException.inSource(source, "no '" + k + " = ...' line");
            }
        }
        for (String k : List.of("batch", "threads", "world_size", "resolution", "cores")) {
            for (String v : values.getOrDefault(k, List.of())) {
                try {
                    if (Integer.parseInt(v) < 1) {
                        throw new NumberFormatException();
                    }
                } catch (NumberFormatException e) {
                    throw InvalidInputException.atLine(source, lineOf.get(k), k + " must be a positive integer, got '"
                            + v + "'");
                }
            }
        }
        for (String v : values.getOrDefault("phase", List.of())) {
            try {
                Phase.parse(v);
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(source, lineOf.get("phase"), e.detail());
            }
        }
        List<String> graphTemplate = values.getOrDefault("graph", List.of(values.containsKey("resolution")
                ? "graphs/{model}_r{resolution}.onnx" : "graphs/{model}.onnx"));
        if (graphTemplate.size() != 1) {
            throw InvalidInputException.atLine(source, lineOf.get("graph"), "graph takes one template");
        }
        int cores = values.containsKey("cores") ? Integer.parseInt(values.get("cores").get(0)) : Integer.MAX_VALUE;
        Path dir = spec.toAbsolutePath().getParent();
        boolean withResolution = values.containsKey("resolution");
        List<String> csv = new ArrayList<>();
        csv.add(withResolution ? "model,resolution,batch,world_size,threads,phase,graph"
                : "model,batch,world_size,threads,phase,graph");
        for (String model : values.get("model")) {
            for (String res : values.getOrDefault("resolution", List.of(""))) {
                String graph = graphTemplate.get(0).replace("{model}", model).replace("{resolution}", res);
                Path file = dir.resolve(graph).normalize();
                if (!Files.isRegularFile(file)) {
                    throw InvalidInputException.atLine(source, lineOf.getOrDefault("graph", lineOf.get("model")),
                            "graph file not found for model " + model + (withResolution ? " at " + res : "") + ": "
                            + file + " (export it: python -m scaledl_profiler export " + model
                            + (withResolution ? " --size " + res : "") + " --out " + file + ")");
                }
                for (String batch : values.get("batch")) {
                    for (String threads : values.getOrDefault("threads", List.of("1"))) {
                        for (String world : values.getOrDefault("world_size", List.of("1"))) {
                            if ((long) Integer.parseInt(threads) * Integer.parseInt(world) > cores) {
                                continue;
                            }
                            for (String phase : values.getOrDefault("phase", List.of("train"))) {
                                csv.add(String.join(",", withResolution
                                        ? List.of(CsvTable.quote(model), res, batch, world, threads, phase,
                                                CsvTable.quote(graph))
                                        : List.of(CsvTable.quote(model), batch, world, threads, phase,
                                                CsvTable.quote(graph))));
                            }
                        }
                    }
                }
            }
        }
        if (csv.size() == 1) {
            throw InvalidInputException.inSource(source, "the grid is empty: every combination needs more than "
                    + cores + " cores");
        }
        CsvTable t = CsvTable.parse(source + " (expanded)", csv, REQUIRED.toArray(new String[0]));
        return of(t, dir, importer, name -> Optional.empty());
    }

    private static Candidates of(CsvTable t, Path dir, Function<Path, ModelGraph> importer,
            Function<String, Optional<Device>> devices) {
        return new Rows(dir, importer, devices).read(t);
    }

    /**
     * Opens a candidate table to read in chunks of rows ({@link Chunks#next}), for tables too large to hold at once:
     * the chunks' workloads are those {@link #read} gives, in order (tags {@code row} count from the table's first
     * row), each graph file imported and each device resolved once per table.
     *
     * @throws InvalidInputException naming the file for an unreadable table or a missing column; each chunk names
     *         the file and line of a bad row
     */
    public static Chunks open(Path csv, Function<Path, ModelGraph> importer,
            Function<String, Optional<Device>> devices) {
        return new Chunks(CsvTable.open(csv, REQUIRED.toArray(new String[0])),
                new Rows(csv.toAbsolutePath().getParent(), importer, devices));
    }

    /** A candidate table read in chunks ({@link #open}). Not thread-safe. */
    public static final class Chunks implements AutoCloseable {
        private final CsvTable.Reader in;
        private final Rows rows;

        private Chunks(CsvTable.Reader in, Rows rows) {
            this.in = in;
            this.rows = rows;
        }

        /** The table's columns, in file order. */
        public List<String> columns() {
            return in.columns();
        }

        /**
         * The next candidates, at most {@code maxRows}; none at the end of the table.
         *
         * @throws InvalidInputException naming the file and line of a bad row or missing graph
         */
        public Candidates next(int maxRows) {
            return rows.read(in.next(maxRows));
        }

        /** The distinct graph files imported so far. */
        public int graphs() {
            return rows.graphs.size();
        }

        @Override
        public void close() {
            in.close();
        }
    }

    /** Reads rows into workloads: the one place that knows the candidate columns. */
    private static final class Rows {
        private final Path dir;
        private final Function<Path, ModelGraph> importer;
        private final Function<String, Optional<Device>> devices;
        private final Map<String, ModelGraph> graphs = new HashMap<>();
        private final Map<String, Optional<Device>> deviceCache = new HashMap<>();
        /** Rows read before this table (chunk). */
        private int offset;

        Rows(Path dir, Function<Path, ModelGraph> importer, Function<String, Optional<Device>> devices) {
            this.dir = dir;
            this.importer = importer;
            this.devices = devices;
        }

        Candidates read(CsvTable t) {
            List<Workload> ws = new ArrayList<>(t.size());
            for (int r = 0; r < t.size(); r++) {
                ws.add(workload(t, r));
            }
            offset += t.size();
            return new Candidates(t, ws);
        }

        private Workload workload(CsvTable t, int r) {
            String path = t.get(r, "graph");
            int line = t.line(r);
            ModelGraph g = graphs.computeIfAbsent(path, k -> {
                Path file = dir.resolve(k).normalize();
                if (!Files.isRegularFile(file)) {
                    throw InvalidInputException.atLine(t.source(), line, "graph file not found: " + file);
                }
                return importer.apply(file);
            });
            Phase ph;
            try {
                ph = Phase.parse(t.get(r, "phase"));
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(t.source(), line, e.detail());
            }
            Workload.Builder b = Workload.builder(g).batch(t.positiveInt(r, "batch")).threads(t.positiveInt(r,
                    "threads")).phase(ph).parallelism(Parallelism.of(t.positiveInt(r, "world_size"),
                    optionalInt(t, r, "tensor"), optionalInt(t, r, "pipeline"), optionalInt(t, r, "micro_batches")))
                    .tag("graph", path).tag("row", Integer.toString(offset + r));
            Optional<String> model = t.opt(r, "model").filter(m -> !m.isEmpty());
            model.ifPresent(m -> b.tag("model", m));
            t.opt(r, "family").filter(f -> !f.isEmpty()).or(() -> model.map(Dataset::familyOf))
                    .ifPresent(f -> b.tag("family", f));
            t.opt(r, "resolution").filter(v -> !v.isEmpty()).ifPresent(v -> b.tag("resolution", v));
            String deviceName = t.opt(r, "device").orElse("");
            try {
                deviceCache.computeIfAbsent(deviceName, devices).ifPresent(b::device);
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(t.source(), line, e.getMessage());
            }
            return b.build();
        }
    }

    private static int optionalInt(CsvTable t, int r, String column) {
        return t.opt(r, column).filter(v -> !v.isEmpty()).isPresent() ? t.positiveInt(r, column) : 1;
    }
}
