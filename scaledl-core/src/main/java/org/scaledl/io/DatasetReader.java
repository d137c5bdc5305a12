package org.scaledl.io;

import com.fasterxml.jackson.databind.JsonNode;
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
import org.scaledl.workload.Precision;
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
 * the model name's leading letters); {@code device} (the machine of each row: a GPU of the bundled catalog, as the
 * companion's GPU datasets name it, is that GPU); {@code precision} (fp32, tf32, fp16, bf16, ...: the workload's, FP32
 * where absent); {@code memory_format} (nchw or channels_last: how the run laid out its feature maps,
 * {@link org.scaledl.workload.Workload#memoryFormat()}; nchw where absent); {@code params}, which when present
 * must equal the imported graph's parameter count (a mismatch is logged as a warning). A {@code machine.json} beside
 * the runs describes the machine ({@link #machine}), or, where its name is a GPU of the catalog, names that GPU;
 * every workload then carries it as its {@link Device}. Each graph file is imported once.
 * {@code layers.csv} rows are attached to the inference, single-worker sample with the same model, resolution,
 * batch and threads.
 *
 * <pre>{@code
 * Dataset d = DatasetReader.read(Path.of("datasets/cpu-ddp"));
 * }</pre>
 *
 * <p>Every problem (missing column, unparsable number, unknown phase, missing graph file) is an
 * {@link InvalidInputException} naming the file and line; nothing is silently dropped. Times must lie in
 * [{@value #MIN_MILLIS}, {@value #MAX_MILLIS}] ms, batches in 1..{@value #MAX_BATCH}, world sizes in
 * 1..{@value #MAX_WORLD_SIZE}, threads in 1..{@value #MAX_THREADS}; a graph path must name a file inside DIR (not
 * {@code ../..}, not an absolute path elsewhere, not a symbolic link out of it). Files are read through
 * {@link CsvTable}'s caps. Each workload carries the tags {@code model}, {@code family}, {@code row}, {@code graph},
 * {@code resolution} where given, and {@value #SOURCE_TAG} ({@code runs.csv:LINE}).
 */
public final class DatasetReader {
    private static final Logger LOG = LoggerFactory.getLogger(DatasetReader.class);
    /** The GPUs a {@code device} column or {@code machine.json} may name (the bundled catalog). */
    private static final DeviceCatalog GPUS = DeviceCatalog.bundled();
    /** The shortest measured time a row may hold, ms (a nanosecond: below it is no measurement of an iteration). */
    public static final double MIN_MILLIS = 1e-6;
    /** The longest measured time a row may hold, ms (about 11.6 days). */
    public static final double MAX_MILLIS = 1e9;
    /** The largest batch a row may hold (2^20). */
    public static final int MAX_BATCH = 1 << 20;
    /** The largest world size a row may hold (2^20). */
    public static final int MAX_WORLD_SIZE = 1 << 20;
    /** The most threads a row may hold (2^16). */
    public static final int MAX_THREADS = 1 << 16;
    /**
     * The workload tag naming where a sample was read, {@code file:line} (a fit names the runs it leaves out by
     * it).
     */
    public static final String SOURCE_TAG = "source";

    private DatasetReader() {
    }

    /**
     * Reads {@code dir/runs.csv}, its graphs and, if present, {@code dir/layers.csv}.
     *
     * @throws InvalidInputException for any malformed input
     */
    public static Dataset read(Path dir) {
        Path runs = java.util.Objects.requireNonNull(dir, "dir").resolve("runs.csv");
        if (Files.isRegularFile(dir)) {
            throw InvalidInputException.inSource(dir.toString(), "is a file, not a dataset folder (give the folder "
                    + "that holds runs.csv" + (dir.getFileName() != null && dir.getFileName().toString()
                    .equals("runs.csv") && dir.getParent() != null ? ": " + dir.getParent() : "") + ")");
        }
        if (!Files.exists(dir)) {
            throw InvalidInputException.inSource(dir.toString(), "no such folder (a dataset folder holds runs.csv)");
        }
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
        if (Files.isDirectory(runs)) {
            throw InvalidInputException.inSource(runs.toString(), "a folder, not a runs table (give its runs.csv, or "
                    + "the folder where an option takes a dataset)");
        }
        if (!Files.exists(runs)) {
            throw InvalidInputException.inSource(runs.toString(), "file not found");
        }
        // a device or a pipe is read through the table's caps, as every table is (an empty one has no header)
        CsvTable t = CsvTable.read(runs, "model", "batch", "world_size", "threads", "phase", "iter_ms_p50", "graph");
        t.repeatedRow().ifPresent(lines -> LOG.warn("{}:{}: the same row as line {}, field for field: a copy is fitted "
                + "as a second measurement of its configuration (remove it if it is one)", t.source(), lines[0],
                lines[1]));
        Map<String, Map<String, Double>> layerTimes = readLayers(dir.resolve("layers.csv"));
        // a machine or device that names a GPU of the catalog is that GPU (the companion's GPU datasets)
        Optional<Device> machine = machine(dir.resolve("machine.json")).map(m -> GPUS.find(m.name()).orElse(m));
        Map<String, Device> byName = new HashMap<>();
        // each family label's first spelling, by its letters (a family held out is one group, however typed)
        Map<String, String> spellings = new HashMap<>();
        java.util.Set<String> respelt = new java.util.HashSet<>();
        machine.ifPresent(m -> byName.put(m.name(), m));
        Map<String, ModelGraph> graphs = new HashMap<>();
        List<Sample> samples = new ArrayList<>(t.size());
        for (int r = 0; r < t.size(); r++) {
            String model = t.get(r, "model");
            if (model.isEmpty()) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "empty model name");
            }
            String graphPath = t.get(r, "graph");
            int line = t.line(r);
            ModelGraph g = graphs.computeIfAbsent(graphPath, k -> {
                Path file = graphFile(dir, k, t.source(), line);
                if (!Files.isRegularFile(file)) {
                    throw InvalidInputException.atLine(t.source(), line, notAFile("graph", file));
                }
                return OnnxImporter.read(file);
            });
            Phase phase;
            try {
                phase = Phase.parse(t.get(r, "phase"));
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(t.source(), line, e.getMessage());
            }
            int batch = t.intInRange(r, "batch", 1, MAX_BATCH);
            int world = t.intInRange(r, "world_size", 1, MAX_WORLD_SIZE);
            int threads = t.intInRange(r, "threads", 1, MAX_THREADS);
            double ms = t.numberInRange(r, "iter_ms_p50", MIN_MILLIS, MAX_MILLIS);
            String family = t.opt(r, "family").map(f -> oneSpelling(spellings, respelt, f, t.source(), line))
                    .orElse(Dataset.familyOf(model));
            Workload.Builder w = Workload.builder(g).batch(batch).phase(phase).worldSize(world).threads(threads)
                    .tag("model", model).tag("family", family).tag("row", Integer.toString(r))
                    .tag("graph", graphPath).tag(SOURCE_TAG, t.source() + ":" + line);
            Optional<String> deviceName = t.opt(r, "device");
            if (deviceName.isPresent()) {
                w.device(byName.computeIfAbsent(deviceName.get(), n -> GPUS.find(n).orElseGet(() -> Device.cpu(n,
                        Math.max(1, threads * world), 0, 0, 0, 0))));
            } else {
                machine.ifPresent(w::device);
            }
            Optional<String> precision = t.opt(r, "precision");
            if (precision.isPresent()) {
                try {
                    w.precision(Precision.parse(precision.get()));
                } catch (InvalidInputException e) {
                    throw InvalidInputException.atLine(t.source(), line, e.detail());
                }
            }
            Optional<String> format = t.opt(r, "memory_format");
            if (format.isPresent()) {
                try {
                    w.memoryFormat(org.scaledl.workload.MemoryFormat.parse(format.get()));
                } catch (InvalidInputException e) {
                    throw InvalidInputException.atLine(t.source(), line, e.detail());
                }
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

    /** Below any processor's clock, MHz (a figure in GHz). */
    static final double MIN_CLOCK_MHZ = 100;
    /** Above any machine's memory bandwidth, GB/s (a GPU's HBM3e is 8,000; a figure in MB/s). */
    static final double MAX_MEMORY_GBPS = 20_000;

    /** The keys {@link #machine} reads. */
    private static final java.util.List<String> MACHINE_KEYS = java.util.List.of("name", "cpu", "cpus", "avx512",
            "avx2", "l2", "clock_mhz", "memory_bandwidth_gbps");
    /** The keys {@link #machine} reads a figure in a unit from, with the unit. */
    private static final Map<String, String> MACHINE_UNITS = Map.of("clock_mhz", "MHz", "memory_bandwidth_gbps",
            "GB/s", "l2", "a size with its unit (\"4 MiB (2 instances)\")");

    /** A figure's key without its unit ({@code clock_mhz}: {@code clock}). */
    private static String stem(String key) {
        return key.equals("l2") ? "l2" : key.substring(0, key.lastIndexOf('_'));
    }

    /**
     * The machine a dataset was measured on, from its {@code machine.json}: {@code name} (else {@code cpu}) names it,
     * {@code cpus} its cores, {@code avx512} / {@code avx2} its vector width, {@code l2} (lscpu's "4 MiB (2
     * instances)": the total) its L2, {@code clock_mhz} and {@code memory_bandwidth_gbps} where known (a key that looks
     * like a misspelling of one of these is said; other keys, as the companion writes, are not read). Empty when
     * there is no such file.
     *
     * @throws InvalidInputException naming the file and the field for malformed JSON, a missing name or core count,
     *         or a field that does not parse (a size that is no size, a negative clock)
     */
    public static Optional<Device> machine(Path file) {
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        String source = file.toString();
        JsonNode m;
        try {
            // (a byte-order mark an editor wrote is no character of the document, as a table's is not)
            m = org.scaledl.JsonTrees.readDocument(String.join("\n", CsvTable.readLines(file)).replaceFirst("^\uFEFF",
                    ""));
        } catch (IOException e) {
            throw InvalidInputException.invalidJson(source, "not a machine description", e);
        }
        if (m == null || !m.isObject()) {
            throw InvalidInputException.inSource(source, "not a machine description: " + (m == null || m.isMissingNode()
                    ? "the file is empty" : "expected a JSON object") + " (as the companion's machine command writes)");
        }
        // the companion writes more than is read (the host, the kernel, the library versions, the GPUs): a key that
        // looks like a misspelling of one read is said, as it would be dropped
        for (java.util.Iterator<String> it = m.fieldNames(); it.hasNext();) {
            String key = it.next();
            String typed = key.toLowerCase(java.util.Locale.ROOT);
            // a read figure under another unit's name (clock_ghz, memory_bandwidth_mbps, l2_kb) or none
            // (memory_bandwidth) is named with the key and unit that are read, not suggested as a misspelling
            Optional<String> stem = MACHINE_UNITS.keySet().stream().filter(k -> !typed.equals(k) && (typed.equals(
                    stem(k)) || typed.startsWith(stem(k) + "_"))).findFirst();
            if (stem.isPresent()) {
                LOG.warn("{}: \"{}\" is not read: the machine's {} is read from \"{}\", in {}", source,
                        InvalidInputException.printable(key, 40), stem(stem.get()).replace('_', ' '), stem.get(),
                        MACHINE_UNITS.get(stem.get()));
                continue;
            }
            org.scaledl.Suggestions.misspelt(key, MACHINE_KEYS).ifPresent(k -> LOG.warn("{}: \"{}\" is not read "
                    + "(did you mean \"{}\"?): the machine is described without it", source,
                    InvalidInputException.printable(key, 40), k));
        }
        String name = text(m, "name", source).or(() -> text(m, "cpu", source)).orElse("");
        if (name.isBlank()) {
            throw InvalidInputException.inSource(source, "a machine description needs \"name\" (or \"cpu\")");
        }
        if (!InvalidInputException.escaped(name).equals(name)) {
            // a fitted model keeps the name and refuses to load one that can forge a terminal's output
            throw InvalidInputException.inSource(source, "the machine's name holds a control character ('"
                    + InvalidInputException.escaped(InvalidInputException.printable(name, 60)) + "')");
        }
        int cores = (int) number(m, "cpus", source, 1, MAX_THREADS, true)
                .orElseThrow(() -> InvalidInputException.inSource(source, "a machine description needs a positive "
                        + "\"cpus\""));
        int simd = flag(m, "avx512", source) ? 512 : flag(m, "avx2", source) ? 256 : 0;
        double l2 = 0;
        Optional<String> l2Text = m.has("l2") && m.get("l2").isNull() ? Optional.empty() : text(m, "l2", source);
        if (l2Text.isPresent() && !l2Text.get().isBlank()) {
            Matcher mb = SIZE.matcher(l2Text.get().strip());
            if (!mb.lookingAt()) {
                throw InvalidInputException.inSource(source, "\"l2\" is not a size like \"4 MiB (2 instances)\": \""
                        + l2Text.get() + "\"");
            }
            double unit = switch (mb.group(2)) {
                case "K" -> 1.0 / 1024;
                case "G" -> 1024;
                default -> 1;
            };
            l2 = Double.parseDouble(mb.group(1)) * unit;
        }
        double clock = number(m, "clock_mhz", source, 0, 1e6, false).orElse(0);
        double bw = number(m, "memory_bandwidth_gbps", source, 0, 1e6, false).orElse(0);
        if (clock > 0 && clock < MIN_CLOCK_MHZ) {
            LOG.warn("{}: \"clock_mhz\" {} is below any processor's ({} MHz): GHz written as MHz? It is read as "
                    + "given", source, clock, MIN_CLOCK_MHZ);
        }
        if (bw > MAX_MEMORY_GBPS) {
            LOG.warn("{}: \"memory_bandwidth_gbps\" {} is above any machine's ({} GB/s): MB/s written as GB/s? It "
                    + "is read as given", source, bw, MAX_MEMORY_GBPS);
        }
        return Optional.of(Device.cpu(name, cores, simd, l2, clock, bw));
    }

    /**
     * A family label as the table's first spelling of it: two labels that differ only in case or blanks
     * ({@code resnet}, {@code ResNet }) are one family, said once (as two, a leave-one-family-out evaluation held
     * each out with the other fitted, and scored them better than they are).
     */
    private static String oneSpelling(Map<String, String> spellings, java.util.Set<String> respelt, String label,
            String source, int line) {
        String key = label.replaceAll("\\s+", "").toLowerCase(java.util.Locale.ROOT);
        String first = spellings.putIfAbsent(key, label);
        if (first != null && !first.equals(label)) {
            // (each other spelling said once)
            if (respelt.add(label)) {
                LOG.warn("{}:{}: family '{}' is read as '{}', an earlier row's spelling of it (labels that differ only "
                        + "in case or blanks are one family)", source, line, InvalidInputException.printable(label, 40),
                        InvalidInputException.printable(first, 40));
            }
            return first;
        }
        return label;
    }

    /** A text field, empty when absent or null. */
    private static Optional<String> text(JsonNode m, String field, String source) {
        JsonNode n = m.get(field);
        if (n == null || n.isNull()) {
            return Optional.empty();
        }
        if (!n.isTextual()) {
            throw InvalidInputException.inSource(source, "\"" + field + "\" must be a string, got " + n);
        }
        return Optional.of(n.asText());
    }

    /** A number field (or a number written as a string) in {@code [lo, hi]}, an integer if asked; empty when absent. */
    private static java.util.OptionalDouble number(JsonNode m, String field, String source, double lo, double hi,
            boolean integer) {
        JsonNode n = m.get(field);
        if (n == null || n.isNull()) {
            return java.util.OptionalDouble.empty();
        }
        double v = Double.NaN;
        if (n.isNumber()) {
            v = n.asDouble();
        } else if (n.isTextual()) {
            try {
                v = CsvTable.parseNumber(n.asText());
            } catch (NumberFormatException e) {
                v = Double.NaN;
            }
        }
        if (!(v >= lo && v <= hi) || integer && v != Math.rint(v)) {
            String range = integer ? (long) lo + ", " + (long) hi : lo + ", " + hi;
            throw InvalidInputException.inSource(source, "\"" + field + "\" must be "
                    + (integer ? "an integer" : "a number") + " in [" + range + "], got " + n);
        }
        return java.util.OptionalDouble.of(v);
    }

    /** A boolean field ({@code true}, {@code false}, or those words as strings); false when absent. */
    private static boolean flag(JsonNode m, String field, String source) {
        JsonNode n = m.get(field);
        if (n == null || n.isNull()) {
            return false;
        }
        if (n.isBoolean()) {
            return n.asBoolean();
        }
        if (n.isTextual() && (n.asText().equals("true") || n.asText().equals("false"))) {
            return n.asText().equals("true");
        }
        throw InvalidInputException.inSource(source, "\"" + field + "\" must be true or false, got " + n);
    }

    private static final Pattern SIZE = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)\\s*([KMG])i?B(?=\\s|\\(|$)");

    /**
     * The file a table's graph path names, confined to the table's folder: a path that leaves it ({@code ../..},
     * an absolute path elsewhere) is refused before anything is opened or looked up, and so is a path whose symbolic
     * links lead out of the folder.
     *
     * @throws InvalidInputException naming the table, the line and the path
     */
    static Path graphFile(Path dir, String graph, String source, int line) {
        return confined(dir, graph, "graph", "dataset", source, line);
    }

    /** Why a path a table names is not a file it can read: {@code what} not found, or a directory. */
    static String notAFile(String what, Path file) {
        return what + (Files.isDirectory(file) ? " is a directory, not a file: " : " file not found: ") + file;
    }

    /**
     * The file a table's cell names, confined to the table's folder: a path that leaves it ({@code ../..}, an
     * absolute path elsewhere) is refused before anything is opened or looked up, and so is a path whose symbolic
     * links lead out of the folder.
     *
     * @param dir    the table's folder
     * @param cell   the path as the table gives it
     * @param what   what the column names ({@code graph}, {@code transformer})
     * @param folder what to call the folder in the message ({@code dataset}, {@code table's})
     * @throws InvalidInputException naming the table, the line and the path
     */
    public static Path confined(Path dir, String cell, String what, String folder, String source, int line) {
        Path root = dir.toAbsolutePath().normalize();
        Path file;
        try {
            file = root.resolve(cell).normalize();
        } catch (java.nio.file.InvalidPathException e) {
            throw InvalidInputException.atLine(source, line, what + " path '" + printable(cell)
                    + "' is not a valid path");
        }
        if (!file.startsWith(root) || file.equals(root)) {
            throw InvalidInputException.atLine(source, line, what + " path '" + printable(cell) + "' leaves the "
                    + folder + " folder " + root + ": keep the files inside it and name them relative to it");
        }
        try {
            if (Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                    && !file.toRealPath().startsWith(root.toRealPath())) {
                throw InvalidInputException.atLine(source, line, what + " path '" + printable(cell) + "' is a "
                        + "symbolic link out of the " + folder + " folder " + root + ": copy the file into the folder");
            }
        } catch (IOException e) {
            throw InvalidInputException.atLine(source, line, "cannot resolve " + what + " path '" + printable(cell)
                    + "': " + e.getMessage());
        }
        return file;
    }

    private static String printable(String s) {
        return InvalidInputException.printable(s, 200);
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
            String k = key(t.get(r, "model"), t.opt(r, "resolution").orElse(""), t.intInRange(r, "batch", 1,
                    MAX_BATCH), t.intInRange(r, "threads", 1, MAX_THREADS));
            String module = t.get(r, "module");
            if (module.isEmpty()) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "empty module name");
            }
            out.computeIfAbsent(k, x -> new LinkedHashMap<>()).merge(module, t.numberInRange(r, "fwd_ms_p50",
                    MIN_MILLIS, MAX_MILLIS), Double::sum);
        }
        return out;
    }
}
