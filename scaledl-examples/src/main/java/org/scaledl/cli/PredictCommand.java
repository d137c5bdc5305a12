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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.scaledl.InvalidInputException;
import org.scaledl.io.Candidates;
import org.scaledl.io.CsvTable;
import org.scaledl.model.CalibrationScreen;
import org.scaledl.model.Prediction;
import org.scaledl.model.PredictionWarning;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.file.SafeFiles;
import org.scaledl.workload.Device;
import org.scaledl.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl predict --model gpu --graph g.onnx --batch 8 --device "NVIDIA A100-SXM4-80GB" ...} or
 * {@code --transformer config.json --seq 2048 ...} predicts one workload; {@code --candidates jobs.csv
 * [--out scored.csv|.jsonl]} scores a table of them, the options giving the value of columns a row lacks. A device
 * model ({@code gpu}, {@code fit --gpu}) needs {@code --device NAME}; a host model knowing several machines too.
 */
@Command(name = "predict", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Predict one workload, or every row of a candidate table, with a bundled or saved model. "
                + "Warnings (where the workload leaves what the model was fitted on, assumed topologies, memory) go "
                + "to stderr.")
final class PredictCommand implements Callable<Integer> {
    @Option(names = "--candidates", description = "Score every row of this CSV: graph (ONNX, relative to the CSV) "
            + "or transformer (config.json, relative to the CSV) with seq; batch (per micro-batch); optionally "
            + "micro_batches (or global_batch), world_size (or gpus: every GPU), tensor, pipeline, context, "
            + "virtual_stages, expert, expert_tensor, zero_stage, threads, phase, device, precision, recompute, "
            + "sequence_parallel, gpus_per_node, nvlink_domain, inter_node_gbps, expert_imbalance, recompute_layers, recompute_modules, "
            + "offload_layers, lora_rank, uneven_pipeline, document_tokens, grad_dtype, grad_reduce, fp8_param_gather, "
            + "moe_a2a_overlap, "
            + "moe_dispatcher, cuda_graphs, memory_format (docs/formats.md; a column a row lacks takes the "
            + "option's value); other columns are carried through; the output adds predicted_ms, low_ms, high_ms, "
            + "memory_gb, tokens_per_s_per_gpu, model_tflops_per_gpu and warnings (a table of runs' measured "
            + "tokens_per_s_per_gpu or model_tflops_per_gpu keeps them as measured_tokens_per_s_per_gpu and "
            + "measured_model_tflops_per_gpu; a table scored before has its predictions replaced)")
    Path candidates;

    @Option(names = "--out", description = "With --candidates: write here (.csv or .jsonl) instead of stdout")
    Path out;

    @Option(names = "--keep-going", description = "With --candidates: a row that cannot be read or predicted is "
            + "written with its reason in an added error column (JSON key error) and no prediction, and the others "
            + "are scored; the count of such rows goes to stderr (default: the first such row stops the command; a "
            + "line of the file itself malformed stops it either way)")
    boolean keepGoing;

    @Option(names = "--json", description = "Print JSON (one workload)")
    boolean json;

    @Option(names = "--gpus", description = "Every GPU of the job, instead of --world-size: the data-parallel "
            + "replicas are gpus / (tensor x pipeline x context), which must divide (with --candidates: the value "
            + "of a row without world_size or gpus)")
    Integer gpus;

    @Option(names = "--global-batch", description = "Sequences (samples) per iteration over every replica, instead "
            + "of --micro-batches: the micro-batches are global-batch / (batch x replicas), which must divide (as "
            + "layouts --global-batch; with --candidates: the value of a row without global_batch or micro_batches)")
    Integer globalBatch;

    @Option(names = "--train-tokens", converter = TrainTokens.Converter.class, description = "Tokens to train on "
            + "(15e12, or 15T; suffixes K, M, B, T): adds the iterations, days and GPU-hours (with the 90%% interval) "
            + "they take at the predicted step, uninterrupted (a transformer's training job)")
    Double trainTokens;

    @picocli.CommandLine.Mixin
    JobOptions job;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /**
     * Said where {@code --world-size} (not {@code --data-parallel}) is given to a GPU job of several GPUs a replica:
     * PyTorch's and Megatron's WORLD_SIZE counts every GPU, this option the replicas.
     */
    static Optional<String> worldSizeNote(List<String> args, int replicas, int gpus) {
        boolean spelled = args.stream().anyMatch(a -> a.equals("--world-size") || a.startsWith("--world-size="));
        if (!spelled || gpus <= replicas) {
            return Optional.empty();
        }
        int each = gpus / replicas;
        // --gpus N takes a multiple of a replica's GPUs
        String asGpus = replicas % each == 0 ? String.format(Locale.ROOT, "--gpus %d gives a job of %d GPUs",
                replicas, replicas) : String.format(Locale.ROOT, "a job of every GPU counted is --gpus N, N a multiple "
                + "of the %d GPUs of a replica", each);
        return Optional.of(String.format(Locale.ROOT, "--world-size %d counts data-parallel replicas (PyTorch's "
                + "WORLD_SIZE counts every GPU): this job uses %d GPUs; %s (--data-parallel %d says what --world-size "
                + "does, without this note)", replicas, gpus, asGpus, replicas));
    }

    /** The predictor {@code --model} names ({@code --allow-partial} applied). */
    private RuntimePredictor model() {
        RuntimePredictor p = ModelArgument.load(job.model);
        if (gpus != null && !p.modelsClusters()) {
            throw new IllegalArgumentException("--gpus counts a GPU job's GPUs; " + job.model + " predicts CPU "
                    + "machines: give their workers with --world-size");
        }
        return job.graphOptions.allowPartial ? p.allowingPartialGraphs() : p;
    }

    @Override
    public Integer call() throws Exception {
        CliLogging.record();
        if (out != null && candidates == null) {
            throw new IllegalArgumentException("--out applies to --candidates");
        }
        if (keepGoing && candidates == null) {
            throw new IllegalArgumentException("--keep-going applies to --candidates");
        }
        if (out != null) {
            org.scaledl.model.file.SafeFiles.checkWritable(out);
            Reports.requireExtension(out, "the scored table", ".csv", ".jsonl");
            // (the candidate table itself may be scored in place: its columns are kept, its predictions replaced)
            Reports.notAnInput(out, "--devices", job.devices);
        }
        if (gpus != null && job.worldSize != null) {
            throw new IllegalArgumentException("give --gpus (every GPU of the job) or --data-parallel (--world-size: "
                    + "its data-parallel replicas), not both");
        }
        if (gpus != null && gpus <= 0) {
            throw new IllegalArgumentException("--gpus must be positive, got " + gpus);
        }
        if (trainTokens != null && (candidates != null || job.transformer == null
                || job.phase == org.scaledl.workload.Phase.INFER)) {
            throw new IllegalArgumentException("--train-tokens needs one transformer's training job (--transformer "
                    + "with --seq; not --candidates, not inference; layouts takes it too, for each layout)");
        }
        if (candidates != null) {
            if (job.graph != null || job.transformer != null || job.seq != null || job.batch != null || json) {
                throw new IllegalArgumentException("--candidates replaces --graph, --transformer, --seq, --batch "
                        + "and --json (the table's columns say them)");
            }
            refuseBothBatches(globalBatch, job.microBatches, true);
            if (globalBatch != null && globalBatch <= 0) {
                throw new IllegalArgumentException("--global-batch must be positive, got " + globalBatch);
            }
            return scoreCandidates(model());
        }
        if ((job.graph == null) == (job.transformer == null) || job.batch == null) {
            throw new IllegalArgumentException("say what to predict: --graph or --transformer (with --seq), and "
                    + "--batch; or --candidates");
        }
        if (job.transformer != null && job.seq == null) {
            throw new IllegalArgumentException("--transformer needs --seq (the sequence length)");
        }
        if (job.graph != null && job.seq != null) {
            throw new IllegalArgumentException("--seq applies to --transformer; an ONNX graph has its shapes");
        }
        if (gpus != null) {
            job.worldSize = JobOptions.replicas(gpus, job.tensor, job.pipeline, job.cluster.context);
        }
        if (globalBatch != null) {
            job.microBatches = microBatches(globalBatch, job.batch, job.worldSize, job.microBatches);
        }
        // the graph first: a bundled model is still being read on another thread (ModelArgument.prefetch)
        org.scaledl.graph.ModelGraph g = job.graph();
        RuntimePredictor p = model();
        Workload w = job.workload(p, g);
        Prediction pr = p.predict(w);
        Optional<String> worldSize = p.modelsClusters() ? worldSizeNote(spec.commandLine().getParseResult()
                .expandedArgs(), w.parallelism().data(), w.parallelism().ranks()) : Optional.empty();
        worldSize.ifPresent(n -> System.err.println("scaledl: note: " + n));
        for (PredictionWarning x : pr.warnings()) {
            System.err.println(stderrLine(x));
        }
        java.util.Optional<String> elsewhere = job.otherMachine(p, w);
        elsewhere.ifPresent(m -> System.err.println("scaledl: warning: " + m));
        String machine = JobOptions.machine(p, w);
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            ObjectNode wl = root.putObject("workload");
            wl.put("graph", w.graph().name());
            if (w.graph().transformer().isPresent()) {
                wl.put("seq", w.graph().transformer().get().seq());
            } else {
                wl.putNull("seq");   // an ONNX graph has its shapes
            }
            wl.put("batch", job.batch);
            wl.put("micro_batches", w.parallelism().microBatches());
            wl.put("samples_per_iteration", (long) w.batch() * w.parallelism().data());
            wl.put("phase", w.phase().label());
            wl.put("world_size", w.parallelism().data());
            wl.put("data_parallel", w.parallelism().data());
            wl.put("gpus", w.worldSize());
            wl.put("tensor", w.parallelism().tensor());
            wl.put("pipeline", w.parallelism().pipeline());
            wl.put("context", w.parallelism().context());
            wl.put("virtual_stages", w.parallelism().virtualStages());
            wl.put("expert", w.parallelism().expert());
            wl.put("expert_tensor", w.parallelism().expertTensor());
            wl.put("zero_stage", w.parallelism().zeroStage());
            wl.put("threads", w.threads());
            wl.put("parallelism", w.parallelism().label());
            wl.put("precision", w.precision().label());
            wl.put("recompute", w.recompute().label());
            Workload used = p.resolved(w);
            // what selective recomputation recomputes, where the job (as run) recomputes selectively
            wl.put("recompute_modules", used.recompute() == org.scaledl.workload.Recompute.SELECTIVE
                    ? org.scaledl.workload.RecomputeModule.label(used.recomputeModules()) : null);
            wl.put("recompute_used", used.recomputeLabel());
            wl.put("offload_layers", used.offloadLayers());
            wl.put("sequence_parallel", w.parallelism().sequenceParallel());
            if (w.phase() == org.scaledl.workload.Phase.TRAIN) {
                wl.put("grad_dtype", w.gradDtypeLabel());
            } else {
                wl.putNull("grad_dtype");   // no gradients to keep
            }
            wl.put("grad_reduce", w.gradReduce().label());
            wl.put("fp8_param_gather", w.fp8ParamGather());
            wl.put("moe_a2a_overlap", w.expertCommOverlap());
            wl.put("moe_dispatcher", w.parallelism().expert() > 1 ? w.moeDispatcher().label() : null);
            wl.put("cuda_graphs", w.cudaGraphs().label());
            wl.put("memory_format", w.memoryFormat().label());
            wl.put("lora_rank", w.loraRank());
            wl.put("document_tokens", w.documentTokens());
            wl.put("expert_imbalance", w.expertImbalance());
            wl.put("uneven_pipeline", w.unevenPipeline());
            if (w.device().isPresent() && p.modelsClusters()) {
                // the machines the prediction is for, given or the device's standard system (machine says which)
                org.scaledl.workload.Topology t = w.topology().orElse(org.scaledl.workload.Topology.assumedFor(
                        w.device().get()));
                wl.put("gpus_per_node", t.gpusPerNode());
                wl.put("nvlink_domain", t.nvlinkDomain());
                wl.put("inter_node_gbps", t.interNodeGbps());
            }
            if (w.device().isPresent()) {
                wl.put("device", w.device().get().name());
            } else {
                wl.putNull("device");
            }
            root.put("ms", pr.millis());
            root.put("low_ms", pr.lowMillis());
            root.put("high_ms", pr.highMillis());
            if (pr.throughputPerSecond().isPresent()) {
                root.put("throughput_per_s", pr.throughputPerSecond().getAsDouble());
            } else {
                root.putNull("throughput_per_s");
            }
            if (pr.memoryGb().isPresent()) {
                root.put("memory_gb", pr.memoryGb().getAsDouble());
            } else {
                root.putNull("memory_gb");
            }
            if (pr.memoryParts().isPresent()) {
                org.scaledl.model.cost.MemoryUse m = pr.memoryParts().get();
                root.putObject("memory").put("stage", m.stage()).put("stages", m.stages())
                        .put("states_gb", m.statesGb()).put("low_precision_copies_gb", m.lowPrecisionCopiesGb())
                        .put("activations_gb", m.activationsGb()).put("micro_batches_in_flight",
                                m.microBatchesInFlight()).put("logits_gb", m.logitsGb())
                        .put("runtime_gb", m.runtimeGb()).put("host_gb", m.hostGb());
            } else {
                root.putNull("memory");
            }
            putOptional(root, "tokens_per_s_per_gpu", pr.tokensPerSecondPerGpu());
            putOptional(root, "model_tflops_per_gpu", pr.modelTflopsPerGpu());
            root.put("machine", machine);
            ArrayNode ws = root.putArray("warnings");
            // the command line's own note on --world-size first, as stderr has it
            worldSize.ifPresent(n -> ws.addObject().put("kind", "note").put("message", n).put("share", 1.0));
            job.precisionAssumed(p, w).ifPresent(m -> ws.addObject().put("kind", "assumed").put("message", m)
                    .put("share", 1.0));
            warnings(ws, pr);
            elsewhere.ifPresent(m -> ws.addObject().put("kind", "other_machine").put("message", m).put("share", 1.0));
            // what the readers warned of while reading the inputs (a multimodal configuration, a key left out)
            CliLogging.recorded().forEach(m -> ws.addObject().put("kind", "input").put("message", m)
                    .put("share", 1.0));
            TrainTokens.of(trainTokens, w, pr).ifPresent(t -> TrainTokens.put(t, root.putObject("train")));
            ArrayNode b = root.putArray("breakdown");
            for (Prediction.Contribution c : pr.breakdown()) {
                ObjectNode o = b.addObject().put("name", c.name()).put("kind", c.label()).put("ms", c.millis());
                if (c.layer().isPresent()) {
                    o.put("layer", c.layer().getAsInt());
                }
            }
            Reports.printJson(root);
        } else {
            StringBuilder sb = new StringBuilder();
            // a graph's name comes from its file or configuration: no control character of it reaches the terminal
            sb.append(org.scaledl.InvalidInputException.escaped(w.toString()));
            if (w.parallelism().data() > 1) {
                // the batch above is a replica's: the iteration's over every replica, as layouts and recipes give it
                sb.append(" global-batch=").append((long) w.batch() * w.parallelism().data());
            }
            sb.append('\n').append("  on ").append(machine).append('\n');
            if (pr.lowMillis() < pr.highMillis()) {
                sb.append(String.format(Locale.ROOT, "  %.2f ms per iteration (90%% interval %.2f–%.2f ms)", pr.millis(),
                        pr.lowMillis(), pr.highMillis()));
            } else {
                sb.append(String.format(Locale.ROOT, "  %.2f ms per iteration (no interval: the model gives a point "
                        + "prediction)", pr.millis()));
            }
            // (the job's samples, over every GPU: beside the per-GPU rates, said so)
            pr.throughputPerSecond().ifPresent(t -> sb.append(String.format(Locale.ROOT, t >= 1
                    ? ", %.1f samples/s in all" : ", %.3g samples/s in all", t)));
            pr.tokensPerSecondPerGpu().ifPresent(t -> sb.append(String.format(Locale.ROOT, ", %.0f tokens/s per GPU",
                    t)));
            pr.modelTflopsPerGpu().ifPresent(t -> sb.append(String.format(Locale.ROOT, ", %.0f model TFLOP/s per GPU",
                    t)));
            pr.memoryGb().ifPresent(m -> sb.append(String.format(Locale.ROOT, ", %.1f GiB per GPU", m)));
            if (pr.outOfMemory()) {
                // the time of a job that cannot run: said on the line itself, not in a warning alone
                sb.append(w.device().filter(d -> d.memoryGB() > 0).map(d -> String.format(Locale.ROOT,
                        " (does not fit: the GPU has %.1f GiB)", d.memoryGB())).orElse(" (does not fit)"));
            }
            sb.append('\n');
            pr.memoryParts().ifPresent(m -> sb.append("  memory per GPU: ").append(m.describe()).append('\n'));
            TrainTokens.of(trainTokens, w, pr).ifPresent(t -> sb.append("  ").append(t.describe()).append('\n'));
            shares(pr).ifPresent(x -> sb.append("  ").append(x).append('\n'));
            pr.breakdown().stream().limit(10).forEach(c -> sb.append(String.format(Locale.ROOT,
                    "  %-50s %-20s %9.3f ms%n", org.scaledl.InvalidInputException.escaped(c.name()), c.label(), c.millis())));
            System.out.print(sb);
        }
        return 0;
    }

    /**
     * Where a prediction's time goes, by the breakdown's kinds (the list below it shows the ten largest entries
     * only): {@code where the time goes: 71% matrix products, 19% other layers, 8% communication, 2% overhead};
     * empty without a breakdown. Matrix products are the dense and convolution layers (forward and backward) and a
     * LoRA job's adapters ({@link Prediction.Kind#COMPUTE}); other
     * layers every other layer (element-wise, norms, attention's softmax, data movement); communication the
     * collectives and hand-offs on the critical path; the pipeline bubble the busiest stage's GPUs idle while the
     * pipeline fills and drains; waiting for the host the time the GPUs wait for its kernel dispatch; overhead the
     * optimizer and fixed costs.
     */
    static java.util.Optional<String> shares(Prediction pr) {
        double total = pr.breakdown().stream().mapToDouble(Prediction.Contribution::millis).sum();
        if (!(total > 0)) {
            return java.util.Optional.empty();
        }
        double[] parts = new double[6];
        for (Prediction.Contribution c : pr.breakdown()) {
            int k = switch (c.kind()) {
                case LAYER -> c.family().filter(f -> f == org.scaledl.workload.OpFamily.DENSE
                        || f == org.scaledl.workload.OpFamily.CONV).isPresent() ? 0 : 1;
                // LoRA adapters' products: matrix products of no layer of the graph; a low-precision recipe's
                // quantisation: element-wise casts, with the other layers
                case COMPUTE -> c.name().equals("quantisation") ? 1 : 0;
                case COMMUNICATION -> 2;
                case OVERHEAD -> c.name().equals(Prediction.PIPELINE_BUBBLE) ? 3
                        : c.name().equals(Prediction.HOST_DISPATCH) ? 4 : 5;
            };
            parts[k] += c.millis();
        }
        String[] names = {"matrix products", "other layers", "communication", "pipeline bubble",
            "waiting for the host", "overhead"};
        List<String> said = new java.util.ArrayList<>();
        for (int k = 0; k < parts.length; k++) {
            if (parts[k] > 0) {
                double pct = 100 * parts[k] / total;
                said.add((pct < 0.5 ? "<1" : String.format(Locale.ROOT, "%.0f", pct)) + "% " + names[k]);
            }
        }
        return java.util.Optional.of("where the time goes: " + String.join(", ", said));
    }

    /**
     * A prediction's warning as stderr says it: a note (how the workload was read, the predictor's own choice) as a
     * note; a warning with its kind and the share of the prediction it concerns (its kind alone where the share is
     * too small to round to a percent).
     */
    static String stderrLine(PredictionWarning x) {
        return stderrLine(x, true);
    }

    /**
     * {@link #stderrLine(PredictionWarning)}, without the share where {@code share} is false: a warning said once for
     * many predictions (a sweep's points), whose shares differ.
     */
    static String stderrLine(PredictionWarning x, boolean share) {
        if (x.kind() == PredictionWarning.Kind.NOTE || x.kind() == PredictionWarning.Kind.CHOSEN) {
            return "scaledl: note: " + x.message();
        }
        if (x.kind() == PredictionWarning.Kind.CALIBRATED_ELSEWHERE) {
            // a warning, as its JSON kind and the docs say (the prediction moved with another cluster's runs)
            return "scaledl: warning: " + x.message() + " (calibrated_elsewhere)";
        }
        return String.format(Locale.ROOT, "scaledl: warning: %s (%s%s)", x.message(),
                x.kind().name().toLowerCase(Locale.ROOT), !share || 100 * x.share() < 0.5 ? ""
                        : String.format(Locale.ROOT, ", %.0f%% of the prediction", 100 * x.share()));
    }

    private static void putOptional(ObjectNode o, String key, java.util.OptionalDouble v) {
        if (v.isPresent()) {
            o.put(key, v.getAsDouble());
        } else {
            o.putNull(key);
        }
    }

    private static void warnings(ArrayNode arr, Prediction pr) {
        for (PredictionWarning x : pr.warnings()) {
            ObjectNode o = said(arr, x);
            o.put("share", x.share());
            if (x.value().isPresent()) {
                o.put("value", x.value().get());
            }
            if (!x.range().isEmpty()) {
                o.put("range", x.range());
            }
        }
    }


    /**
     * A warning's kind and message as JSON, added to {@code arr}: the whole of a warning said once for many
     * predictions (a sweep's points, a search's layouts), whose shares differ; a prediction's own adds its share.
     */
    static ObjectNode said(ArrayNode arr, PredictionWarning x) {
        return arr.addObject().put("kind", x.kind().name().toLowerCase(Locale.ROOT)).put("message", x.message());
    }

    /** The column (JSON key) {@code --keep-going} adds: why a row has no prediction, empty where it has one. */
    static final String ERROR_COLUMN = "error";
    /** The times the command line's own tables hold that are no measurement: a layout's, a plan's cost. */
    private static final java.util.Set<String> OWN_TIMES = java.util.Set.of("layout_ms", "cost_s");

    /** A column name that says a time: a word {@code ms}, {@code s}, {@code sec}, {@code seconds} or {@code time}. */
    private static final java.util.regex.Pattern TIME_LIKE = java.util.regex.Pattern.compile(
            "(?i)(^|_)(ms|s|sec|secs|seconds|time)(_|$)");

    /**
     * Says the columns of a table without a measured time ({@code measured_ms}, or a measured rate) that look like
     * one under another name: a runs table's own misspelt ({@code Measured_ms}), or another tool's time
     * ({@code step_time_ms}, {@code measured_s}). Its rows are scored, but not against them: the table's summary of
     * the model's error would be missing without a word.
     */
    static void sayUnscoredTimes(String table, List<String> columns) {
        if (columns.contains("measured_ms") || columns.contains(org.scaledl.io.JobRuns.measuredRateColumn(columns))) {
            return;
        }
        Map<String, String> misspelt = org.scaledl.io.JobRuns.misspelt(columns);
        for (String c : columns) {
            String meant = misspelt.get(c);
            String shown = InvalidInputException.printable(c, 40);
            if (meant != null && org.scaledl.io.JobRuns.MEASURED.contains(meant)) {
                System.err.println("scaledl: warning: " + table + ": column '" + shown + "' looks like " + meant
                        + " misspelt: the rows are not scored against it (rename it " + meant + ")");
            } else if (meant == null && Candidates.canonical(c).isEmpty() && !OUTPUT_COLUMNS.contains(c)
                    && MEASURED_OUTPUT_COLUMNS.stream().noneMatch(m -> c.equals(org.scaledl.io.JobRuns
                            .MEASURED_PREFIX + m)) && !OWN_TIMES.contains(c) && TIME_LIKE.matcher(c).find()) {
                System.err.println("scaledl: note: " + table + ": column '" + shown + "' looks like a measured "
                        + "time: a table's rows are scored against measured_ms (one iteration, ms) or "
                        + "tokens_per_s_per_gpu only (rename it to be scored)");
            }
        }
    }

    /**
     * The rows of a scored table with a measured time ({@code measured_ms}, or a measured rate), as the summary says
     * them: the rows scored, their summed absolute and signed relative errors and those inside the interval, and the
     * rows left out with the first line of each kind.
     */
    static final class Measured {
        /** The table's column of measured rates ({@link org.scaledl.io.JobRuns#measuredRateColumn}). */
        String rateColumn = org.scaledl.io.JobRuns.MEASURED.get(1);
        long rows;
        double absolute;
        double signed;
        long inside;
        /** Of the rows scored, those predicted not to fit their GPUs' memory (a run that ran did fit). */
        long outOfMemory;
        /** Rows whose measured cell is no number of milliseconds a runs table takes, and the first one's line. */
        long unreadable;
        int unreadableLine;
        /** Rows about a thousand times off their prediction ({@link CalibrationScreen#unitSlip}: another unit). */
        long slipped;
        int slippedLine;
        String slippedUnit = "";
        /**
         * Of the rows scored, those {@link CalibrationScreen#MISMATCH} times or more off (another job?), and the
         * first.
         */
        long far;
        int farLine;

        /**
         * Adds a scored row's error against its {@code measured_ms} cell, or where it has none its measured
         * {@link #rateColumn} (tokens a second per GPU: the time the prediction's rate means at that rate, as a runs
         * table reads it, {@link org.scaledl.io.JobRuns}). A cell that is no number of milliseconds within
         * {@link org.scaledl.io.JobRuns#MIN_MILLIS}..{@link org.scaledl.io.JobRuns#MAX_MILLIS}, or a time and rate
         * both given that disagree a hundred times, is counted apart, as a runs table refuses it (a rate that is no
         * positive number beside a time is left as a runs table leaves it); a {@code measured_ms} about a thousand
         * times off its prediction is counted apart too (another unit: one such row would set the summary alone); a
         * time {@link CalibrationScreen#MISMATCH} times or more off otherwise is scored, and counted to be said (a
         * model that
         * far off is what the summary is for, or the row is another job).
         */
        void add(CsvTable t, int r, Prediction pr) {
            Optional<String> cell = t.opt(r, "measured_ms").filter(v -> !v.isBlank());
            Optional<String> rate = t.opt(r, rateColumn).filter(v -> !v.isBlank());
            if (cell.isEmpty() && (rate.isEmpty() || pr.tokensPerSecondPerGpu().isEmpty())) {
                return;
            }
            double ms = number(cell.orElseGet(rate::get));
            if (ms > 0 && cell.isEmpty()) {
                // the same job's time is inversely proportional to its rate
                ms = pr.millis() * pr.tokensPerSecondPerGpu().getAsDouble() / ms;
            } else if (ms > 0 && rate.isPresent() && number(rate.get()) > 0 && pr.tokensPerSecondPerGpu()
                    .isPresent()) {
                double fromRate = pr.millis() * pr.tokensPerSecondPerGpu().getAsDouble() / number(rate.get());
                if (Math.abs(Math.log(fromRate / ms)) > Math.log(org.scaledl.io.JobRuns.UNITS_APART)) {
                    ms = Double.NaN;
                }
            }
            if (!(ms >= org.scaledl.io.JobRuns.MIN_MILLIS && ms <= org.scaledl.io.JobRuns.MAX_MILLIS)) {
                unreadableLine = unreadable++ == 0 ? t.line(r) : unreadableLine;
                return;
            }
            double ratio = pr.millis() / ms;
            String unit = cell.isPresent() ? CalibrationScreen.unitSlip(Math.log(ratio)) : "";
            if (!unit.isEmpty()) {
                if (slipped++ == 0) {
                    slippedLine = t.line(r);
                    slippedUnit = unit;
                }
                return;
            }
            if ((ratio >= CalibrationScreen.MISMATCH || ratio <= 1 / CalibrationScreen.MISMATCH) && far++ == 0) {
                farLine = t.line(r);
            }
            double e = ratio - 1;
            rows++;
            absolute += Math.abs(e);
            signed += e;
            inside += pr.lowMillis() <= ms && ms <= pr.highMillis() ? 1 : 0;
            outOfMemory += pr.outOfMemory() ? 1 : 0;
        }

        /** A cell's number; NaN for one that is not a plain number (a unit, a separator, text). */
        private static double number(String cell) {
            try {
                return CsvTable.parseNumber(cell);
            } catch (NumberFormatException e) {
                return Double.NaN;
            }
        }

        /** The summary's lines on stderr (said even with -q: a table of measured runs scored checks the model). */
        void say(String table) {
            if (rows > 0) {
                System.err.printf(Locale.ROOT, "scaledl: note: %s: %d row%s with a measured time (measured_ms, or %s): "
                        + "MRE %.1f %% (mean signed error %+.1f %%, > 0: predicted too slow), %d inside the 90 %% "
                        + "interval%s%n", table, rows, rows == 1 ? "" : "s", rateColumn, 100 * absolute / rows,
                        100 * signed / rows, inside, outOfMemory == 0 ? "" : String.format(Locale.ROOT, "; %d of "
                        + "them predicted not to fit their GPUs' memory, though they ran", outOfMemory));
            }
            if (unreadable > 0) {
                System.err.printf(Locale.ROOT, "scaledl: note: %s: %d row%s with a measured time that is no number "
                        + "of milliseconds from %s to %s (or whose measured_ms and %s disagree a hundred times), the "
                        + "first at line %d: left out of the model's error on them%n", table, unreadable,
                        unreadable == 1 ? "" : "s", CsvTable.plain(org.scaledl.io.JobRuns.MIN_MILLIS),
                        CsvTable.plain(org.scaledl.io.JobRuns.MAX_MILLIS), rateColumn, unreadableLine);
            }
            if (slipped > 0) {
                System.err.printf(Locale.ROOT, "scaledl: warning: %s: %d row%s with a measured_ms about a thousand "
                        + "times off %s prediction, the first at line %d (%s): left out of the model's error on "
                        + "them%n", table, slipped, slipped == 1 ? "" : "s", slipped == 1 ? "its" : "their",
                        slippedLine, slippedUnit);
            }
            if (far > 0) {
                System.err.printf(Locale.ROOT, "scaledl: warning: %s: %d of the rows scored measured %.0f times or "
                        + "more off %s prediction, the first at line %d: check that each is the job that ran%n",
                        table, far, CalibrationScreen.MISMATCH, far == 1 ? "its" : "their", farLine);
            }
        }
    }

    /** The columns a scored table adds (an input column of the same name is replaced). */
    static final List<String> OUTPUT_COLUMNS = List.of("predicted_ms", "low_ms", "high_ms", "memory_gb",
            "tokens_per_s_per_gpu", "model_tflops_per_gpu", "warnings");

    /** The options given, as the values of the candidate columns a row lacks. */
    private java.util.Map<String, String> columnDefaults() {
        java.util.Map<String, String> d = new java.util.HashMap<>();
        java.util.function.BiConsumer<String, Object> put = (k, v) -> {
            if (v != null) {
                d.put(k, v.toString());
            }
        };
        put.accept("world_size", job.worldSize);
        put.accept("gpus", gpus);
        put.accept("tensor", job.tensor);
        put.accept("pipeline", job.pipeline);
        put.accept("micro_batches", job.microBatches);
        put.accept("global_batch", globalBatch);
        put.accept("threads", job.threads);
        put.accept("phase", job.phase == null ? null : job.phase.label());
        job.cluster.columnDefaults(d);
        return d;
    }

    /**
     * The micro-batches a replica runs for a global batch: {@code global / (batch × replicas)}; refused where that
     * does not divide, and beside {@code --micro-batches}.
     */
    static int microBatches(int global, int batch, Integer replicas, Integer given) {
        refuseBothBatches(global, given, false);
        int r = replicas == null ? 1 : replicas;
        return org.scaledl.workload.Parallelism.microBatches(global, batch, r).orElseThrow(() ->
                new IllegalArgumentException(String.format(Locale.ROOT, "--global-batch %d is not a positive "
                        + "multiple of --batch %d x %d data-parallel replica%s (%d)", global, batch, r,
                        r == 1 ? "" : "s", (long) batch * r)));
    }

    /**
     * Refuses {@code --global-batch} beside {@code --micro-batches}: each says the other (for a candidate table, of
     * the rows that say neither).
     */
    private static void refuseBothBatches(Integer global, Integer micro, boolean table) {
        if (global != null && micro != null) {
            throw new IllegalArgumentException("give --global-batch or --micro-batches, not both (the global batch is "
                    + "batch x micro-batches x replicas" + (table ? "; a row's own global_batch or micro_batches "
                    + "comes first" : "") + ")");
        }
    }

    /** Candidates read, scored and written at a time: memory stays flat in the table's length. */
    static final int CHUNK_ROWS = 4096;

    /**
     * Scores a candidate table chunk by chunk (read, predict on every core, write in row order), to {@code --out}
     * through a temporary file that replaces it only when every row is written, or to stdout; prints the throughput
     * on stderr.
     */
    private int scoreCandidates(RuntimePredictor p) throws IOException {
        if (!p.modelsClusters() && job.cluster.precision != null
                && job.cluster.precision != org.scaledl.workload.Precision.FP32) {
            // the option, not each row: refused before the table is read, as for one job
            throw new IllegalArgumentException("--precision " + job.cluster.precision.label() + " applies to GPU "
                    + "models; " + job.model + " predicts CPU machines, which run FP32");
        }
        boolean jsonl = out != null && out.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".jsonl");
        long[] counts = new long[3];
        // the rows with a measured time: their count, summed absolute and signed relative errors, and those inside
        // the interval (a runs table scored: how far the model is off it, said at the end)
        Measured measured = new Measured();
        long[] nanos = new long[1];
        java.util.Set<String> machinesSeen = new java.util.HashSet<>();
        java.util.Set<String> calibratedSeen = new java.util.HashSet<>();
        try (Candidates.Chunks in = Candidates.open(candidates, job.graphOptions::read,
                name -> job.resolveDevice(p, name.isEmpty() ? job.device : name), columnDefaults())) {
            refuseCollidingColumns(in.columns());
            sayUnscoredTimes(InvalidInputException.printable(candidates.toString(), 200), in.columns());
            if (!in.columns().contains("moe_dispatcher") && !in.columns().contains("moe_a2a_overlap")) {
                // (a row of its own dispatcher or overlap may take the other default)
                job.cluster.refuseOverlapWithoutItsDispatcher();
            }
            // the column of measured rates a row without measured_ms is scored on (a scored table's predictions are
            // its tokens_per_s_per_gpu; the measured ones, measured_tokens_per_s_per_gpu)
            measured.rateColumn = org.scaledl.io.JobRuns.measuredRateColumn(in.columns());
            SafeFiles.Content content = stream -> {
                Writer w = new BufferedWriter(new OutputStreamWriter(stream, StandardCharsets.UTF_8), 1 << 16);
                Map<String, String> renamed = measuredRenamed(in.columns());
                List<String> cols = in.columns().stream().filter(c -> (!OUTPUT_COLUMNS.contains(c)
                        || renamed.containsKey(c)) && !(keepGoing && c.equals(ERROR_COLUMN))).toList();
                if (!renamed.isEmpty()) {
                    System.err.println("scaledl: warning: " + candidates + ": its measured " + String.join(" and ",
                            renamed.keySet()) + " are carried through as " + String.join(" and ", renamed.values())
                            + "; the columns of those names hold the predictions");
                }
                if (!jsonl) {
                    List<String> header = new java.util.ArrayList<>(cols.stream()
                            .map(c -> CsvTable.cell(renamed.getOrDefault(c, c))).toList());
                    header.addAll(OUTPUT_COLUMNS);
                    if (keepGoing) {
                        header.add(ERROR_COLUMN);
                    }
                    w.write(String.join(",", header));
                    w.write('\n');
                }
                ObjectMapper om = new ObjectMapper();
                // (a misspelt column, or another framework's name for one, the reader warns of)
                // every row read on its own, a bad one kept with why: with --keep-going written with its reason,
                // else the first bad row in the table's order, a cell or a job the model refuses, stops the command
                for (Candidates.EachRow c = in.nextEach(CHUNK_ROWS); c.table().size() > 0;
                        c = in.nextEach(CHUNK_ROWS)) {
                    long t0 = System.nanoTime();
                    String[] refused = new String[c.table().size()];
                    Prediction[] scored = score(p, c, keepGoing, refused);
                    nanos[0] += System.nanoTime() - t0;
                    for (int r = 0; r < c.workloads().size(); r++) {
                        Optional<Workload> cw = c.workloads().get(r);
                        if (cw.isEmpty()) {
                            continue;
                        }
                        String key = cw.get().device().map(Device::name).orElse("");
                        if (machinesSeen.add(key)) {
                            job.otherMachine(p, cw.get()).ifPresent(m -> System.err.println("scaledl: warning: "
                                    + m));
                        }
                        // once a GPU: its rows' predictions moved with the cluster's calibration (each row's
                        // warnings say so too)
                        Optional<PredictionWarning> elsewhere = scored[r] == null || calibratedSeen.contains(key)
                                ? Optional.empty() : scored[r].warnings().stream().filter(x -> x.kind()
                                        == PredictionWarning.Kind.CALIBRATED_ELSEWHERE).findFirst();
                        if (elsewhere.isPresent()) {
                            calibratedSeen.add(key);
                            System.err.println("scaledl: note: " + InvalidInputException.printable(
                                    candidates.toString(), 200) + ": " + elsewhere.get().message());
                        }
                    }
                    CsvTable t = c.table();
                    for (int r = 0; r < t.size(); r++) {
                        String error = c.errors().get(r).orElse(refused[r]);
                        if (error != null) {
                            counts[2]++;
                            w.write(jsonl ? errorJsonLine(om, t, r, cols, renamed, error)
                                    : errorCsvLine(t, r, cols, error));
                        } else {
                            measured.add(t, r, scored[r]);
                            String line = jsonl ? jsonLine(om, t, r, cols, renamed, scored[r], keepGoing)
                                    : csvLine(t, r, cols, scored[r]);
                            // the error column stays empty
                            w.write(keepGoing && !jsonl ? line.substring(0, line.length() - 1) + ",\n" : line);
                        }
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
        if (counts[0] == 0) {
            // said even with -q: an empty result is more often a table cut short than one meant empty
            System.err.println("scaledl: warning: " + InvalidInputException.printable(candidates.toString(), 200)
                    + " has no rows under its header: nothing was predicted");
        }
        if (counts[2] > 0) {
            // said even with -q: rows without a prediction are a result the user must see
            System.err.printf(Locale.ROOT, "scaledl: warning: %d of %d candidates not predicted (--keep-going): "
                    + "their reasons are in the %s column%n", counts[2], counts[0], ERROR_COLUMN);
        }
        measured.say(InvalidInputException.printable(candidates.toString(), 200));
        double seconds = nanos[0] / 1e9;
        if (!Main.quiet) {
            long scored = counts[0] - counts[2];
            System.err.printf(Locale.ROOT, "scored %d candidate%s over %d graph%s in %.3f s (%.0f / s)%n", scored,
                    scored == 1 ? "" : "s", counts[1], counts[1] == 1 ? "" : "s", seconds,
                    scored / Math.max(seconds, 1e-9));
        }
        if (counts[0] > 0 && counts[2] == counts[0]) {
            // the table is written, with every row's reason; but nothing was predicted: bad input (exit 1 whatever
            // the rows' reasons; each is in its row)
            System.err.println("scaledl: error: none of the " + counts[0] + " candidates could be predicted (the "
                    + ERROR_COLUMN + " column says why for each)");
            return Main.BAD_INPUT;
        }
        return 0;
    }

    /**
     * The candidates' predictions, on every core (the predictor is thread-safe, and a prediction does not depend
     * on the order or the thread asking: {@link RuntimePredictor#predictScored}); a row the model refuses is
     * reported at its line, the first such row of the chunk whatever the threads did; with {@code keepGoing} every
     * refusal is left in {@code refused} at its row (its file, line and reason) and the row's prediction is null. A
     * row without a workload (read with an error) is skipped; without {@code keepGoing} the first bad row in the
     * table's order, read or refused, is thrown.
     */
    private static Prediction[] score(RuntimePredictor p, Candidates.EachRow c, boolean keepGoing,
            String[] refused) {
        List<Optional<Workload>> ws = c.workloads();
        Prediction[] scored = new Prediction[ws.size()];
        java.util.stream.IntStream.range(0, ws.size()).parallel().forEach(i -> {
            if (ws.get(i).isEmpty()) {
                return;
            }
            Workload w = ws.get(i).get();
            if (!p.modelsClusters() && w.precision() != org.scaledl.workload.Precision.FP32) {
                // as --precision is refused for such a model: a CPU machine's time would be its FP32 time
                refused[i] = "precision " + w.precision().label() + " applies to GPU models; this model predicts CPU "
                        + "machines, which run FP32";
                return;
            }
            java.util.Optional<String> threads = JobOptions.gpuThreads(p, w.threads());
            if (threads.isPresent()) {
                // as --threads is refused for such a model
                refused[i] = "threads " + w.threads() + ": " + threads.get() + " (leave the column out)";
                return;
            }
            try {
                scored[i] = p.predictScored(w);
            } catch (IllegalArgumentException e) {
                refused[i] = e.getMessage();
            }
        });
        for (int i = 0; i < refused.length; i++) {
            if (!keepGoing && c.errors().get(i).isPresent()) {
                // the first bad row in the table's order, whether its cells or its job are what is wrong
                throw InvalidInputException.of(c.errors().get(i).get());
            }
            if (refused[i] != null) {
                InvalidInputException atLine = InvalidInputException.atLine(c.table().source(), c.table().line(i),
                        refused[i]);
                if (!keepGoing) {
                    throw atLine;
                }
                refused[i] = atLine.getMessage();
            }
        }
        return scored;
    }

    /** The row as it came, no prediction, and why. */
    private static String errorCsvLine(CsvTable t, int r, List<String> cols, String error) {
        StringBuilder sb = new StringBuilder();
        for (String c : cols) {
            sb.append(CsvTable.cell(t.get(r, c))).append(',');
        }
        sb.append(",".repeat(OUTPUT_COLUMNS.size() - 1)).append(',');
        return sb.append(CsvTable.cell(error)).append('\n').toString();
    }

    private static String errorJsonLine(ObjectMapper om, CsvTable t, int r, List<String> cols,
            Map<String, String> renamed, String error) throws IOException {
        ObjectNode o = om.createObjectNode();
        for (String c : cols) {
            cell(o, renamed.getOrDefault(c, c), c, t.get(r, c));
        }
        for (String c : OUTPUT_COLUMNS) {
            if (c.equals("warnings")) {
                o.putArray(c);
            } else {
                o.putNull(c);
            }
        }
        o.put(ERROR_COLUMN, error);
        return Reports.compact(o) + "\n";
    }

    /**
     * The output columns a job runs table holds measured: of a table not scored before
     * ({@link org.scaledl.io.JobRuns#scored}).
     */
    static final List<String> MEASURED_OUTPUT_COLUMNS = List.of("tokens_per_s_per_gpu", "model_tflops_per_gpu");

    /**
     * Refuses a table not scored before ({@link org.scaledl.io.JobRuns#scored}) whose own columns the output would
     * drop: a measured rate beside a {@code measured_} column of the same rate (the rate is carried through as that
     * column), and, with {@code --keep-going}, a column {@code error} (which holds the reasons rows were not
     * predicted).
     */
    private void refuseCollidingColumns(List<String> columns) {
        if (org.scaledl.io.JobRuns.scored(columns)) {
            return;
        }
        for (String c : MEASURED_OUTPUT_COLUMNS) {
            String measured = org.scaledl.io.JobRuns.MEASURED_PREFIX + c;
            if (columns.contains(c) && columns.contains(measured)) {
                throw org.scaledl.InvalidInputException.inSource(candidates.toString(), "it has both " + c + " and "
                        + measured + ": a table's measured " + c + " is written as " + measured + ", so one of them "
                        + "would be lost (keep one)");
            }
        }
        if (keepGoing && columns.contains(ERROR_COLUMN)) {
            throw org.scaledl.InvalidInputException.inSource(candidates.toString(), "it has a column '" + ERROR_COLUMN
                    + "', which --keep-going writes with the reasons rows were not predicted: rename it");
        }
    }

    /**
     * The input columns carried through under another name, as {@code measured_<name>}: a table of runs measured in
     * tokens a second or model TFLOP/s, whose values the predictions of those names would otherwise replace (in a
     * table scored before, with predicted_ms, low_ms and high_ms, they are predictions and are replaced).
     */
    static Map<String, String> measuredRenamed(List<String> columns) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        if (!org.scaledl.io.JobRuns.scored(columns)) {
            for (String c : MEASURED_OUTPUT_COLUMNS) {
                String measured = org.scaledl.io.JobRuns.MEASURED_PREFIX + c;
                if (columns.contains(c) && !columns.contains(measured)) {
                    out.put(c, measured);
                }
            }
        }
        return out;
    }

    private static String csvLine(CsvTable t, int r, List<String> cols, Prediction pr) {
        StringBuilder sb = new StringBuilder();
        for (String c : cols) {
            sb.append(CsvTable.cell(t.get(r, c))).append(',');
        }
        sb.append(String.format(Locale.ROOT, "%.4f,%.4f,%.4f,", pr.millis(), pr.lowMillis(), pr.highMillis()));
        if (pr.memoryGb().isPresent()) {
            sb.append(String.format(Locale.ROOT, "%.3f", pr.memoryGb().getAsDouble()));
        }
        sb.append(',');
        pr.tokensPerSecondPerGpu().ifPresent(x -> sb.append(String.format(Locale.ROOT, "%.1f", x)));
        sb.append(',');
        pr.modelTflopsPerGpu().ifPresent(x -> sb.append(String.format(Locale.ROOT, "%.1f", x)));
        sb.append(',');
        List<String> kinds = pr.warnings().stream().map(x -> x.kind().name().toLowerCase(Locale.ROOT)).distinct()
                .toList();
        return sb.append(String.join(";", kinds)).append('\n').toString();
    }

    private static final java.util.regex.Pattern JSON_NUMBER = java.util.regex.Pattern.compile(
            "-?(0|[1-9][0-9]{0,17})(\\.[0-9]+)?([eE][+-]?[0-9]{1,3})?");

    /**
     * A table cell on a JSON line: a number or a boolean where the column is read as one and the cell says one
     * exactly (as the reader took it), else the text as it is (an id of {@code 007} stays text).
     */
    private static void cell(ObjectNode o, String key, String column, String value) {
        String v = value.strip();
        Candidates.ColumnKind kind = Candidates.kind(column).orElse(Candidates.ColumnKind.TEXT);
        if (kind == Candidates.ColumnKind.NUMBER && JSON_NUMBER.matcher(v).matches()) {
            o.set(key, o.numberNode(new java.math.BigDecimal(v)));
        } else if (kind == Candidates.ColumnKind.BOOLEAN && (v.equalsIgnoreCase("true")
                || v.equalsIgnoreCase("false"))) {
            o.put(key, Boolean.parseBoolean(v.toLowerCase(Locale.ROOT)));
        } else {
            o.put(key, value);
        }
    }

    private static String jsonLine(ObjectMapper om, CsvTable t, int r, List<String> cols, Map<String, String> renamed,
            Prediction pr, boolean withError) throws IOException {
        ObjectNode o = om.createObjectNode();
        for (String c : cols) {
            cell(o, renamed.getOrDefault(c, c), c, t.get(r, c));
        }
        o.put("predicted_ms", pr.millis());
        o.put("low_ms", pr.lowMillis());
        o.put("high_ms", pr.highMillis());
        if (pr.memoryGb().isPresent()) {
            o.put("memory_gb", pr.memoryGb().getAsDouble());
        } else {
            o.putNull("memory_gb");
        }
        putOptional(o, "tokens_per_s_per_gpu", pr.tokensPerSecondPerGpu());
        putOptional(o, "model_tflops_per_gpu", pr.modelTflopsPerGpu());
        warnings(o.putArray("warnings"), pr);
        if (withError) {
            o.putNull(ERROR_COLUMN);
        }
        return Reports.compact(o) + "\n";
    }
}
