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
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.CudaGraphs;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Device;
import org.scaledl.workload.MemoryFormat;
import org.scaledl.workload.MoeDispatcher;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.RecomputeModule;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Workloads that could be run, not yet measured: a candidate table with the column names of {@code runs.csv}, or a
 * grid spec that expands into one. {@code predict --candidates} scores them, {@code plan} chooses which to measure.
 *
 * <p>A <b>candidate table</b> is a CSV with a row per workload. Its model is {@code graph} (an ONNX file) or
 * {@code transformer} (a Hugging Face {@code config.json}, read by {@link HuggingFaceConfig}) with {@code seq} (its
 * sequence length), paths relative to the table's folder; {@code batch} is the samples (sequences) of one
 * micro-batch and {@code micro_batches} (default 1) how many micro-batches each data-parallel replica runs per
 * iteration, so a replica's batch is their product; or {@code global_batch}, the sequences an iteration over every
 * replica ({@code batch × micro_batches × replicas}), instead of {@code micro_batches}. Optional columns, with their
 * defaults (or the caller's, see {@link #open}): {@code world_size} (data-parallel replicas, 1) or {@code gpus}
 * (every GPU of the job: the replicas are {@code gpus / (tensor × pipeline × context)}, refused where that does not
 * divide or where a {@code world_size} beside it disagrees), {@code tensor} and {@code pipeline} (1),
 * {@code threads} (1), {@code phase} (train), {@code device} (a GPU or CPU machine name), {@code precision} (fp32,
 * tf32, fp16, bf16, fp8, fp8-block, mxfp8, nvfp4; fp32), {@code recompute} (none, selective, full or auto; auto:
 * none where the job fits, else the least that makes it fit), {@code recompute_modules} (what selective
 * recomputation recomputes, Megatron core's names separated by {@code +} or spaces: core_attn, moe_act, layernorm,
 * mla_up_proj, mlp, moe, shared_experts, {@link org.scaledl.workload.RecomputeModule}; core_attn; with an empty
 * {@code recompute}, selective),
 * {@code offload_layers} (training: the first N layers of each model chunk keep their saved activations in host
 * memory, {@link Workload#offloadLayers()}; 0),
 * {@code sequence_parallel} (true or false; false), {@code context} (context-parallel degree, 1),
 * {@code virtual_stages} (interleaved model chunks per pipeline stage, 1), {@code expert} (expert-parallel degree,
 * 1), {@code expert_tensor} (1 with expert parallelism; the tensor degree for a mixture of experts without it:
 * {@link Parallelism#defaultExpertTensor}),
 * {@code zero_stage} (0–3, 3 = FSDP; 0), {@code expert_imbalance} (1),
 * {@code lora_rank} (LoRA fine-tuning with adapters of that rank, the model's weights frozen; 0: every weight
 * trains), {@code uneven_pipeline} (true: layers that do not divide into the pipeline's chunks are split
 * unevenly, balanced; false), {@code document_tokens} (packed sequences: the effective tokens of the documents
 * packed into each sequence, attention running within a document; 0: one document a sequence),
 * {@code grad_dtype} (fp32, or bf16/fp16: 16-bit gradient buffers, mixed precision only; the precision's default,
 * {@link Workload#sixteenBitGradients()}: fp16 in FP16 training, else fp32),
 * {@code grad_reduce} ({@code overlapped} with the last micro-batch's backward pass, {@code gather-after-step} (the
 * updated weights' gather exposed after the optimizer step, ZeRO 1–2) or {@code after-backward}:
 * {@link Workload#gradReduce()}; overlapped), {@code fp8_param_gather} (true: the low-precision linear
 * layers' weights in the recipe's format alone, {@link Workload#fp8ParamGather()}; false; a caller's default applies
 * to the rows that can run it only), {@code moe_a2a_overlap} (true: expert parallelism's
 * all-to-all behind another micro-batch's compute, {@link Workload#expertCommOverlap()}; false; a caller's default
 * applies to the rows Megatron core runs it with and where it hides something only,
 * {@link Workload.Builder#expertCommOverlapWhereRun}), {@code moe_dispatcher} (alltoall, allgather, deepep or hybridep,
 * {@link Workload#moeDispatcher()}; alltoall; a caller's default applies to the rows with expert parallelism only), {@code cuda_graphs} (none, layers or iteration: what of the
 * iteration runs as CUDA graphs, {@link Workload#cudaGraphs()}; none; a caller's default applies to transformer rows
 * only), {@code memory_format} (nchw or channels_last: how an imported graph's feature maps are laid out,
 * {@link Workload#memoryFormat()}; nchw; refused on a transformer row, a caller's default applies to graph rows
 * only),
 * {@code gpus_per_node}, {@code nvlink_domain} and {@code inter_node_gbps} (the nodes of the GPUs, the GPUs one NVLink
 * domain joins, network Gb/s per node; the device's standard system), and {@code model}, {@code family},
 * {@code resolution} (carried as tags, as in a dataset). A job uses {@code world_size × tensor × pipeline × context}
 * GPUs. Files the table names must lie in its folder. Any other column is carried through untouched.
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
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Candidates.class);
    private static final List<String> REQUIRED = List.of("batch");
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
        java.util.Objects.requireNonNull(importer, "importer");
        java.util.Objects.requireNonNull(devices, "devices");
        CsvTable t = CsvTable.read(java.util.Objects.requireNonNull(csv, "csv"));
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
        // each key's bound as the expanded table's reader keeps it (a runs table's), so a grid is refused at its line
        Map<String, Integer> most = Map.of("batch", DatasetReader.MAX_BATCH, "threads", DatasetReader.MAX_THREADS,
                "world_size", DatasetReader.MAX_WORLD_SIZE);
        for (String k : List.of("batch", "threads", "world_size", "resolution", "cores")) {
            List<String> vs = values.get(k);
            int max = most.getOrDefault(k, Integer.MAX_VALUE);
            for (int j = 0; vs != null && j < vs.size(); j++) {
                String v = vs.get(j);
                try {
                    long whole = CsvTable.parseWhole(v);
                    if (whole < 1 || whole > max) {
                        throw new NumberFormatException();
                    }
                    int n = (int) whole;
                    vs.set(j, String.valueOf(n));   // written as read: 01 is 1
                } catch (NumberFormatException e) {
                    throw InvalidInputException.atLine(source, lineOf.get(k), k + " must be an integer in 1.."
                            + max + ", got '" + v + "'");
                }
            }
        }
        List<String> phases = values.get("phase");
        for (int j = 0; phases != null && j < phases.size(); j++) {
            try {
                // the plan says train or infer, as the companion reads it, whatever alias the grid used
                phases.set(j, Phase.parse(phases.get(j)).label());
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(source, lineOf.get("phase"), e.detail());
            }
        }
        for (Map.Entry<String, List<String>> e : values.entrySet()) {
            List<String> vs = e.getValue();
            for (int j = 0; j < vs.size(); j++) {
                if (vs.subList(0, j).contains(vs.get(j))) {
                    // a value twice would make each of its candidates twice, priced and chosen twice
                    throw InvalidInputException.atLine(source, lineOf.get(e.getKey()), "'" + e.getKey() + "' lists "
                            + vs.get(j) + " twice");
                }
            }
        }
        List<String> graphTemplate = values.getOrDefault("graph", List.of(values.containsKey("resolution")
                ? "graphs/{model}_r{resolution}.onnx" : "graphs/{model}.onnx"));
        if (graphTemplate.size() != 1) {
            throw InvalidInputException.atLine(source, lineOf.get("graph"), "graph takes one template");
        }
        if (values.containsKey("cores") && values.get("cores").size() != 1) {
            // the machine's cores are one number (the second of two was dropped without a word)
            throw InvalidInputException.atLine(source, lineOf.get("cores"), "cores takes one number (the machine's "
                    + "cores), got " + String.join(", ", values.get("cores")));
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
                Path file = DatasetReader.confined(dir, graph, "graph", "grid spec's", source,
                        lineOf.getOrDefault("graph", lineOf.get("model")));
                if (!Files.isRegularFile(file)) {
                    throw InvalidInputException.atLine(source, lineOf.getOrDefault("graph", lineOf.get("model")),
                            DatasetReader.notAFile("graph", file) + " (model " + model
                            + (withResolution ? " at " + res : "") + "; export it: python -m scaledl_profiler export "
                            + model + (withResolution ? " --size " + res : "") + " --out " + file + ")");
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
        checkColumns(t.source(), t.columns());
        return new Rows(dir, importer, devices, Map.of()).read(t);
    }

    /**
     * Refuses a table without {@code batch} or a model column, and warns of its near misses ({@link #nearMisses})
     * before any row is read: a row refused for what such a column leaves at its default (sequence parallelism
     * without the tensor-parallel degree the table gives as {@code tp}) comes after the warning that explains it.
     */
    private static void checkColumns(String source, List<String> columns) {
        checkColumns(source, columns, false);
    }

    /** Columns a row carries as labels, or that name its model: a runs table's look-alike of one is not refused. */
    private static final java.util.Set<String> LABELS = java.util.Set.of("model", "family", "graph", "transformer");

    /** Settings of an imported graph's row (CPU threads, input size), which a transformer's row does not read. */
    private static final java.util.Set<String> GRAPH_ONLY = java.util.Set.of("threads", "resolution");

    /**
     * {@link #checkColumns(String, List)}; with {@code measured} (a job runs table: its rows are jobs that ran) a near
     * miss is refused, not warned of: read as absent, each row would be fitted as a job that did not run.
     */
    private static void checkColumns(String source, List<String> columns, boolean measured) {
        Map<String, String> near = nearMisses(columns);
        java.util.Optional<String> other = CsvTable.otherSeparator(columns);
        if (other.isPresent()) {
            throw InvalidInputException.inSource(source, other.get() + " (columns batch, transformer or graph...)");
        }
        if (!columns.contains("batch")) {
            String named = near.entrySet().stream().filter(e -> e.getValue().equals("batch")).map(e -> "; its column '"
                    + InvalidInputException.printable(e.getKey(), 40) + "' is another name for it: rename it batch")
                    .findFirst().orElse("");
            throw InvalidInputException.inSource(source, "missing column 'batch' (the samples of one micro-batch; "
                    + "have " + String.join(", ", columns) + ")" + named);
        }
        if (!columns.contains("graph") && !columns.contains("transformer")) {
            throw InvalidInputException.inSource(source, "a candidate table needs a graph column (ONNX files) or a "
                    + "transformer column (Hugging Face config.json files); it has " + columns);
        }
        // a runs table's look-alike of a column that changes its jobs is refused; of a label (model, family), of the
        // other model column, or of a graph's own settings in a table of transformers, warned of as in any table
        // (a runs table's family is no label: the fit holds its runs out by it)
        boolean transformers = columns.contains("transformer");
        Map<String, String> refused = new java.util.LinkedHashMap<>(near);
        refused.values().removeIf(k -> LABELS.contains(k) && !(measured && k.equals(FAMILY))
                || transformers && GRAPH_ONLY.contains(k));
        if (measured) {
            refuseNearMisses(source, refused, refused.containsValue(FAMILY) && refused.size() == 1
                    ? "read without it no run would name its family (the fit holds runs out by it)"
                    : "read without it each would be fitted as another job (at the column's default)");
        }
        // another framework's name for a count or degree the table lacks (data_parallel, tp, gbs) is that column
        // without a doubt: read as absent, every row would be predicted at its default (8 replicas as 1, a step
        // about 9 times too slow), so it is refused, but where another column of the table fixes the same
        // quantity (gpus the replicas, micro_batches the global batch: warned of, as a look-alike is); a look-alike
        // (micro_batch, Seq) may be a label of the table's own
        Map<String, String> aliased = new java.util.LinkedHashMap<>(near);
        aliased.entrySet().removeIf(e -> !e.getValue().equals(ALIASES.get(e.getKey().trim().toLowerCase(Locale.ROOT)))
                || KINDS.get(e.getValue()) != ColumnKind.NUMBER || e.getValue().equals("seq")
                || SAME_QUANTITY.containsKey(e.getValue()) && columns.contains(SAME_QUANTITY.get(e.getValue())));
        if (!measured && !aliased.isEmpty()) {
            Map.Entry<String, String> first = aliased.entrySet().iterator().next();
            throw InvalidInputException.inSource(source, "column '" + InvalidInputException.printable(first.getKey(),
                    40) + "' is another framework's name for '" + first.getValue() + "', which scaledl reads by that "
                    + "name: read without it every row would be predicted at its default; rename it " + first.getValue()
                    + andTheOthers(aliased));
        }
        near.forEach((c, k) -> LOG.warn("{}", nearMissWarning(source, c, k)));
        // another framework's setting whose values are not the column's (use_distributed_optimizer true for
        // zero_stage 1): refused in a runs table, warned of in another, where the table lacks the column itself
        Map<String, Setting> settings = otherSettings(columns);
        if (!settings.isEmpty()) {
            Map.Entry<String, Setting> first = settings.entrySet().iterator().next();
            String what = "column '" + InvalidInputException.printable(first.getKey(), 40) + "' is another "
                    + "framework's setting, which scaledl reads as " + first.getValue().described();
            String others = settings.size() > 1 ? " (and " + String.join(", ", settings.entrySet().stream().skip(1)
                    .map(e -> "'" + InvalidInputException.printable(e.getKey(), 40) + "' as " + e.getValue()
                            .column()).toList()) + ")" : "";
            if (measured) {
                throw InvalidInputException.inSource(source, what + ": a runs table's rows are jobs that ran, and "
                        + "read without it each would be fitted at that column's default; state it so" + others);
            }
            LOG.warn("{}: {}: it is carried through, and the rows are read at that column's default (or its "
                    + "option's); state it so{}", source, what, others);
        }
    }

    /**
     * Another framework's setting: the candidate column that states it, and how ({@code true: 1}), empty where the
     * values are the column's own.
     */
    private record Setting(String column, String how) {
        /** The column with how, as a message says it: {@code zero_stage (use_distributed_optimizer true: 1)}. */
        String described() {
            return how.isEmpty() ? column : column + " (" + how + ")";
        }
    }

    /** Each setting of {@code rows} (its column, how, then the settings' names) with its {@link Setting}. */
    private static Map<String, Setting> settingsTable(String[][] rows) {
        Map<String, Setting> out = new HashMap<>();
        for (String[] row : rows) {
            if (!COLUMNS.contains(row[0])) {
                throw new IllegalStateException(row[0] + " is no candidate column");
            }
            for (int i = 2; i < row.length; i++) {
                out.put(row[i], new Setting(row[0], row[1]));
            }
        }
        return Map.copyOf(out);
    }

    /**
     * The columns of {@code columns} that are another framework's setting ({@link #SETTINGS}) a table without the
     * column stating it (any case, blanks around), each with that column and how it states it.
     */
    private static Map<String, Setting> otherSettings(List<String> columns) {
        Map<String, Setting> out = new java.util.LinkedHashMap<>();
        for (String c : columns) {
            Setting setting = COLUMNS.contains(c) ? null : SETTINGS.get(c.trim().toLowerCase(Locale.ROOT));
            // (the replicas fix the GPUs too: nodes beside them are a label)
            if (setting != null && !columns.contains(setting.column()) && !(SAME_QUANTITY.containsKey(
                    setting.column()) && columns.contains(SAME_QUANTITY.get(setting.column())))) {
                out.put(c, setting);
            }
        }
        return out;
    }

    /** Columns another column fixes the same quantity of: the replicas by the GPUs, the global batch by its parts. */
    private static final Map<String, String> SAME_QUANTITY = Map.of("world_size", "gpus", "gpus", "world_size",
            "global_batch", "micro_batches", "micro_batches", "global_batch");

    /** The label a runs table's fit holds its runs out by (a family of models). */
    private static final String FAMILY = "family";

    /**
     * Refuses a runs table (its rows jobs that ran) with a column that looks like one scaledl reads misspelt,
     * naming the first and the others: {@code misspelt} maps each to the column meant; {@code consequence} says what
     * reading the table without it would do. Nothing where the map is empty.
     *
     * @throws InvalidInputException naming the table, the column and the one meant
     */
    static void refuseNearMisses(String source, Map<String, String> misspelt, String consequence) {
        if (misspelt.isEmpty()) {
            return;
        }
        Map.Entry<String, String> first = misspelt.entrySet().iterator().next();
        throw InvalidInputException.inSource(source, "column '" + InvalidInputException.printable(first.getKey(), 40)
                + "' is not one scaledl reads (did you mean '" + first.getValue() + "'?): a runs table's rows are jobs "
                + "that ran, and " + consequence + "; rename it" + andTheOthers(misspelt));
    }

    /** The renames after a refusal's first: {@code " (and 'tp' -> 'tensor', ...)"}, or nothing where it is alone. */
    private static String andTheOthers(Map<String, String> renames) {
        return renames.size() > 1 ? " (and " + String.join(", ", renames.keySet().stream().skip(1).map(c -> "'"
                + InvalidInputException.printable(c, 40) + "' -> '" + renames.get(c) + "'").toList()) + ")" : "";
    }

    /**
     * Opens a candidate table to read in chunks of rows ({@link Chunks#next}), for tables too large to hold at once:
     * the chunks' workloads are those {@link #read} gives, in order (tags {@code row} count from the table's first
     * row), each graph file imported and each device resolved once per table.
     *
     * @param defaults the value of a column for rows where it is absent or blank (a command line's options: say
     *                 {@code precision -> fp16}); parsed and checked as a cell is
     *
     * @throws InvalidInputException naming the file for an unreadable table or a missing column; each chunk names
     *         the file and line of a bad row
     */
    public static Chunks open(Path csv, Function<Path, ModelGraph> importer,
            Function<String, Optional<Device>> devices, Map<String, String> defaults) {
        return open(csv, importer, devices, defaults, false);
    }

    /** {@link #open(Path, Function, Function, Map)}; {@code measured}: a job runs table, its near misses refused. */
    static Chunks open(Path csv, Function<Path, ModelGraph> importer,
            Function<String, Optional<Device>> devices, Map<String, String> defaults, boolean measured) {
        java.util.Objects.requireNonNull(csv, "csv");
        java.util.Objects.requireNonNull(importer, "importer");
        java.util.Objects.requireNonNull(devices, "devices");
        java.util.Objects.requireNonNull(defaults, "defaults");
        defaults.forEach((k, v) -> java.util.Objects.requireNonNull(v, () -> "defaults: a null value for " + k));
        if (defaults.containsKey("world_size") && defaults.containsKey("gpus")) {
            throw new IllegalArgumentException("defaults of both world_size and gpus: give one (world_size counts "
                    + "data-parallel replicas, gpus every GPU)");
        }
        CsvTable.Reader in = CsvTable.open(csv);
        try {
            checkColumns(csv.toString(), in.columns(), measured);
        } catch (InvalidInputException e) {
            in.close();
            throw e;
        }
        return new Chunks(in, new Rows(csv.toAbsolutePath().getParent(), importer, devices, defaults));
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

        /**
         * The next rows, at most {@code maxRows}, each read on its own: a row that cannot be read (a bad cell, a
         * configuration or graph that cannot be built, a device not known) keeps its place with why, and the rest are
         * read as {@link #next} reads them; none at the end of the table.
         *
         * @throws InvalidInputException for a table that cannot be read on: a line of the file itself malformed (a
         *         field too many or too few, text that is not UTF-8) stops the reading at that line
         */
        public EachRow nextEach(int maxRows) {
            return rows.readEach(in.next(maxRows));
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

    /**
     * What a candidate column holds, as the reader reads it: a table written from candidates (a JSON line of
     * {@code predict --out x.jsonl}) types its cells by it.
     */
    public enum ColumnKind {
        /** A count or a quantity: {@code seq}, {@code batch}, {@code tensor}, {@code inter_node_gbps}, ... */
        NUMBER,
        /**
         * {@code true} or {@code false} ({@code 1}/{@code 0}, {@code yes}/{@code no} read as those):
         * {@code sequence_parallel}, {@code uneven_pipeline}, ...
         */
        BOOLEAN,
        /** A path, a name or one of a column's words: {@code transformer}, {@code device}, {@code precision}, ... */
        TEXT
    }

    /** Every column the reader reads and what it holds (a table's other columns are carried through). */
    private static final Map<String, ColumnKind> KINDS = columnKinds();

    private static Map<String, ColumnKind> columnKinds() {
        Map<String, ColumnKind> m = new java.util.TreeMap<>();
        for (String c : List.of("seq", "batch", "micro_batches", "global_batch", "world_size", "gpus", "tensor",
                "pipeline", "context", "virtual_stages", "expert", "expert_tensor", "zero_stage", "threads", "recompute_layers",
                "offload_layers", "lora_rank", "document_tokens", "expert_imbalance", "gpus_per_node", "nvlink_domain",
                "inter_node_gbps", "resolution")) {
            m.put(c, ColumnKind.NUMBER);
        }
        for (String c : List.of("sequence_parallel", "uneven_pipeline", "moe_a2a_overlap", "fp8_param_gather")) {
            m.put(c, ColumnKind.BOOLEAN);
        }
        for (String c : List.of("graph", "transformer", "phase", "device", "precision", "recompute",
                "recompute_modules", "grad_dtype", "grad_reduce", "moe_dispatcher", "cuda_graphs", "memory_format",
                "model", "family")) {
            m.put(c, ColumnKind.TEXT);
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    /** Every column the reader reads (a table's other columns are carried through). */
    static final java.util.SortedSet<String> COLUMNS = java.util.Collections.unmodifiableSortedSet(
            new java.util.TreeSet<>(KINDS.keySet()));

    /**
     * What the reader reads {@code column} as; empty for a column it does not read (carried through as text).
     * {@code resolution} holds a number (a graph's input size), which a row carries as a label.
     *
     * @param column a column name as a table's header spells it (its canonical name, not an alias)
     */
    public static Optional<ColumnKind> kind(String column) {
        return Optional.ofNullable(KINDS.get(java.util.Objects.requireNonNull(column, "column")));
    }

    /**
     * The other names the training frameworks give candidate columns (Megatron's and NeMo's arguments, DeepSpeed's,
     * their abbreviations), each row a column and then its other names: a table written with them would otherwise be
     * read with every such column at its default. A name that means different things in different frameworks
     * ({@code sp}: Megatron's sequence-parallel flag, DeepSpeed-Ulysses' degree) is left out.
     */
    private static final Map<String, String> ALIASES = aliasTable(new String[][] {
        {"tensor", "tp", "tp_size", "tensor_parallel", "tensor_parallel_size", "tensor_model_parallel_size"},
        {"pipeline", "pp", "pp_size", "pipeline_parallel", "pipeline_parallel_size", "pipeline_model_parallel_size"},
        {"world_size", "dp", "dp_size", "data_parallel", "data_parallel_size"},
        {"context", "cp", "cp_size", "context_parallel", "context_parallel_size"},
        {"expert", "ep", "ep_size", "expert_parallel", "expert_model_parallel_size"},
        {"expert_tensor", "etp", "expert_tensor_parallel_size"},
        {"virtual_stages", "vp", "vpp", "virtual_pipeline_model_parallel_size"},
        {"batch", "mbs", "micro_batch_size", "train_micro_batch_size_per_gpu"},
        {"micro_batches", "gradient_accumulation_steps", "gas", "num_micro_batches", "num_microbatches"},
        {"global_batch", "gbs", "global_batch_size", "train_batch_size"},
        {"gpus", "num_gpus", "n_gpus", "ngpus", "gpu_count", "total_gpus"},
        {"seq", "seq_len", "seq_length", "sequence_length", "max_seq_len"},
        {"device", "gpu", "gpu_type", "gpu_name"},
        {"precision", "dtype"},
        {"zero_stage", "zero"}});

    /**
     * Other frameworks' settings (Megatron's and NeMo's arguments) that a candidate column states in other values,
     * each with that column and how: a table written with them would be read with every such setting at its
     * default (ZeRO 0 for Megatron's distributed optimizer, the reduction overlapped where the log's is not).
     */
    private static final Map<String, Setting> SETTINGS = settingsTable(new String[][] {
        {"zero_stage", "use_distributed_optimizer true: 1", "use_distributed_optimizer"},
        {"grad_reduce", "overlap_grad_reduce false: after-backward", "overlap_grad_reduce"},
        {"grad_reduce", "overlap_param_gather false, with overlap_grad_reduce: gather-after-step",
            "overlap_param_gather"},
        {"grad_dtype", "grad_reduce_in_fp32 true: fp32, false: bf16", "grad_reduce_in_fp32"},
        {"recompute", "selective or full", "recompute_granularity", "recompute_method",
            "activations_checkpoint_granularity", "activations_checkpoint_method"},
        {"recompute_layers", "full recomputation's first N layers of each chunk", "recompute_num_layers",
            "activations_checkpoint_num_layers"},
        {"lora_rank", "the adapters' rank; 0: none", "lora_dim", "lora_r", "peft_scheme", "peft"},
        {"gpus", "every GPU, with gpus_per_node", "num_nodes", "nodes", "nnodes"},
        {"precision", "bf16, fp8, fp8-block, mxfp8, nvfp4...", "fp8", "fp8_recipe", "fp8_format", "params_dtype",
            "bf16", "fp16", "mixed_precision"},
        {"moe_dispatcher", "alltoall, allgather, deepep, hybridep", "moe_token_dispatcher_type", "moe_enable_deepep",
            "moe_flex_dispatcher_backend"},
        {"moe_a2a_overlap", "", "overlap_moe_expert_parallel_comm"},
        {"cuda_graphs", "none, layers, iteration", "cuda_graph_impl", "cuda_graph_scope", "enable_cuda_graph",
            "external_cuda_graph"},
        {"offload_layers", "", "cpu_offloading_num_layers"},
        {"fp8_param_gather", "", "fp8_param"}});

    /** A table's true/false cell as the reader reads it ({@code 1}/{@code 0}, {@code yes}/{@code no}); empty else. */
    public static Optional<Boolean> parseFlag(String cell) {
        return switch (cell.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes" -> Optional.of(true);
            case "false", "0", "no" -> Optional.of(false);
            default -> Optional.empty();
        };
    }

    /**
     * The column a table's header names, as the reader takes it: itself where it is one, else the column another
     * framework's name for it names ({@code tp}: {@code tensor}), any case and blanks around; empty for another
     * column (a label).
     */
    public static Optional<String> canonical(String header) {
        String key = header.trim().toLowerCase(Locale.ROOT);
        return COLUMNS.contains(key) ? Optional.of(key) : Optional.ofNullable(ALIASES.get(key));
    }

    /** Each other name of {@code rows} (a column, then its other names) with its column. */
    private static Map<String, String> aliasTable(String[][] rows) {
        Map<String, String> out = new HashMap<>();
        for (String[] row : rows) {
            if (!COLUMNS.contains(row[0])) {
                throw new IllegalStateException(row[0] + " is no candidate column");
            }
            for (int i = 1; i < row.length; i++) {
                out.put(row[i], row[0]);
            }
        }
        return Map.copyOf(out);
    }

    /**
     * The columns of {@code columns} that look like a candidate column misspelt ({@code micro_batch} for
     * {@code micro_batches}, {@code Seq} for {@code seq}) or that are another framework's name for one ({@code tp}
     * for {@code tensor}, {@code num_gpus} for {@code gpus}, a global batch for {@code micro_batches}), each with
     * that column: carried through as other columns are, they would leave every row at that column's default. A
     * column whose look-alike the table has too is a column of its own ({@code bench} beside {@code batch}).
     */
    public static Map<String, String> nearMisses(List<String> columns) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        for (String c : columns) {
            if (COLUMNS.contains(c)) {
                continue;
            }
            String key = c.trim().toLowerCase(Locale.ROOT);
            Optional.ofNullable(ALIASES.get(key)).or(() -> org.scaledl.Suggestions.misspelt(c, COLUMNS))
                    .filter(k -> !columns.contains(k)).ifPresent(k -> out.put(c, k));
        }
        return out;
    }

    /**
     * A row whose column of another framework's name for a count or degree ({@code tp}) sits beside the column it
     * names ({@code tensor}) says the same in both ({@link #sameValue}): the row is read as the named column says, so
     * a disagreement, one of them a slip, is refused at its line.
     *
     * @throws InvalidInputException naming the table, line, both columns and their values
     */
    static void aliasesAgree(CsvTable t, int r) {
        for (String c : t.columns()) {
            String named = COLUMNS.contains(c) ? null : canonical(c).orElse(null);
            // a count or degree only: another framework's sequence, device or dtype column may name something else
            // (the model's longest context, a GPU's index, the weights' type beside an FP8 recipe)
            if (named == null || !t.has(named) || KINDS.get(named) != ColumnKind.NUMBER || named.equals("seq")) {
                continue;
            }
            String alias = t.opt(r, c).orElse("");
            String own = t.opt(r, named).orElse("");
            if (!alias.isEmpty() && !sameValue(named, alias, own)) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "column '" + InvalidInputException
                        .printable(c, 40) + "' (another name for " + named + ") says '" + InvalidInputException
                        .printable(alias, 40) + "' where " + named + (own.isEmpty() ? " is blank (its default)"
                        : " says '" + InvalidInputException.printable(own, 40) + "'") + ": the row is read as "
                        + named + " says, so one of them is a slip (leave one out)");
            }
        }
    }

    /**
     * Whether an alias's cell {@code a} says what the named column's {@code b} does: numbers by value ({@code 02} is
     * {@code 2}); beside a blank, a degree's default ({@code cp} 1 beside a blank {@code context}); another tool's
     * {@code None} says nothing.
     */
    private static boolean sameValue(String column, String a, String b) {
        if (a.strip().equalsIgnoreCase("none") || a.strip().equalsIgnoreCase("null")) {
            // another tool's "not set"
            return true;
        }
        try {
            double x = CsvTable.parseNumber(a);
            // a blank column takes its default: a degree's 1 (ZeRO's stage 0) is no contradiction
            return b.isEmpty() ? DEGREES.contains(column) && x == (column.equals("zero_stage") ? 0 : 1)
                    : x == CsvTable.parseNumber(b);
        } catch (NumberFormatException e) {
            // not a number: the named column's own reading refuses a bad value of its own
            return !b.isEmpty();
        }
    }

    /** The columns whose blank is the degree 1 (ZeRO's stage 0): none of that parallelism. */
    private static final java.util.Set<String> DEGREES = java.util.Set.of("tensor", "pipeline", "context", "expert",
            "expert_tensor", "virtual_stages", "zero_stage");

    /** The warning a near miss ({@link #nearMisses}) of a table gets. */
    static String nearMissWarning(String source, String column, String meant) {
        String shown = InvalidInputException.printable(column, 40);
        String read = "it is carried through as it is, and the rows are read as if it were absent";
        return source + ": column '" + shown + "' is not one scaledl reads (did you mean '" + meant + "'?); " + read;
    }

    /**
     * Rows read each on its own ({@link Chunks#nextEach}): for every row of {@code table}, in order, its workload or
     * why it could not be read (the file, line and reason), exactly one of the two present.
     *
     * @param table     the rows
     * @param workloads each row's workload, empty where it could not be read
     * @param errors    why a row could not be read, empty where it was
     */
    public record EachRow(CsvTable table, List<Optional<Workload>> workloads, List<Optional<String>> errors) {
        /** Copies; checks that each row has exactly one of the two. */
        public EachRow {
            workloads = List.copyOf(workloads);
            errors = List.copyOf(errors);
            if (workloads.size() != table.size() || errors.size() != table.size()) {
                throw new IllegalArgumentException("one workload or error per row");
            }
            for (int i = 0; i < workloads.size(); i++) {
                if (workloads.get(i).isPresent() == errors.get(i).isPresent()) {
                    throw new IllegalArgumentException("row " + i + " needs a workload or an error, not both");
                }
            }
        }
    }

    /**
     * One transformer job's workload from a runs table's cells ({@code transformer} left out: the model is given
     * built), read as a table's row is: a training log's run ({@link TrainingLogs.Run#sample}) maps to a workload
     * the way the row {@code runs --from-log} writes for it is read, one mapping.
     *
     * @param source names the job in errors (a log), at {@code line}
     * @throws InvalidInputException naming {@code source} and {@code line}, for settings the model or the device
     *         refuse
     */
    static Workload row(Map<String, String> cells, TransformerSpec model, Device device, String source, long line) {
        Map<String, String> all = new java.util.LinkedHashMap<>(cells);
        // (the model is the one the rows' reader holds for this cell, read from no file)
        String key = "model";
        all.put("transformer", key);
        CsvTable t = CsvTable.parse(source, List.of(all.keySet().stream().map(CsvTable::quote)
                .collect(java.util.stream.Collectors.joining(",")), all.values().stream().map(CsvTable::quote)
                .collect(java.util.stream.Collectors.joining(","))));
        Rows rows = new Rows(Path.of(""), p -> {
            throw new IllegalStateException("a transformer job has no graph to import");
        }, name -> Optional.of(device), Map.of());
        rows.specs.put(key, model);
        rows.untagged = true;
        try {
            return rows.workload(t, 0);
        } catch (InvalidInputException e) {
            throw InvalidInputException.atLine(source, line, e.detail());
        }
    }

    /**
     * The caller's defaults a row takes only where it can take them, each with whether a row as read took it: FP8
     * weights as the parameters (training, an FP8 recipe, ZeRO 1 or 2), the experts' all-to-all overlap and their
     * dispatcher (expert parallelism), a memory format (an imported graph's convolutions).
     */
    private static final Map<String, java.util.function.Predicate<Workload>> WHERE_RUN;
    /** Why a default of {@link #WHERE_RUN} applies to no row, in words. */
    private static final Map<String, String> WHY_NOT_TAKEN = Map.of(
            "fp8_param_gather", "FP8 weights as the parameters need training in fp8, fp8-block or mxfp8 with the "
                    + "distributed optimizer (zero_stage 1 or 2; --zero-stage gives a default)",
            "grad_reduce", "the weights' gather after the optimizer step is the distributed optimizer's, in training "
                    + "(zero_stage 1 or 2; --zero-stage gives a default)",
            "moe_a2a_overlap", "the experts' all-to-all overlap needs expert parallelism (an expert degree above 1) "
                    + "where Megatron core runs it",
            "moe_dispatcher", "the token dispatcher is expert parallelism's (an expert degree above 1)",
            "memory_format", "a memory format lays out an imported graph's convolutions");
    /**
     * The defaults of {@link #WHERE_RUN} that a row may not take (a flag's default of false, a gradient schedule but
     * the gather after the step, is taken by every row).
     */
    private static final Map<String, java.util.function.Predicate<String>> COUNTED = Map.of(
            "fp8_param_gather", v -> parseFlag(v).orElse(false),
            "moe_a2a_overlap", v -> parseFlag(v).orElse(false),
            "grad_reduce", v -> v.trim().toLowerCase(Locale.ROOT).replace('_', '-').equals(
                    org.scaledl.workload.GradReduce.GATHER_AFTER_STEP.label()),
            "moe_dispatcher", v -> true,
            "memory_format", v -> true);

    static {
        Map<String, java.util.function.Predicate<Workload>> m = new java.util.LinkedHashMap<>();
        m.put("fp8_param_gather", Workload::fp8ParamGather);
        m.put("grad_reduce", w -> w.gradReduce() == org.scaledl.workload.GradReduce.GATHER_AFTER_STEP);
        m.put("moe_a2a_overlap", Workload::expertCommOverlap);
        m.put("moe_dispatcher", w -> w.parallelism().expert() > 1);
        m.put("memory_format", w -> w.graph().transformer().isEmpty());
        WHERE_RUN = java.util.Collections.unmodifiableMap(m);
    }

    /** Reads rows into workloads: the one place that knows the candidate columns. */
    private static final class Rows {
        private final Path dir;
        private final Function<Path, ModelGraph> importer;
        private final Function<String, Optional<Device>> devices;
        private final Map<String, String> defaults;
        private final Map<String, ModelGraph> graphs = new HashMap<>();
        private final Map<String, TransformerSpec> specs = new HashMap<>();
        private final Map<String, Optional<Device>> deviceCache = new HashMap<>();
        /** Rows read before this table (chunk). */
        private int offset;
        /** No table's tags (its file cell and row): a job given as cells, not read from a table ({@link #row}). */
        private boolean untagged;
        /** Whether a GPU row without a precision was said (once a table). */
        private boolean fp32Said;
        /**
         * The caller's defaults that a row takes only where it can ({@link #WHERE_RUN}): the rows without their own
         * cell, and how many of them took it.
         */
        private final Map<String, int[]> takenBy = new java.util.LinkedHashMap<>();
        /** Whether the defaults no row took were said (once, at the table's end). */
        private boolean untakenSaid;

        Rows(Path dir, Function<Path, ModelGraph> importer, Function<String, Optional<Device>> devices,
                Map<String, String> defaults) {
            this.dir = dir;
            this.importer = importer;
            this.devices = devices;
            this.defaults = Map.copyOf(defaults);
        }

        Candidates read(CsvTable t) {
            List<Workload> ws = new ArrayList<>(t.size());
            for (int r = 0; r < t.size(); r++) {
                ws.add(taken(t, r, workload(t, r)));
            }
            offset += t.size();
            sayUntaken(t);
            return new Candidates(t, ws);
        }

        /**
         * Counts the defaults a row took where it can take them ({@link #WHERE_RUN}), for
         * {@link #sayUntaken}: the row as read.
         */
        private Workload taken(CsvTable t, int r, Workload w) {
            for (Map.Entry<String, java.util.function.Predicate<Workload>> e : WHERE_RUN.entrySet()) {
                String column = e.getKey();
                if (t.opt(r, column).isEmpty() && value(t, r, column).filter(COUNTED.get(column)).isPresent()) {
                    int[] n = takenBy.computeIfAbsent(column, k -> new int[2]);
                    n[0]++;
                    n[1] += e.getValue().test(w) ? 1 : 0;
                }
            }
            return w;
        }

        /**
         * At the table's end (its chunks read, the last of no rows: the caller's defaults come with a table read in
         * chunks), the defaults that apply where a row can take them and that no row took, said once: an option that
         * changed nothing (FP8 weights as the parameters over rows without the distributed optimizer, an expert
         * setting over dense rows) was silent.
         */
        private void sayUntaken(CsvTable t) {
            if (untakenSaid || t.size() > 0) {
                return;
            }
            untakenSaid = true;
            takenBy.forEach((column, n) -> {
                if (n[0] > 0 && n[1] == 0) {
                    LOG.warn("{}: the default {} {} applies to none of the {} row{} without a cell of their own: {}",
                            t.source(), column, defaults.get(column), n[0], n[0] == 1 ? "" : "s",
                            WHY_NOT_TAKEN.get(column));
                }
            });
        }

        EachRow readEach(CsvTable t) {
            List<Optional<Workload>> ws = new ArrayList<>(t.size());
            List<Optional<String>> errors = new ArrayList<>(t.size());
            for (int r = 0; r < t.size(); r++) {
                try {
                    ws.add(Optional.of(taken(t, r, workload(t, r))));
                    errors.add(Optional.empty());
                } catch (InvalidInputException | IllegalArgumentException e) {
                    // a refusal at the row's own line as it is; any other (a graph's own error names the graph file,
                    // a device's refusal no file) with the row's line added
                    boolean atRow = e instanceof InvalidInputException x && x.line() > 0
                            && x.source().filter(t.source()::equals).isPresent();
                    ws.add(Optional.empty());
                    errors.add(Optional.of(atRow ? e.getMessage()
                            : InvalidInputException.atLine(t.source(), t.line(r), e.getMessage()).getMessage()));
                }
            }
            offset += t.size();
            sayUntaken(t);
            return new EachRow(t, ws, errors);
        }

        /**
         * Whether an expert-parallel setting applies to a row: its own value as given (refused where it cannot
         * apply), the caller's default only on a row with expert parallelism, as a table may mix dense and
         * expert-parallel jobs.
         */
        private boolean forExperts(CsvTable t, int r, String column) {
            return t.opt(r, column).isPresent() || value(t, r, column).isPresent()
                    && positive(t, r, "expert").orElse(1) > 1;
        }

        /** A row's value of a column: the cell, else the caller's default, else empty. */
        private Optional<String> value(CsvTable t, int r, String column) {
            return t.opt(r, column).or(() -> Optional.ofNullable(defaults.get(column)).filter(v -> !v.isEmpty()));
        }

        private Workload workload(CsvTable t, int r) {
            int line = t.line(r);
            aliasesAgree(t, r);
            Optional<String> graphPath = t.opt(r, "graph");
            Optional<String> config = t.opt(r, "transformer");
            if (graphPath.isPresent() == config.isPresent()) {
                throw InvalidInputException.atLine(t.source(), line, graphPath.isPresent()
                        ? "give graph or transformer, not both" : "no graph (ONNX file) or transformer (config.json)");
            }
            ModelGraph g;
            String what;
            if (graphPath.isPresent()) {
                what = graphPath.get();
                g = graphs.computeIfAbsent(what, k -> importer.apply(existing(t, line, k, "graph")));
            } else {
                long seq = positive(t, r, "seq").orElseThrow(() -> InvalidInputException.atLine(t.source(), line,
                        "a transformer row needs seq (the sequence length)"));
                what = config.get();
                String key = what + "\u0000" + seq;
                TransformerSpec spec = specs.computeIfAbsent(what, k -> {
                    Path file = existing(t, line, k, "transformer");
                    try {
                        return HuggingFaceConfig.read(file);
                    } catch (InvalidInputException e) {
                        throw InvalidInputException.atLine(t.source(), line, e.getMessage());
                    }
                });
                try {
                    g = graphs.computeIfAbsent(key, k -> spec.graph(seq));
                } catch (IllegalArgumentException e) {
                    throw InvalidInputException.atLine(t.source(), line, e.getMessage());
                }
            }
            Phase ph;
            try {
                ph = Phase.parse(value(t, r, "phase").orElse("train"));
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(t.source(), line, e.detail());
            }
            int micro = bounded(t, r, "batch", 1, DatasetReader.MAX_BATCH).orElseThrow(() -> InvalidInputException
                    .atLine(t.source(), line,
                    "missing batch"));
            int microBatches = microBatches(t, r, micro);
            if ((long) micro * microBatches > Integer.MAX_VALUE) {
                throw InvalidInputException.atLine(t.source(), line, "batch x micro_batches is too large: " + micro
                        + " x " + microBatches);
            }
            Workload.Builder b = Workload.builder(g).batch(micro * microBatches)
                    .threads(positive(t, r, "threads").orElse(1)).phase(ph);
            if (!untagged) {
                b.tag(graphPath.isPresent() ? "graph" : "transformer", what).tag("row", Integer.toString(offset + r));
            }
            // a caller's default for the recomputation and the ZeRO stage applies to transformer rows only (an
            // imported graph's execution models neither, and refuses them; a table may mix both): a graph row's own
            // cell is taken as given
            java.util.function.Predicate<String> applies = c -> graphPath.isEmpty() || t.opt(r, c).isPresent();
            try {
                int zero = applies.test("zero_stage") ? bounded(t, r, "zero_stage", 0, 3).orElse(0) : 0;
                int tensor = positive(t, r, "tensor").orElse(1);
                int pipeline = positive(t, r, "pipeline").orElse(1);
                int context = positive(t, r, "context").orElse(1);
                int expert = positive(t, r, "expert").orElse(1);
                b.parallelism(new Parallelism(replicas(t, r, tensor, pipeline, context), tensor, pipeline,
                        microBatches, flag(t, r, "sequence_parallel"), zero, positive(t, r, "virtual_stages")
                        .orElse(1), context, expert, positive(t, r, "expert_tensor")
                        .orElse(Parallelism.defaultExpertTensor(tensor, expert, g))));
                // (a row without one is the table's default, FP32, said once a table below: given, not assumed)
                b.precision(value(t, r, "precision").map(Precision::parse).orElse(Precision.FP32));
                Recompute rc = applies.test("recompute") ? value(t, r, "recompute").map(Recompute::parse).orElse(null)
                        : null;
                Optional<Integer> recomputeLayers = applies.test("recompute_layers")
                        ? bounded(t, r, "recompute_layers", 0, 1 << 20) : Optional.empty();
                if (recomputeLayers.isPresent() && recomputeLayers.get() > 0) {
                    if (rc != null && rc != Recompute.FULL && rc != Recompute.AUTO) {
                        throw new IllegalArgumentException("recompute_layers " + recomputeLayers.get() + " needs "
                                + "recompute full (or empty), not " + rc.label());
                    }
                    rc = Recompute.FULL;
                    b.recomputeLayers(recomputeLayers.get());
                }
                Optional<java.util.Set<RecomputeModule>> modules = value(t, r, "recompute_modules")
                        .map(v -> column("recompute_modules", v, RecomputeModule::parseList));
                if (modules.isPresent()) {
                    if (recomputeLayers.isPresent() && recomputeLayers.get() > 0) {
                        throw new IllegalArgumentException("recompute_layers " + recomputeLayers.get() + " (full "
                                + "recomputation of the first layers) and recompute_modules "
                                + RecomputeModule.label(modules.get()) + " (what selective recomputation recomputes) "
                                + "cannot both be given");
                    }
                    if (rc != null && rc != Recompute.SELECTIVE && rc != Recompute.AUTO) {
                        throw new IllegalArgumentException("recompute_modules " + RecomputeModule.label(modules.get())
                                + " needs recompute selective (or auto, or empty), not " + rc.label());
                    }
                    rc = Recompute.SELECTIVE;
                    b.recomputeModules(modules.get());
                }
                if (rc != null) {
                    b.recompute(rc);
                }
                bounded(t, r, "offload_layers", 0, 1 << 20).ifPresent(b::offloadLayers);
                bounded(t, r, "lora_rank", 0, 4096).ifPresent(b::lora);
                b.unevenPipeline(flag(t, r, "uneven_pipeline"));
                bounded(t, r, "document_tokens", 0, 1 << 30).ifPresent(b::documentTokens);
                value(t, r, "grad_dtype").map(v -> column("grad_dtype", v, Workload::parseGradDtype))
                        .ifPresent(b::sixteenBitGradients);
                Optional<org.scaledl.workload.GradReduce> reduce = value(t, r, "grad_reduce").map(v -> column(
                        "grad_reduce", v, org.scaledl.workload.GradReduce::parse));
                // the caller's gather after the step applies to the rows of the distributed optimizer that train (as
                // --fp8-param-gather's default); a row's own cell is taken as given
                if (reduce.isPresent() && (t.opt(r, "grad_reduce").isPresent()
                        || reduce.get() != org.scaledl.workload.GradReduce.GATHER_AFTER_STEP
                        || Workload.gradReduceRefusal(ph, zero, reduce.get()).isEmpty())) {
                    b.gradReduce(reduce.get());
                }
                if (t.opt(r, "fp8_param_gather").isPresent()) {
                    b.fp8ParamGather(flag(t, r, "fp8_param_gather"));
                } else if (graphPath.isEmpty()) {
                    // the caller's default: on the rows that can run it, as the all-to-all overlap's applies; a row's
                    // own cell as given
                    b.fp8ParamGatherWhereRun(flag(t, r, "fp8_param_gather"));
                }
                // (stated where it applies: an empty cell or no default leaves it to the job's default)
                if (t.opt(r, "moe_a2a_overlap").isPresent()) {
                    b.expertCommOverlap(flag(t, r, "moe_a2a_overlap"));
                } else if (forExperts(t, r, "moe_a2a_overlap")) {
                    // the caller's default: where Megatron core runs it and it hides something, as layouts applies
                    // it (a row's own cell is taken as given, and refused where Megatron would not run it)
                    b.expertCommOverlapWhereRun(flag(t, r, "moe_a2a_overlap"));
                }
                if (forExperts(t, r, "moe_dispatcher")) {
                    value(t, r, "moe_dispatcher").map(v -> column("moe_dispatcher", v, MoeDispatcher::parse))
                            .ifPresent(b::moeDispatcher);
                }
                // as the all-to-all overlap: a row's own value as given, the caller's default for transformer rows
                // only (an imported graph refuses the setting, and a table may mix both)
                if (t.opt(r, "cuda_graphs").isPresent() || graphPath.isEmpty()) {
                    value(t, r, "cuda_graphs").map(v -> column("cuda_graphs", v, CudaGraphs::parse))
                            .ifPresent(b::cudaGraphs);
                }
                // an imported graph's layout; a transformer row has no convolutions to lay out
                if (t.opt(r, "memory_format").isPresent() || graphPath.isPresent()) {
                    Optional<MemoryFormat> format = value(t, r, "memory_format")
                            .map(v -> column("memory_format", v, MemoryFormat::parse));
                    if (format.isPresent() && graphPath.isEmpty()) {
                        throw new IllegalArgumentException("memory_format lays out an imported graph's convolutions; "
                                + "a transformer built from its configuration has none");
                    }
                    format.ifPresent(b::memoryFormat);
                }
                Optional<String> imbalance = value(t, r, "expert_imbalance");
                if (imbalance.isPresent()) {
                    double x = parseDouble(imbalance.get());
                    if (!(x >= 1 && x <= 64)) {
                        throw new IllegalArgumentException("expert_imbalance must be a number in [1, 64] (the busiest "
                                + "expert rank's tokens over its share), got '" + imbalance.get() + "'");
                    }
                    b.expertImbalance(x);
                }
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(t.source(), line, e.detail());
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(t.source(), line, e.getMessage());
            }
            Optional<String> model = t.opt(r, "model").filter(m -> !m.isEmpty());
            model.ifPresent(m -> b.tag("model", m));
            t.opt(r, "family").filter(f -> !f.isEmpty()).or(() -> model.map(Dataset::familyOf))
                    .ifPresent(f -> b.tag("family", f));
            t.opt(r, "resolution").filter(v -> !v.isEmpty()).ifPresent(v -> b.tag("resolution", v));
            // a caller's default device applies to the rows without one, as every column's does
            String deviceName = value(t, r, "device").orElse("");
            Optional<Device> device;
            try {
                // (a resolver that answers null knows no such device, as one that answers empty)
                device = deviceCache.computeIfAbsent(deviceName, k -> java.util.Objects.requireNonNullElse(
                        devices.apply(k), Optional.<Device>empty()));
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(t.source(), line, e.getMessage());
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(t.source(), line, e.detail());
            }
            device.ifPresent(b::device);
            if (device.isPresent() && !untagged && !fp32Said && value(t, r, "precision").isEmpty()) {
                // as --precision not given is said for one job: FP32 is rarely what a GPU job runs, and a table
                // without the column had every row predicted in it without a word (once a table)
                fp32Said = true;
                LOG.warn("{}:{}: no precision (no precision cell, and no default given): this GPU row and any other "
                        + "without one are predicted in fp32 (PyTorch's default, no tensor cores); mixed-precision "
                        + "training is bf16 or fp16 (tf32, fp8, mxfp8, nvfp4: see devices): give the table a precision "
                        + "column (predict's --precision gives a default)", t.source(), line);
            }
            Optional<Integer> gpus = bounded(t, r, "gpus_per_node", 1, Topology.MAX_GPUS_PER_NODE);
            Optional<Integer> domain = bounded(t, r, "nvlink_domain", 1, Topology.MAX_DOMAIN);
            Optional<Double> network = value(t, r, "inter_node_gbps").map(v -> {
                double x = parseDouble(v);
                if (!(x >= Topology.MIN_GBPS && x <= Topology.MAX_GBPS * 8)) {
                    throw InvalidInputException.atLine(t.source(), line, "inter_node_gbps must be a number in ["
                            + Topology.MIN_GBPS + ", " + Topology.MAX_GBPS * 8 + "] (Gb/s per node, all adapters), got '"
                            + v + "'");
                }
                return x;
            });
            if (gpus.isPresent() || network.isPresent() || domain.isPresent()) {
                if (device.isEmpty()) {
                    // a device named but not read as a GPU: the table is read for a CPU model (plan or predict
                    // without a GPU model), whose rows' devices are machines
                    throw InvalidInputException.atLine(t.source(), line, "gpus_per_node, nvlink_domain and "
                            + "inter_node_gbps describe the nodes of GPUs: " + (deviceName.isBlank() ? "give the device"
                            : (t.opt(r, "device").isPresent() ? "the row's device '" : "the caller's default device '")
                            + InvalidInputException.printable(deviceName, 60) + "' is read as "
                            + "a CPU machine here (a GPU job's table needs a GPU model: --model gpu)"));
                }
                try {
                    b.topology(Topology.assumedFor(device.get()).with(gpus, network, domain));
                } catch (IllegalArgumentException e) {
                    throw InvalidInputException.atLine(t.source(), line, e.getMessage());
                }
            }
            try {
                return b.build();
            } catch (IllegalArgumentException e) {
                // settings that do not go together (16-bit gradients in FP32, LoRA in inference...)
                throw InvalidInputException.atLine(t.source(), line, e.getMessage());
            }
        }

        /**
         * The file a path cell names, relative to the table's folder and confined to it (for {@code transformer}, a
         * model's folder names its {@code config.json}, as {@link HuggingFaceConfig#read} takes it); an error at the
         * line when it leaves the folder or there is none.
         */
        private Path existing(CsvTable t, int line, String cell, String column) {
            Path file = DatasetReader.confined(dir, cell, column, "candidate table's", t.source(), line);
            if (column.equals("transformer") && !HuggingFaceConfig.configurationFile(file).equals(file)) {
                // the folder's configuration, confined as the cell is (no link out of the table's folder)
                file = DatasetReader.confined(dir, cell + "/config.json", column, "candidate table's", t.source(),
                        line);
            }
            if (!Files.isRegularFile(file)) {
                throw InvalidInputException.atLine(t.source(), line, DatasetReader.notAFile(column, file));
            }
            return file;
        }

        /**
         * A row's micro-batches a replica: its {@code micro_batches}, or its {@code global_batch} over {@code batch}
         * times the data-parallel replicas (refused where that does not divide, or where a {@code micro_batches}
         * beside it disagrees); 1 where neither is given. A row's own cell comes before a caller's default of the
         * other column.
         */
        private int microBatches(CsvTable t, int r, int batch) {
            Optional<Integer> given = paired(t, r, "micro_batches", "global_batch");
            Optional<Integer> global = paired(t, r, "global_batch", "micro_batches");
            if (global.isEmpty()) {
                return given.orElse(1);
            }
            int tensor = positive(t, r, "tensor").orElse(1);
            int pipeline = positive(t, r, "pipeline").orElse(1);
            int context = positive(t, r, "context").orElse(1);
            int replicas = replicas(t, r, tensor, pipeline, context);
            String where = t.opt(r, "global_batch").isPresent() ? "" : " (the caller's default, --global-batch)";
            String perStep = "batch " + batch + " x " + replicas + " data-parallel replica" + (replicas == 1 ? "" : "s");
            java.util.OptionalInt m = Parallelism.microBatches(global.get(), batch, replicas);
            if (m.isEmpty()) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "global_batch " + global.get() + where
                        + " is not a multiple of " + perStep + " (" + (long) batch * replicas + "): the global batch "
                        + "is batch x micro_batches x replicas");
            }
            if (given.isPresent() && given.get() != m.getAsInt()) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "global_batch " + global.get() + where
                        + " and micro_batches " + given.get() + " disagree: " + perStep + " makes it "
                        + m.getAsInt() + " micro-batches (give one of them)");
            }
            return m.getAsInt();
        }

        /**
         * A row's data-parallel replicas: its {@code world_size}, or its {@code gpus} over the GPUs of one replica
         * ({@code tensor × pipeline × context}); both where they agree. A row's own cells come before the caller's
         * defaults, so a default of one column does not contradict a row's cell of the other.
         */
        private int replicas(CsvTable t, int r, int tensor, int pipeline, int context) {
            Optional<Integer> world = paired(t, r, "world_size", "gpus");
            Optional<Integer> gpus = paired(t, r, "gpus", "world_size");
            if (gpus.isEmpty()) {
                return world.orElse(1);
            }
            java.util.OptionalInt data = Parallelism.replicas(gpus.get(), tensor, pipeline, context);
            if (data.isPresent() && (world.isEmpty() || world.get() == data.getAsInt())) {
                return data.getAsInt();
            }
            // (the messages built only for a row refused: this runs once per row of a table of millions)
            // a value from the caller's defaults, not the row, is said so (the line is only where it was applied)
            String given = "gpus " + gpus.get() + (t.opt(r, "gpus").isPresent() ? "" : " (the caller's default)");
            String replica = "tensor " + tensor + " x pipeline " + pipeline + " x context " + context + " = "
                    + (long) tensor * pipeline * context + " GPUs a data-parallel replica";
            throw InvalidInputException.atLine(t.source(), t.line(r), data.isEmpty()
                    ? given + " is not a multiple of " + replica
                    : given + " and world_size " + world.get() + " disagree: world_size counts data-parallel replicas ("
                    + replica + "), so gpus " + gpus.get() + " is world_size " + data.getAsInt()
                    + " (give one of them)");
        }

        /**
         * A positive integer column that says what {@code other} says another way ({@code gpus} and
         * {@code world_size}): where the row has a cell of either, its own cells alone count, so a caller's default
         * of one column does not contradict a row's cell of the other.
         */
        private Optional<Integer> paired(CsvTable t, int r, String column, String other) {
            boolean own = t.opt(r, column).isPresent() || t.opt(r, other).isPresent();
            return own ? t.opt(r, column).flatMap(v -> positive(t, r, column)) : positive(t, r, column);
        }

        /** A positive integer value, empty when the column is absent, the cell blank and no default given. */
        private Optional<Integer> positive(CsvTable t, int r, String column) {
            return value(t, r, column).map(v -> {
                try {
                    long x = CsvTable.parseWhole(v);
                    if (x > 0 && x <= Integer.MAX_VALUE) {
                        return (int) x;
                    }
                    if (x > 0) {
                        throw InvalidInputException.atLine(t.source(), t.line(r), column + " = " + x + " is too large "
                                + "(at most " + Integer.MAX_VALUE + ")");
                    }
                } catch (NumberFormatException e) {
                    // reported below
                }
                throw InvalidInputException.atLine(t.source(), t.line(r), column + " must be a positive integer, got '"
                        + clip(v) + "'");
            });
        }

        /** An integer value in {@code [min, max]}, empty when absent, blank and without default. */
        private Optional<Integer> bounded(CsvTable t, int r, String column, int min, int max) {
            return value(t, r, column).map(v -> {
                try {
                    long x = CsvTable.parseWhole(v);
                    if (x >= min && x <= max) {
                        return (int) x;
                    }
                } catch (NumberFormatException e) {
                    // reported below
                }
                throw InvalidInputException.atLine(t.source(), t.line(r), column + " must be an integer in " + min
                        + ".." + max + ", got '" + clip(v) + "'");
            });
        }

        private static String clip(String v) {
            return InvalidInputException.printable(v, 40);
        }

        /** A true/false value (also 1/0, yes/no), false when absent. */
        private boolean flag(CsvTable t, int r, String column) {
            Optional<String> v = value(t, r, column).map(x -> x.trim().toLowerCase(Locale.ROOT));
            if (v.isEmpty()) {
                return false;
            }
            return parseFlag(v.get()).orElseThrow(() -> InvalidInputException.atLine(t.source(), t.line(r), column
                    + " must be true or false (1/0 and yes/no are read as those), got '" + clip(v.get()) + "'"));
        }

        private static double parseDouble(String v) {
            try {
                return CsvTable.parseNumber(v);
            } catch (NumberFormatException e) {
                return Double.NaN;
            }
        }

        /** A column's value parsed, a parser's refusal naming the column. */
        private static <T> T column(String column, String v, java.util.function.Function<String, T> parse) {
            try {
                return parse.apply(v);
            } catch (InvalidInputException e) {
                throw InvalidInputException.of(column + ": " + e.detail());
            }
        }
    }
}
