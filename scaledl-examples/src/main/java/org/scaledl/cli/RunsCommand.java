package org.scaledl.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import org.scaledl.InvalidInputException;
import org.scaledl.io.CsvTable;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.TrainingLogs;
import org.scaledl.model.CalibrationScreen;
import org.scaledl.model.file.SafeFiles;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Device;
import org.scaledl.workload.Topology;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl runs --from-log train.log ... --out runs.csv}: turns Megatron-LM, Megatron-Bridge and NeMo training
 * logs into a job runs table ({@link org.scaledl.io.JobRuns}), one row per run in the logs' order, with the model a
 * given {@code config.json} or one built from each log's arguments (written to {@code <out-stem>-configs/}). What is
 * read from a log: {@link TrainingLogs}.
 */
@Command(name = "runs", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Turn Megatron-LM, Megatron-Bridge or NeMo training logs into a job runs table (the CSV that "
                + "fit --runs and predict --candidates read): the job from the logged arguments, measured_ms the "
                + "median iteration after warm-up, the model a given config.json or one built from the arguments.")
final class RunsCommand implements Callable<Integer> {
    /** The table's columns, in order. */
    static final List<String> COLUMNS = List.of("id", "transformer", "seq", "batch", "micro_batches", "world_size",
            "tensor", "pipeline", "context", "virtual_stages", "uneven_pipeline", "expert", "expert_tensor",
            "zero_stage", "device", "gpus_per_node", "nvlink_domain", "inter_node_gbps", "precision", "recompute", "recompute_layers",
            "recompute_modules", "sequence_parallel",
            "grad_reduce", "grad_dtype", "fp8_param_gather", "moe_a2a_overlap", "moe_dispatcher", "cuda_graphs",
            "measured_ms", "log");

    @Option(names = "--from-log", arity = "1..*", required = true, paramLabel = "FILE",
            description = "Training logs (Megatron-LM's argument block and 'elapsed time per iteration (ms)' lines; "
                    + "Megatron-Bridge's or NeMo's config dump and 'train_step_timing in s' lines); a log may hold "
                    + "several runs")
    List<Path> logs;

    @Option(names = "--transformer", paramLabel = "CONFIG",
            description = "The model's Hugging Face config.json, or the folder holding it; a log whose hidden_size, "
                    + "num_layers, num_attention_heads, query groups, experts or experts a token differ, or whose "
                    + "padded vocabulary lies more than a tenth from the configuration's, is refused (default: a "
                    + "config.json built from each log's arguments, written to <out-stem>-configs/)")
    Path transformer;

    @Option(names = "--device", description = "The GPU (a catalog name or alias; scaledl devices lists them); "
            + "required unless the logs print the GPU's name")
    String device;

    @Option(names = "--devices", paramLabel = "FILE", description = "GPUs beyond the catalog (a CSV in the catalog's "
            + "layout, as predict's --devices): what --device or a log names may be one of them")
    Path devices;

    @Option(names = "--gpus-per-node", description = "GPUs in one node (default: left empty, the device's standard "
            + "system)")
    Integer gpusPerNode;

    @Option(names = "--nvlink-domain", description = "GPUs one NVLink domain joins (default: left empty, the "
            + "device's standard system)")
    Integer nvlinkDomain;

    @Option(names = "--inter-node-gbps", description = "The network of one node, all its adapters together, Gb/s "
            + "(default: left empty, the device's standard system)")
    Double interNodeGbps;

    @Option(names = "--warmup", description = "Logged iterations to drop before the median (default 10, or a third "
            + "of them, rounded up, when a run logs fewer than 30)")
    Integer warmup;

    @Option(names = "--out", required = true, description = "The job runs table to write (CSV)")
    Path out;

    /**
     * The bundled GPU model, loaded for the first run checked ({@link #sayFarFromPredicted}); empty where it could not
     * be loaded (then no run is checked).
     */
    private java.util.Optional<org.scaledl.model.RuntimePredictor> gpu;

    /**
     * Says a run whose time is {@link CalibrationScreen#MISMATCH} times or more off the bundled GPU model's prediction
     * of its
     * job, with the unit it was probably written in where it is about 1,000 times off (a log's seconds written as
     * milliseconds, or the other way, were carried to the table without a word); a job the model cannot predict
     * is not checked.
     */
    private void sayFarFromPredicted(TrainingLogs.Run r, org.scaledl.workload.Workload w) {
        if (gpu == null) {
            try {
                gpu = java.util.Optional.of(org.scaledl.models.BundledModels.load("gpu"));
            } catch (RuntimeException e) {
                // an advisory check: the table is written all the same
                gpu = java.util.Optional.empty();
            }
        }
        double predicted;
        try {
            predicted = gpu.isPresent() ? gpu.get().predictMillis(w) : Double.NaN;
        } catch (RuntimeException e) {
            return;
        }
        if (!(predicted > 0)) {
            return;
        }
        double ratio = predicted / r.measuredMs();
        if (ratio >= CalibrationScreen.MISMATCH || ratio <= 1 / CalibrationScreen.MISMATCH) {
            // about 1,000 times off: a time in another unit than the log's label says it is in
            String unit = CalibrationScreen.unitSlip(Math.log(ratio)).isEmpty() ? "" : ratio >= 1
                    ? "seconds logged under a milliseconds label?" : "milliseconds logged under a seconds label?";
            System.err.printf(Locale.ROOT, "scaledl: warning: %s:%d: %s%.4g ms a step, %.3g times %s than the bundled "
                    + "gpu model predicts for the job (%.4g ms)%s%n", InvalidInputException.printable(
                    r.log().toString(), 200), r.line(), r.count() > 1 ? "run " + r.index() + ": " : "",
                    r.measuredMs(), ratio >= 1 ? ratio : 1 / ratio, ratio >= 1 ? "shorter" : "longer", predicted,
                    unit.isEmpty() ? ": check the log's units and that it is the job read" : ": " + unit);
        }
    }

    /** A run with what the table needs besides it. */
    private record Row(TrainingLogs.Run run, Path logArg, Device device) {
    }

    @Override
    public Integer call() {
        if (warmup != null && warmup < 0) {
            throw new IllegalArgumentException("--warmup must be 0 or more, got " + warmup);
        }
        if (gpusPerNode != null && (gpusPerNode < 1 || gpusPerNode > Topology.MAX_GPUS_PER_NODE)) {
            throw new IllegalArgumentException("--gpus-per-node must be in 1.." + Topology.MAX_GPUS_PER_NODE + ", got "
                    + gpusPerNode);
        }
        if (interNodeGbps != null && !(interNodeGbps >= Topology.MIN_GBPS && interNodeGbps <= Topology.MAX_GBPS * 8)) {
            throw new IllegalArgumentException("--inter-node-gbps must be in [" + Topology.MIN_GBPS + ", "
                    + Topology.MAX_GBPS * 8 + "] (Gb/s a node, all adapters), got " + interNodeGbps);
        }
        if (nvlinkDomain != null && (nvlinkDomain < 1 || nvlinkDomain > Topology.MAX_DOMAIN)) {
            throw new IllegalArgumentException("--nvlink-domain must be in 1.." + Topology.MAX_DOMAIN + ", got "
                    + nvlinkDomain);
        }
        Path outAbs = out.toAbsolutePath().normalize();
        for (Path log : logs) {
            if (log.toAbsolutePath().normalize().equals(outAbs)) {
                throw new IllegalArgumentException("--out " + InvalidInputException.printable(out.toString(), 200)
                        + " is one of the logs: write the table elsewhere");
            }
        }
        Reports.requireExtension(out, "the job runs table", ".csv");
        if (transformer != null) {
            // a model's folder (as Hugging Face saves one) is its config.json, as predict and inspect read it
            transformer = HuggingFaceConfig.configurationFile(transformer);
        }
        DeviceCatalog catalog = Catalogs.of(devices);
        Device given = null;
        if (device != null) {
            try {
                given = catalog.require(device);
                Catalogs.sayAlsoFitting(catalog, "--device", device, given);
            } catch (InvalidInputException e) {
                throw new IllegalArgumentException("--device: " + e.getMessage(), e);
            }
        }
        int w = warmup == null ? TrainingLogs.DEFAULT_WARMUP : warmup;

        // a log given twice (or under another name: a link to it) would give its runs twice: refused before any is
        // read
        for (int i = 0; i < logs.size(); i++) {
            for (int j = 0; j < i; j++) {
                Path log = logs.get(i);
                Path before = logs.get(j);
                if (Reports.sameFile(log, before)) {
                    throw new IllegalArgumentException(InvalidInputException.printable(log.toString(), 200) + " is "
                            + (before.toAbsolutePath().normalize().equals(log.toAbsolutePath().normalize())
                            ? "given twice" : "the same file as " + InvalidInputException.printable(before.toString(),
                            200)) + ": its runs would be two rows of one measurement");
                }
            }
        }
        // read every log before writing anything
        List<Row> rows = new ArrayList<>();
        for (Path log : logs) {
            for (TrainingLogs.Run r : TrainingLogs.read(log, w, transformer)) {
                // (a log that names another GPU of the catalog than --device is said by the run's sample, below)
                Device d = given;
                if (d == null) {
                    String name = r.device().orElseThrow(() -> new IllegalArgumentException(
                            InvalidInputException.printable(log.toString(), 200) + " does not print its GPU's name: "
                                    + "give --device NAME (scaledl devices lists them)"));
                    try {
                        d = catalog.require(name);
                        Catalogs.sayAlsoFitting(catalog, "the log's GPU", name, d);
                    } catch (InvalidInputException e) {
                        throw InvalidInputException.inSource(log.toString(), "the GPU it names: " + e.getMessage()
                                + "; give --device NAME");
                    }
                }
                if (gpusPerNode != null && r.job().gpusPerNode().filter(n -> !n.equals(gpusPerNode)).isPresent()) {
                    // as --device against the log's GPU: said, not silently replaced
                    System.err.println("scaledl: warning: " + InvalidInputException.printable(log.toString(), 200)
                            + (r.count() > 1 ? " (run " + r.index() + ")" : "") + " ran " + r.job().gpusPerNode().get()
                            + " GPUs a node (its trainer's devices); its row takes --gpus-per-node " + gpusPerNode
                            + " (leave --gpus-per-node out to keep the log's)");
                }
                if (gpusPerNode != null || nvlinkDomain != null || interNodeGbps != null) {
                    Topology.assumedFor(d).with(Optional.ofNullable(gpusPerNode), Optional.ofNullable(interNodeGbps),
                            Optional.ofNullable(nvlinkDomain));
                }
                rows.add(new Row(r, log, d));
            }
        }
        // two runs alike in every argument, iteration count and median are likely one run read twice (a log appended
        // to itself): said, as the same file given twice is refused (two real runs may agree, to 0.1 ms, too)
        for (int i = 0; i < rows.size(); i++) {
            for (int j = 0; j < i; j++) {
                TrainingLogs.Run a = rows.get(j).run();
                TrainingLogs.Run b = rows.get(i).run();
                if (a.arguments().equals(b.arguments()) && a.iterations() == b.iterations()
                        && a.measuredMs() == b.measuredMs()) {
                    System.err.printf(Locale.ROOT, "scaledl: warning: %s and %s are alike in every argument read, "
                            + "in their iteration count (%d) and their median (%.1f ms): one run read twice (a log "
                            + "appended to itself)? Their rows weigh as two measurements; keep one if so%n",
                            shown(rows.get(j)), shown(rows.get(i)), b.iterations(), b.measuredMs());
                }
            }
        }
        // each run's job as predict and fit will read its row: a layout the model cannot split (a tensor degree
        // that does not divide its heads, layers that do not divide into the stages and chunks, a sequence the
        // context-parallel split cannot halve) refused now, at the run's line, not when the table is read
        TransformerSpec model = transformer == null ? null : HuggingFaceConfig.read(transformer);
        for (Row row : rows) {
            TrainingLogs.Run r = row.run();
            org.scaledl.workload.Sample sample = model == null ? r.sample(row.device()) : r.sample(row.device(), model);
            try {
                org.scaledl.model.exec.MegatronExecution.check(sample.workload());
                // (a recipe the GPU trains in only on units it lacks: refused by predict and fit alike)
                org.scaledl.model.exec.ParallelExecution.checkPrecision(row.device(), sample.workload().precision(),
                        org.scaledl.workload.Phase.TRAIN);
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(r.log().toString(), r.line(), (r.count() > 1 ? "run " + r.index()
                        + ": " : "") + "the logged job is not one to predict: " + e.getMessage());
            }
            org.scaledl.workload.Workload checked = sample.workload();
            if (gpusPerNode != null || nvlinkDomain != null || interNodeGbps != null) {
                // the machine the row will describe (the log's GPUs a node where the option does not give them)
                try {
                    checked = checked.toBuilder().topology(Topology.assumedFor(row.device()).with(Optional
                            .ofNullable(gpusPerNode).or(() -> r.job().gpusPerNode()), Optional.ofNullable(
                            interNodeGbps), Optional.ofNullable(nvlinkDomain))).build();
                } catch (IllegalArgumentException e) {
                    throw InvalidInputException.atLine(r.log().toString(), r.line(), (r.count() > 1 ? "run "
                            + r.index() + ": " : "") + "the machine options do not go with the log's "
                            + r.job().gpusPerNode().map(n -> n + " GPUs a node").orElse("job") + ": "
                            + e.getMessage());
                }
            }
            sayFarFromPredicted(r, checked);
        }
        // a run's id names it in the table and in a calibration's report: logs of one name in different folders are
        // told apart by their folder (jobA/train.log, jobB/train.log)
        Map<String, Long> idCount = new HashMap<>();
        rows.forEach(row -> idCount.merge(row.run().id(), 1L, Long::sum));
        Map<Row, String> idOf = new HashMap<>();
        Set<String> taken = new HashSet<>();
        for (Row row : rows) {
            String id = row.run().id();
            if (idCount.get(id) > 1) {
                Path parent = row.logArg().toAbsolutePath().normalize().getParent();
                id = (parent == null || parent.getFileName() == null ? "" : parent.getFileName() + "/") + id;
            }
            if (!taken.add(id)) {
                throw new IllegalArgumentException("two runs would have the id " + InvalidInputException.printable(id,
                        200) + ": give the logs names (or folders) of their own");
            }
            idOf.put(row, id);
        }

        Path outDir = outAbs.getParent();
        String stem = out.getFileName().toString().replaceFirst("\\.[^.]*$", "");
        Path configs = outDir.resolve(stem + "-configs");
        Map<Row, String> modelCell = new HashMap<>();
        if (transformer != null) {
            String cell = configCell(outDir, configs);
            rows.forEach(row -> modelCell.put(row, cell));
        } else {
            Map<String, Path> byContent = new HashMap<>();
            Set<String> names = new HashSet<>();
            for (Row row : rows) {
                String json = row.run().config().orElseThrow();
                Path file = byContent.get(json);
                boolean fresh = file == null;
                if (fresh) {
                    String base = safeName(row.logArg().getFileName() == null ? "log"
                            : row.logArg().getFileName().toString().replaceFirst("\\.[^.]*$", ""));
                    String name = base;
                    for (int k = 2; !names.add(name); k++) {
                        name = base + "-" + k;
                    }
                    file = configs.resolve(name + ".json");
                    createConfigs(configs, file);
                    Reports.write(file, json);
                    byContent.put(json, file);
                }
                TransformerSpec spec = HuggingFaceConfig.read(file);
                String cell = relative(outDir, file);
                modelCell.put(row, cell);
                if (fresh && !Main.quiet) {
                    System.err.printf(Locale.ROOT, "scaledl: %s: model from its arguments: %s (%s, %.3f B "
                            + "parameters)%n", shown(row), cell, modelType(json), spec.parameterCount() / 1e9);
                }
            }
        }

        StringBuilder csv = new StringBuilder(String.join(",", COLUMNS)).append('\n');
        for (Row row : rows) {
            TrainingLogs.Run r = row.run();
            TrainingLogs.Job j = r.job();
            // the table's cells keep every character a name has (an id or path that lost them would collide, or
            // name no file); only those that could forge a terminal's output are escaped
            // the job's settings as the library maps them (Run.sample reads them back), and the table's own cells
            Map<String, String> byColumn = new java.util.HashMap<>(j.cells());
            byColumn.put("id", CsvTable.cell(InvalidInputException.escaped(idOf.get(row))));
            byColumn.put("transformer", CsvTable.quote(modelCell.get(row)));
            byColumn.put("device", CsvTable.cell(row.device().name()));
            if (gpusPerNode != null) {
                byColumn.put("gpus_per_node", i(gpusPerNode));
            }
            byColumn.put("nvlink_domain", nvlinkDomain == null ? "" : i(nvlinkDomain));
            byColumn.put("inter_node_gbps", interNodeGbps == null ? "" : CsvTable.plain(interNodeGbps));
            byColumn.put("measured_ms", String.format(Locale.ROOT, "%.4f", r.measuredMs()));
            byColumn.put("log", CsvTable.cell(InvalidInputException.escaped(row.logArg().toString())));
            List<String> cells = COLUMNS.stream().map(c -> java.util.Objects.requireNonNull(byColumn.get(c), c))
                    .toList();
            csv.append(String.join(",", cells)).append('\n');
            if (!Main.quiet) {
                // a Megatron line above log_interval 1 is the mean of that many iterations: its lines are counted
                // (as the lines are numbered, where they tell: the reader says an argument they contradict)
                String interval = r.loggedEvery() > 0 ? Integer.toString(r.loggedEvery())
                        : r.arguments().getOrDefault("log_interval", "1").trim();
                boolean lines = interval.matches("[0-9]+") && !interval.matches("0*1") && !interval.matches("0+");
                System.err.printf(Locale.ROOT, "scaledl: %s: median of %d %s%s%s (the first %d dropped as "
                        + "warm-up): %.1f ms on %d GPUs (%s)%n", shown(row), r.iterations(), lines
                        ? "logged line" : "iteration", r.iterations() == 1 ? "" : "s", lines ? ", each the mean of "
                        + interval + " iterations (log_interval)" : "", r.warmup(),
                        r.measuredMs(), j.gpus(), row.device().name());
            }
        }
        Reports.write(out, csv.toString());
        if (!Main.quiet) {
            System.err.println("scaledl: wrote " + rows.size() + " run" + (rows.size() == 1 ? "" : "s") + " to "
                    + InvalidInputException.printable(out.toString(), 200));
        }
        return 0;
    }

    /** The log (and run) as messages show it. */
    private static String shown(Row row) {
        TrainingLogs.Run r = row.run();
        return InvalidInputException.printable(row.logArg().toString(), 200) + (r.count() > 1 ? " run " + r.index()
                : "");
    }

    private static String i(int v) {
        return Integer.toString(v);
    }

    private static String modelType(String json) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"model_type\"\\s*:\\s*\"([a-z0-9_]+)\"")
                .matcher(json);
        return m.find() ? m.group(1) : "?";
    }

    /** A file name made of safe characters. */
    private static String safeName(String s) {
        String t = s.replaceAll("[^A-Za-z0-9._-]", "_");
        return t.isEmpty() || t.startsWith(".") || t.startsWith("-") ? "log" + t : t;
    }

    /**
     * A path relative to the table's folder, with forward slashes; {@code ./} before one a spreadsheet would take
     * for a formula.
     */
    private static String relative(Path dir, Path file) {
        String r = dir.relativize(file.toAbsolutePath().normalize()).toString().replace('\\', '/');
        return !r.isEmpty() && "=+-@".indexOf(r.charAt(0)) >= 0 ? "./" + r : r;
    }

    /**
     * The table's cell for the given configuration: its path relative to the table's folder when it lies inside it
     * (a table names files in its folder), else a copy in the configs folder.
     */
    private String configCell(Path outDir, Path configs) {
        Path abs = transformer.toAbsolutePath().normalize();
        boolean inside;
        try {
            inside = abs.startsWith(outDir) && !abs.equals(outDir) && (!Files.exists(outDir)
                    || abs.toRealPath().startsWith(outDir.toRealPath()));
        } catch (IOException e) {
            throw InvalidInputException.unreadable(transformer, "cannot read the model configuration", e);
        }
        if (inside) {
            return relative(outDir, abs);
        }
        Path name = abs.getFileName();
        String base = name == null ? "config" : name.toString().equals("config.json") && abs.getParent() != null
                && abs.getParent().getFileName() != null ? abs.getParent().getFileName().toString()
                : name.toString().replaceFirst("\\.[^.]*$", "");
        Path copy = configs.resolve(safeName(base) + ".json");
        byte[] bytes = SafeFiles.readBounded(transformer, 1 << 20, "model configuration");
        createConfigs(configs, copy);
        SafeFiles.write(copy, bytes);
        HuggingFaceConfig.read(copy);
        if (!Main.quiet) {
            System.err.println("scaledl: copied " + InvalidInputException.printable(transformer.toString(), 200)
                    + " to " + InvalidInputException.printable(copy.toString(), 200) + " (a runs table names files "
                    + "in its folder)");
        }
        return relative(outDir, copy);
    }

    /**
     * Makes the command's own folder of configurations before {@code file} is written into it (not one the user typed:
     * the file writer would say it made it).
     */
    private static void createConfigs(Path configs, Path file) {
        try {
            Files.createDirectories(configs);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": cannot create its folder " + configs + " ("
                    + e.getMessage() + ")", e);
        }
    }
}
