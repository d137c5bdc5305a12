package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.LayoutSearch;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code scaledl layouts --model gpu --transformer config.json --seq 2048 --gpus 512 --global-batch 1536
 * --device "NVIDIA A100-SXM4-80GB" --precision fp16}: every valid 3D-parallel layout of a training job, fastest
 * first.
 */
@Command(name = "layouts", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Rank every valid layout of a transformer's training on a number of GPUs (tensor x context x "
                + "pipeline x data parallel, expert parallelism, micro-batch, sequence parallelism, ZeRO, "
                + "interleaving; each with the least recomputation that fits) by predicted iteration time; layouts "
                + "that do not fit the GPU's memory are listed last. The best ones are shown with their interval and "
                + "warnings, and the predict commands that reproduce the first three.")
final class LayoutsCommand implements Callable<Integer> {
    @Option(names = "--model", defaultValue = "gpu", description = "Device model: a bundled name or a saved file "
            + "(default gpu)")
    String model;

    @Option(names = "--transformer", required = true, description = "Hugging Face config.json of the model, or its folder holding one")
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

    @Option(names = "--tensor", split = ",", paramLabel = "T", description = "Only layouts of these tensor-parallel "
            + "degrees (e.g. 1,2,4: what your software or NVLink allows; default every degree the search takes)")
    List<Integer> tensors;

    @Option(names = "--pipeline", split = ",", paramLabel = "P", description = "Only layouts of these pipeline "
            + "depths (default every depth the search takes)")
    List<Integer> pipelines;

    @Option(names = "--train-tokens", converter = TrainTokens.Converter.class, description = "Tokens to train on "
            + "(15e12, or 15T): each layout's days (with the 90%% interval) and GPU-hours at its step, uninterrupted "
            + "(a days column; JSON train, as predict --train-tokens)")
    Double trainTokens;

    @Option(names = "--rank-by", defaultValue = "ms", paramLabel = "ms|high", description = "Rank the layouts that "
            + "fit by their predicted step (ms, default) or by their 90%% interval's high end (high: a step each is "
            + "likely no slower than; a layout unlike the runs the model was fitted on has a wider interval)")
    String rankBy;

    @Option(names = "--top", defaultValue = "20", description = "Layouts to print (default 20)")
    int top;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Option(names = "--out", description = "Write every layout as a candidate table (.csv) that predict --candidates "
            + "scores back to the same times and memory")
    Path out;

    @Mixin
    ClusterOptions cluster;

    /**
     * Hidden: a training search only; an inference phase is refused saying how to rank inference layouts (a serving
     * planner's first try was {@code --phase infer}).
     */
    @Option(names = "--phase", hidden = true)
    org.scaledl.workload.Phase phase;

    /**
     * The options of a job's layout that layouts chooses itself for every layout it ranks: refused here, left out of
     * its help (the {@code predict} commands it prints take them).
     */
    static final List<String> CHOSEN = List.of("--expert-tensor", "--virtual-stages", "--recompute",
            "--recompute-layers", "--recompute-modules", "--offload-layers",
            "--sequence-parallel", "--uneven-pipeline");

    /**
     * The options left out of its help: those it chooses, and {@code --memory-format} (an imported graph's, refused
     * for the transformers layouts searches).
     */
    static final List<String> HIDDEN = java.util.stream.Stream.concat(CHOSEN.stream(), java.util.stream.Stream.of(
            "--memory-format")).toList();

    /**
     * The shared options that {@code layouts} reads as a constraint on the ranking, not as one job's setting, with
     * their help here (predict's help says what the degree does).
     */
    static final java.util.Map<String, String> FILTERS = java.util.Map.of(
            "--context", "Only layouts of this context-parallel degree (e.g. 1: software without context "
                    + "parallelism; default every degree the search takes)",
            "--expert", "Only layouts of this expert-parallel degree (mixtures of experts; default every degree the "
                    + "search takes)");

    /** How many of the best layouts the text prints as {@code predict} commands. */
    static final int COMMANDS = 3;

    @Override
    public Integer call() throws Exception {
        if (top < 1) {
            throw new IllegalArgumentException("--top must be positive, got " + top);
        }
        if (gpus < 1 || globalBatch < 1) {
            throw new IllegalArgumentException("--gpus and --global-batch must be positive, got " + gpus + " and "
                    + globalBatch);
        }
        if (phase == org.scaledl.workload.Phase.INFER) {
            throw new IllegalArgumentException("--phase: an inference phase was given, and layouts searches training "
                    + "layouts only; rank inference "
                    + "layouts by writing them as a candidate table and scoring it with predict --candidates "
                    + "(phase infer in each row, or --phase infer)");
        }
        List<String> chosen = cluster.layoutChoices();
        if (!chosen.isEmpty()) {
            throw new IllegalArgumentException(String.join(", ", chosen) + ": layouts chooses "
                    + (chosen.size() == 1 ? "it" : "them") + " for every layout it ranks; score one layout with "
                    + "predict (the command layouts prints takes them)");
        }
        if (cluster.memoryFormat != null) {
            throw new IllegalArgumentException("--memory-format lays out an imported graph's convolutions; layouts "
                    + "searches a transformer's, which has none");
        }
        if (out != null) {
            org.scaledl.model.file.SafeFiles.checkWritable(out);
            Reports.requireExtension(out, "the layouts' table", ".csv");
            Reports.notAnInput(out, "--transformer", transformer);
            Reports.notAnInput(out, "--devices", devices);
        }
        if (!rankBy.equals("ms") && !rankBy.equals("high")) {
            throw new IllegalArgumentException("--rank-by " + org.scaledl.InvalidInputException.printable(rankBy, 40)
                    + ": ms (the predicted step) or high (the 90% interval's high end)");
        }
        boolean byHigh = rankBy.equals("high");
        RuntimePredictor p = ModelArgument.load(model);
        if (!p.modelsClusters()) {
            throw new IllegalArgumentException("--model " + model + " is a host (CPU) model; layouts are searched "
                    + "with a device model such as the bundled gpu");
        }
        // a degree listed twice is one degree (echoed once)
        List<Constraint> constraints = java.util.stream.Stream.of(
                new Constraint("--tensor", "tensor", tensors, Parallelism::tensor),
                new Constraint("--context", "context", cluster.context == null ? null : List.of(cluster.context),
                        Parallelism::context),
                new Constraint("--pipeline", "pipeline", pipelines, Parallelism::pipeline),
                new Constraint("--expert", "expert", cluster.expert == null ? null : List.of(cluster.expert),
                        Parallelism::expert)).filter(c -> c.degrees() != null)
                .map(c -> new Constraint(c.option(), c.noun(), c.degrees().stream().distinct().toList(), c.degree()))
                .toList();
        for (Constraint c : constraints) {
            if (c.degrees().stream().anyMatch(x -> x < 1)) {
                // a usage error, as predict's --tensor 0 is
                throw new IllegalArgumentException(c.option() + " " + c.degrees().stream().filter(x -> x < 1)
                        .findFirst().orElseThrow() + ": a degree is a positive whole number (1: none)");
            }
        }
        DeviceCatalog catalog = Catalogs.of(devices);
        Device d = catalog.require(device);
        Catalogs.sayAlsoFitting(catalog, "--device", device, d);
        TransformerSpec spec = HuggingFaceConfig.read(transformer);
        java.util.Optional<Topology> given = cluster.topology(d);
        Topology topo = given.orElse(Topology.assumedFor(d));
        org.scaledl.workload.Precision precision = cluster.precision == null ? org.scaledl.workload.Precision.FP16
                : cluster.precision();
        long t0 = System.nanoTime();
        org.scaledl.graph.ModelGraph graph = spec.graph(seq);
        LayoutSearch search = new LayoutSearch(p, graph, d, gpus, globalBatch).topology(topo)
                .precision(precision).lora(cluster.loraRank()).expertImbalance(cluster.expertImbalance())
                .documentTokens(cluster.documentTokens());
        cluster.stateSchedule(search);
        if (cluster.zeroStage != null) {
            // the one stage the caller's software runs
            search.zeroStage(cluster.zeroStage());
        }
        cluster.sixteenBitGradients().ifPresent(search::sixteenBitGradients);
        try {
            search.check();
        } catch (IllegalArgumentException e) {
            // settings that do not go together (16-bit gradients in FP32, a precision the GPU has no units for): bad
            // input, as from predict
            throw org.scaledl.InvalidInputException.of(e.getMessage());
        }
        List<LayoutSearch.Layout> all = search.search();
        // a global batch that leaves few replicas: the layouts it allows are few, and slow, for a reason not theirs
        // (a search without a layout says why instead)
        java.util.Optional<String> batchLimit = all.isEmpty() ? java.util.Optional.empty()
                : search.batchLimit().map(b -> b.describe(gpus, globalBatch));
        batchLimit.ifPresent(n -> System.err.println("scaledl: note: " + n));
        double seconds = (System.nanoTime() - t0) / 1e9;
        int searched = all.size();
        if (!constraints.isEmpty()) {
            // the caller's constraints, applied to the ranking (the search's own choices stay the same)
            List<LayoutSearch.Layout> kept = all.stream().filter(l -> constraints.stream().allMatch(c -> c.keeps(l)))
                    .toList();
            if (kept.isEmpty() && !all.isEmpty()) {
                List<LayoutSearch.Layout> searchedLayouts = all;
                throw new IllegalArgumentException("none of the " + all.size() + " layouts has " + constraints.stream()
                        .map(c -> c.option() + " " + c.degrees())
                        .collect(java.util.stream.Collectors.joining(" and ")) + ": the search's "
                        + constraints.stream().map(c -> c.noun() + (c.noun().equals("pipeline") ? " depths are "
                                : " degrees are ")
                                + c.searched(searchedLayouts) + c.why(graph)).collect(
                                java.util.stream.Collectors.joining(", ")) + (cluster.zeroStage == null
                        ? "" : " (of ZeRO stage " + cluster.zeroStage + (cluster.zeroStage == 3 ? ", which has no layout "
                        + "with a pipeline" : "") + ", and one replica's layouts at stage 0)"));
            }
            // ranked again: where none of the kept fits though some of the search did, by memory
            all = LayoutSearch.ranked(kept);
        }
        if (byHigh) {
            all = byHighEnd(p, all);
        }
        if (cluster.zeroStage != null && cluster.zeroStage > 0 && !all.isEmpty()
                && all.stream().noneMatch(l -> l.parallelism().zeroStage() == cluster.zeroStage)) {
            System.err.println("scaledl: warning: no layout of ZeRO stage " + cluster.zeroStage + " is left"
                    + (cluster.zeroStage == 3 ? " (stage 3 has none with a pipeline)" : "") + ": those ranked are one "
                    + "data-parallel replica's, at stage 0");
        }
        if (all.isEmpty()) {
            throw new IllegalArgumentException(search.whyNoLayout());
        }
        if (all.stream().noneMatch(LayoutSearch.Layout::fits)) {
            // ranked anyway (how far each is from fitting helps), but a first place that cannot run must be said
            double least = all.stream().mapToDouble(LayoutSearch.Layout::memoryGb).min().orElse(0);
            System.err.println(String.format(Locale.ROOT, "scaledl: warning: none of the %d layouts fits the "
                    + "%.1f GiB of %s: the least needs %.1f GiB a GPU (more GPUs, a GPU with more memory, or a smaller "
                    + "global batch or sequence); ranked by memory, the least first", all.size(), d.memoryGB(),
                    d.name(), least));
        }
        List<LayoutSearch.Layout> shown = all.subList(0, Math.min(top, all.size()));
        // where the first layouts fill the GPU's memory to its edge, the best that leaves the margin free (a run that
        // close may not fit: the estimate leaves out the allocator's fragmentation and the framework's own buffers)
        int withRoom = -1;
        if (!all.isEmpty() && all.get(0).nearMemoryLimit()) {
            // the best at the memory's edge: the fastest that leaves the margin free, said beside it
            withRoom = LayoutSearch.bestWithMemoryFree(all).map(all::indexOf).orElse(-1);
        }
        List<Prediction> predictions = shown.stream().map(l -> p.predict(l.workload())).toList();
        // a calibration on other GPUs moved every layout alike: said once
        java.util.Optional<org.scaledl.model.PredictionWarning> elsewhere = predictions.stream()
                .flatMap(pr -> pr.warnings().stream()).filter(x -> x.kind()
                        == org.scaledl.model.PredictionWarning.Kind.CALIBRATED_ELSEWHERE).findFirst();
        elsewhere.ifPresent(x -> System.err.println(PredictCommand.stderrLine(x)));
        java.util.Optional<Path> copied = out == null ? java.util.Optional.empty()
                : writeCandidates(all, d, given, precision);
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("model", spec.name());
            root.put("parameters", spec.parameterCount());
            root.put("gpus", gpus);
            root.put("global_batch", globalBatch);
            root.put("rank_by", rankBy);
            if (trainTokens != null) {
                root.put("train_tokens", trainTokens);
            }
            if (cluster.zeroStage != null) {
                root.put("zero_stage", cluster.zeroStage);
            }
            root.put("device", d.name());
            root.put("precision", precision.label());
            root.put("topology", topo.describe());
            // (partly given, the rest the standard system's: assumed too)
            root.put("topology_assumed", topo.assumed());
            copied.ifPresent(c -> root.put("configuration_copy", c.toString()));
            root.put("layouts", all.size());
            root.put("layouts_searched", searched);
            root.put("layouts_that_fit", all.stream().filter(LayoutSearch.Layout::fits).count());
            root.put("search_seconds", seconds);
            // what every layout's prediction says alike, said once (stderr says it too)
            ArrayNode said = root.putArray("warnings");
            elsewhere.ifPresent(x -> PredictCommand.said(said, x));
            batchLimit.ifPresent(n -> said.addObject().put("kind", "note").put("message", n));
            ArrayNode arr = root.putArray("ranked");
            for (int i = 0; i < shown.size(); i++) {
                LayoutSearch.Layout l = shown.get(i);
                Prediction pr = predictions.get(i);
                ObjectNode o = arr.addObject();
                o.put("tensor", l.parallelism().tensor());
                o.put("context", l.parallelism().context());
                o.put("pipeline", l.parallelism().pipeline());
                o.put("data_parallel", l.parallelism().data());
                o.put("expert", l.parallelism().expert());
                o.put("micro_batch", l.microBatch());
                o.put("micro_batches", l.parallelism().microBatches());
                o.put("virtual_stages", l.parallelism().virtualStages());
                o.put("sequence_parallel", l.parallelism().sequenceParallel());
                o.put("zero_stage", l.parallelism().zeroStage());
                o.put("recompute", l.recompute().label());
                o.put("recompute_layers", l.recomputeLayers());
                o.put("recompute_modules", modules(l));
                o.put("offload_layers", l.workload().offloadLayers());
                o.put("moe_a2a_overlap", l.workload().expertCommOverlap());
                o.put("moe_dispatcher", l.parallelism().expert() > 1 ? l.workload().moeDispatcher().label() : null);
                o.put("cuda_graphs", l.workload().cudaGraphs().label());
                o.put("ms", l.millis());
                o.put("low_ms", pr.lowMillis());
                o.put("high_ms", pr.highMillis());
                o.put("sequences_per_s", l.sequencesPerSecond(globalBatch));
                pr.tokensPerSecondPerGpu().ifPresent(x -> o.put("tokens_per_s_per_gpu", x));
                pr.modelTflopsPerGpu().ifPresent(x -> o.put("model_tflops_per_gpu", x));
                o.put("memory_gb", l.memoryGb());
                o.put("fits", l.fits());
                TrainTokens.of(trainTokens, l.workload(), pr).ifPresent(t -> TrainTokens.put(t, o.putObject("train")));
                ArrayNode ws = o.putArray("warnings");
                List<String> sensitive = sensitivities(pr);
                warnings(pr, l, d).stream().filter(x -> !sensitive.contains(x)).forEach(ws::add);
                // what each assumed schedule is worth to this layout, apart from the warnings' kinds
                ArrayNode ss = o.putArray("sensitivities");
                sensitive.forEach(ss::add);
                o.put("predict", command(l, d, given, precision));
            }
            if (withRoom >= 0) {
                LayoutSearch.Layout l = all.get(withRoom);
                root.putObject("best_with_memory_free").put("rank", withRoom + 1).put("ms", l.millis())
                        .put("memory_gb", l.memoryGb()).put("predict", command(l, d, given, precision));
            }
            Reports.printJson(root);
            return 0;
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%s (%.2fB parameters) on %d x %s, global "
                + "batch %d, in %s, %s%s:%n", org.scaledl.InvalidInputException.escaped(spec.name()),
                spec.parameterCount() / 1e9, gpus, d.name(), globalBatch,
                precision.label() + (cluster.precision == null ? " (not given, assumed)" : "")
                        + (cluster.zeroStage == null ? "" : ", ZeRO stage " + cluster.zeroStage + " only"
                        // (the distributed optimizer's settings keep one replica's layouts at the stage too)
                        + (cluster.fp8ParamGather || cluster.gradReduce().filter(g -> g
                                == org.scaledl.workload.GradReduce.GATHER_AFTER_STEP).isPresent() ? ""
                                : " (one replica's layouts at 0)")),
                topo.describe(),
                given.isEmpty() ? " (the standard system, assumed: give --gpus-per-node and "
                        + "--inter-node-gbps, and --nvlink-domain where NVLink joins nodes)"
                        : topo.assumed() ? " (partly given, the rest the standard system's: "
                        + "give --gpus-per-node and --inter-node-gbps both)" : ""));
        if (byHigh) {
            b.append("ranked by the 90% interval's high end (--rank-by high), the layouts that fit first\n");
        }
        if (trainTokens != null) {
            b.append(String.format(Locale.ROOT, "days: %,.0f tokens' training at each layout's step, uninterrupted (no "
                    + "restarts, checkpoints or failures; the interval's days in --json's train)%n", trainTokens));
        }
        b.append(String.format(Locale.ROOT, "%4s %3s %3s %3s %4s %3s %5s %6s %3s %3s %4s %-14s %10s %21s %9s %8s%s  %s%n",
                "rank", "tp", "cp", "pp", "dp", "ep", "micro", "micros", "v", "sp", "zero", "recompute", "ms",
                "90% interval ms", "tok/s/GPU", "mem GiB", trainTokens == null ? "" : String.format(Locale.ROOT,
                        " %7s", "days"), "warnings"));
        for (int i = 0; i < shown.size(); i++) {
            LayoutSearch.Layout l = shown.get(i);
            Prediction pr = predictions.get(i);
            Parallelism par = l.parallelism();
            String days = trainTokens == null ? "" : String.format(Locale.ROOT, " %7s", TrainTokens.of(trainTokens,
                    l.workload(), pr).map(t -> String.format(Locale.ROOT, "%.1f", t.days())).orElse("-"));
            b.append(String.format(Locale.ROOT, "%4d %3d %3d %3d %4d %3d %5d %6d %3d %3s %4d %-14s %10.1f %21s %9s "
                    + "%8.1f%s  %s%n", i + 1, par.tensor(), par.context(), par.pipeline(), par.data(), par.expert(),
                    l.microBatch(), par.microBatches(), par.virtualStages(), par.sequenceParallel() ? "y" : "n",
                    par.zeroStage(), recompute(l), l.millis(), String.format(Locale.ROOT, "%.1f-%.1f",
                    pr.lowMillis(), pr.highMillis()), pr.tokensPerSecondPerGpu().isPresent()
                    ? String.format(Locale.ROOT, "%.0f", pr.tokensPerSecondPerGpu().getAsDouble()) : "-",
                    l.memoryGb(), days, String.join(", ", warnings(pr, l, d))));
        }
        b.append(String.format(Locale.ROOT, "%d layouts (%d fit) searched in %.2f s%s%n", all.size(),
                all.stream().filter(LayoutSearch.Layout::fits).count(), seconds, searched == all.size() ? ""
                        : String.format(Locale.ROOT, " (of %d, those of %s)", searched, constraints.stream()
                                .map(c -> c.noun() + " " + c.degrees()).collect(java.util.stream.Collectors
                                        .joining(" and ")))));
        if (withRoom >= 0) {
            LayoutSearch.Layout l = all.get(withRoom);
            b.append(String.format(Locale.ROOT, "the first fills %.1f of %.1f GiB; the best leaving %.0f %% of the "
                    + "memory free (a run this close may not fit) is rank %d: %.1f ms (%+.1f %%), %.1f GiB:%n  %s%n",
                    all.get(0).memoryGb(), d.memoryGB(), 100 * org.scaledl.model.RuntimePredictor.MEMORY_EDGE,
                    withRoom + 1, l.millis(), 100 * (l.millis() / all.get(0).millis() - 1), l.memoryGb(),
                    command(l, d, given, precision)));
        }
        int commands = Math.min(COMMANDS, shown.size());
        if (commands > 0) {
            b.append(commands == 1 ? "the first, predicted on its own (same time and memory):"
                    : "the first " + commands + ", each predicted on its own (same time and memory):");
            for (int i = 0; i < commands; i++) {
                b.append("\n  ").append(command(shown.get(i), d, given, precision));
            }
            if (out != null) {
                b.append("\nevery layout as a candidate table: ").append(out).append(" (predict --model ")
                        .append(model).append(" --candidates ").append(out).append(" scores it back")
                        .append(copied.map(c -> "; the configuration it names copied beside it: " + c).orElse(""))
                        .append(')');
            }
        }
        System.out.println(b);
        return 0;
    }

    /**
     * The layouts that fit ranked by their 90 % interval's high end, the fastest end first (ties by the predicted
     * step, then in the search's order), then those that do not fit as the search ranked them: each layout predicted
     * in full, in parallel (the predictor is thread-safe; its predictions do not depend on the thread).
     */
    static List<LayoutSearch.Layout> byHighEnd(RuntimePredictor p, List<LayoutSearch.Layout> ranked) {
        List<LayoutSearch.Layout> fit = ranked.stream().filter(LayoutSearch.Layout::fits).toList();
        double[] high = fit.parallelStream().mapToDouble(l -> p.predict(l.workload()).highMillis()).toArray();
        Integer[] order = new Integer[fit.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, (a, b) -> high[a] != high[b] ? Double.compare(high[a], high[b])
                : Double.compare(fit.get(a).millis(), fit.get(b).millis()) != 0 ? Double.compare(fit.get(a).millis(),
                        fit.get(b).millis()) : Integer.compare(a, b));
        List<LayoutSearch.Layout> out = new ArrayList<>(ranked.size());
        for (Integer i : order) {
            out.add(fit.get(i));
        }
        ranked.stream().filter(l -> !l.fits()).forEach(out::add);
        return List.copyOf(out);
    }

    /**
     * The modules a layout recomputes selectively, as a table's {@code recompute_modules} cell ({@code core_attn},
     * {@code moe_act+layernorm+mla_up_proj}); empty where it does not recompute selectively.
     */
    private static String modules(LayoutSearch.Layout l) {
        return l.recompute() == org.scaledl.workload.Recompute.SELECTIVE
                ? org.scaledl.workload.RecomputeModule.label(l.workload().recomputeModules()) : "";
    }

    /** A layout's recomputation as a short label ({@link JobOptions#recomputeLabel}). */
    private static String recompute(LayoutSearch.Layout l) {
        return JobOptions.recomputeLabel(l.workload());
    }

    /**
     * The kinds of note a layout's warnings leave out: what its prediction assumed (every layout shares the topology),
     * chose (the recomputation is its column), found unusual (a configuration's context or an NVLink domain every
     * layout shares) or noted, and a calibration on other GPUs (said once); {@code predict} of a layout says them.
     */
    private static final java.util.Set<org.scaledl.model.PredictionWarning.Kind> NOT_LISTED = java.util.EnumSet.of(
            org.scaledl.model.PredictionWarning.Kind.ASSUMED, org.scaledl.model.PredictionWarning.Kind.CHOSEN,
            org.scaledl.model.PredictionWarning.Kind.UNUSUAL_JOB, org.scaledl.model.PredictionWarning.Kind.NOTE,
            org.scaledl.model.PredictionWarning.Kind.CALIBRATED_ELSEWHERE);

    /**
     * The kinds of a prediction's warnings, except its notes ({@link #NOT_LISTED}), and {@code near_memory_limit} where
     * the layout fills the GPU to within {@link RuntimePredictor#MEMORY_EDGE} of its memory (its own prediction, with
     * the recomputation fixed, says it in a note: a memory estimate a few percent off may not fit), and what an
     * assumed schedule is worth to it ({@link #sensitivities}).
     */
    private static List<String> warnings(Prediction pr, LayoutSearch.Layout l, Device d) {
        java.util.stream.Stream<String> edge = l.nearMemoryLimit() ? java.util.stream.Stream.of("near_memory_limit")
                : java.util.stream.Stream.empty();
        return java.util.stream.Stream.of(pr.warnings().stream()
                .filter(w -> !NOT_LISTED.contains(w.kind()))
                .map(w -> w.kind().name().toLowerCase(Locale.ROOT)), edge, sensitivities(pr).stream())
                .flatMap(x -> x).distinct().toList();
    }

    /** How far a schedule the prediction assumed must move a layout's step for its row to say so: 10 %. */
    static final double SENSITIVE = 0.10;

    /**
     * The schedule notes' own form: {@code (+44.5 %: give --grad-reduce after-backward)}, the step under the other
     * choice of a schedule the prediction assumed; or, for an assumption no option states, {@code (+65.8 %: if the
     * sends are exposed)}.
     */
    private static final java.util.regex.Pattern OTHER_SCHEDULE = java.util.regex.Pattern.compile(
            "\\(([+-]?[0-9]+(?:\\.[0-9]+)?) %: (?:give (--[a-z0-9-]+(?: [a-z0-9-]+)?)|if ([a-z' ]+))\\)");

    /**
     * The schedules a layout's prediction assumed that move its step by {@link #SENSITIVE} or more under their other
     * choice, as {@code if --grad-reduce after-backward: +44.5%}: layouts of one job share the assumption but not what
     * it is worth (a ZeRO-3 layout's gradient reduction is most of its traffic).
     */
    static List<String> sensitivities(Prediction pr) {
        List<String> out = new ArrayList<>();
        for (org.scaledl.model.PredictionWarning w : pr.warnings()) {
            if (w.kind() != org.scaledl.model.PredictionWarning.Kind.ASSUMED) {
                continue;
            }
            java.util.regex.Matcher m = OTHER_SCHEDULE.matcher(w.message());
            if (m.find() && Math.abs(Double.parseDouble(m.group(1))) >= 100 * SENSITIVE) {
                out.add(String.format(Locale.ROOT, "if %s: %+.1f%%", m.group(2) != null ? m.group(2) : m.group(3),
                        Double.parseDouble(m.group(1))));
            }
        }
        return out;
    }

    /** A schedule choice's cell: its value where the job states it, empty (the default, assumed) otherwise. */
    private static String stated(Workload w, Workload.ScheduleChoice choice, String value) {
        return w.states(choice) ? value : "";
    }

    /**
     * The {@code --expert-tensor} a layout's predict command states: where it differs from predict's default for the
     * layout ({@link Parallelism#defaultExpertTensor}), else nothing.
     */
    static String expertTensorOption(Parallelism par, org.scaledl.graph.ModelGraph graph) {
        return par.expertTensor() != Parallelism.defaultExpertTensor(par.tensor(), par.expert(), graph)
                ? " --expert-tensor " + par.expertTensor() : "";
    }

    /** The predict command that reproduces a layout. */
    private String command(LayoutSearch.Layout l, Device d, java.util.Optional<Topology> given,
            org.scaledl.workload.Precision precision) {
        Parallelism par = l.parallelism();
        // as a shell runs it: the jar this command runs from
        StringBuilder c = new StringBuilder("java -jar ").append(quote(JobOptions.jar())).append(" predict --model ")
                .append(quote(model))
                .append(" --transformer ").append(quote(transformer.toString())).append(" --seq ").append(seq)
                .append(" --batch ").append(l.microBatch()).append(" --micro-batches ").append(par.microBatches())
                .append(" --data-parallel ").append(par.data()).append(" --tensor ").append(par.tensor())
                .append(" --pipeline ").append(par.pipeline());
        if (par.context() > 1) {
            c.append(" --context ").append(par.context());
        }
        if (par.expert() > 1) {
            c.append(" --expert ").append(par.expert());
        }
        c.append(expertTensorOption(par, l.workload().graph()));
        if (par.virtualStages() > 1) {
            c.append(" --virtual-stages ").append(par.virtualStages());
        }
        if (par.zeroStage() > 0) {
            c.append(" --zero-stage ").append(par.zeroStage());
        }
        if (par.sequenceParallel()) {
            c.append(" --sequence-parallel");
        }
        c.append(" --recompute ").append(l.recompute().label());
        if (l.recompute() == org.scaledl.workload.Recompute.SELECTIVE) {
            // the modules the search chose (with the all-to-all overlap, more than the attention core's)
            c.append(" --recompute-modules ").append(modules(l));
        }
        if (l.recomputeLayers() > 0) {
            c.append(" --recompute-layers ").append(l.recomputeLayers());
        }
        if (l.workload().offloadLayers() > 0) {
            c.append(" --offload-layers ").append(l.workload().offloadLayers());
        }
        if (l.workload().loraRank() > 0) {
            c.append(" --lora-rank ").append(l.workload().loraRank());
        }
        if (l.workload().documentTokens() > 0) {
            c.append(" --document-tokens ").append(l.workload().documentTokens());
        }
        if (l.workload().sixteenBitGradients() != l.workload().precision().sixteenBitGradientsByDefault()) {
            // gradient buffers other than the precision's default
            c.append(" --grad-dtype ").append(l.workload().gradDtypeLabel());
        }
        // the schedule choices as given (stated: the command states them too), the others left to their defaults
        if (l.workload().states(Workload.ScheduleChoice.GRAD_REDUCE)) {
            c.append(" --grad-reduce ").append(l.workload().gradReduce().label());
        }
        if (l.workload().expertCommOverlap()) {
            c.append(" --moe-a2a-overlap");
        }
        if (l.workload().fp8ParamGather()) {
            c.append(" --fp8-param-gather");
        }
        if (l.workload().moeDispatcher() != org.scaledl.workload.MoeDispatcher.ALLTOALL) {
            c.append(" --moe-dispatcher ").append(l.workload().moeDispatcher().label());
        }
        if (l.workload().states(Workload.ScheduleChoice.CUDA_GRAPHS)) {
            c.append(" --cuda-graphs ").append(l.workload().cudaGraphs().label());
        }
        if (l.workload().expertImbalance() != 1) {
            c.append(" --expert-imbalance ").append(number(l.workload().expertImbalance()));
        }
        c.append(" --device ").append(quote(d.name())).append(" --precision ").append(precision.label());
        if (devices != null) {
            c.append(" --devices ").append(quote(devices.toString()));
        }
        given.ifPresent(t -> c.append(" --gpus-per-node ").append(t.gpusPerNode()).append(" --nvlink-domain ")
                .append(t.nvlinkDomain()).append(" --inter-node-gbps ").append(number(t.interNodeGbps())));
        return c.toString();
    }

    private static String number(double x) {
        return x == Math.rint(x) ? Long.toString((long) x) : Double.toString(x);
    }

    /**
     * A word for the shell: as it is, in single quotes, or where it holds a character a terminal acts on
     * ({@link org.scaledl.InvalidInputException#unsafe}), in bash's {@code $'...'} with each such character as
     * {@code \xHH} or backslash-u and four hex digits (no escape sequence, line break or reordering reaches the
     * terminal, and the command still names the file).
     */
    private static String quote(String s) {
        if (s.matches("[A-Za-z0-9_./=:-]+")) {
            return s;
        }
        if (s.chars().noneMatch(c -> org.scaledl.InvalidInputException.unsafe((char) c))) {
            return "'" + s.replace("'", "'\\''") + "'";
        }
        StringBuilder b = new StringBuilder("$'");
        for (char c : s.toCharArray()) {
            if (org.scaledl.InvalidInputException.unsafe(c)) {
                // a control character, a line or paragraph separator, a bidirectional override: as bash reads it
                b.append(c < 0x80 ? String.format(Locale.ROOT, "\\x%02x", (int) c)
                        : String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else if (c == '\'' || c == '\\') {
                b.append('\\').append(c);
            } else {
                b.append(c);
            }
        }
        return b.append('\'').toString();
    }

    /**
     * Every layout as a candidate table, its transformer relative to the table. A candidate table may only name files
     * inside its folder ({@code predict --candidates} refuses others), so a configuration outside it is copied beside
     * the table ({@code NAME.configs/FOLDER/config.json} for {@code NAME.csv}): the copy, if one was written.
     */
    private java.util.Optional<Path> writeCandidates(List<LayoutSearch.Layout> all, Device d,
            java.util.Optional<Topology> given, org.scaledl.workload.Precision precision) throws java.io.IOException {
        TableConfigs configs = new TableConfigs(out);
        String config = configs.cell(transformer);
        java.util.Optional<Path> copy = configs.copies().stream().findFirst();
        StringBuilder sb = new StringBuilder("rank,transformer,seq,batch,micro_batches,world_size,tensor,pipeline,"
                + "context,virtual_stages,expert,expert_tensor,zero_stage,sequence_parallel,recompute,recompute_layers,"
                + "recompute_modules,offload_layers,lora_rank,expert_imbalance,document_tokens,grad_dtype,grad_reduce,"
                + "fp8_param_gather,moe_a2a_overlap,moe_dispatcher,cuda_graphs,device,precision,"
                + "gpus_per_node,"
                + "nvlink_domain,inter_node_gbps,layout_ms,layout_memory_gb,fits\n");
        int rank = 1;
        for (LayoutSearch.Layout l : all) {
            Parallelism par = l.parallelism();
            sb.append(rank++).append(',').append(org.scaledl.io.CsvTable.cell(config)).append(',').append(seq)
                    .append(',').append(l.microBatch()).append(',').append(par.microBatches()).append(',')
                    .append(par.data()).append(',').append(par.tensor()).append(',').append(par.pipeline())
                    .append(',').append(par.context()).append(',').append(par.virtualStages()).append(',')
                    .append(par.expert()).append(',').append(par.expertTensor()).append(',').append(par.zeroStage())
                    .append(',').append(par.sequenceParallel()).append(',').append(l.recompute().label()).append(',')
                    .append(l.recomputeLayers()).append(',').append(modules(l)).append(',')
                    .append(l.workload().offloadLayers()).append(',')
                    .append(l.workload().loraRank()).append(',')
                    .append(number(l.workload().expertImbalance())).append(',')
                    .append(l.workload().documentTokens()).append(',')
                    .append(l.workload().gradDtypeLabel()).append(',')
                    .append(stated(l.workload(), Workload.ScheduleChoice.GRAD_REDUCE, l.workload().gradReduce().label()))
                    // (empty unless set: a rescoring's --fp8-param-gather then applies to the rows)
                    .append(',').append(l.workload().fp8ParamGather() ? "true" : "").append(',')
                    .append(stated(l.workload(), Workload.ScheduleChoice.EXPERT_COMM_OVERLAP,
                            Boolean.toString(l.workload().expertCommOverlap()))).append(',')
                    .append(par.expert() > 1 ? l.workload().moeDispatcher().label() : "").append(',')
                    .append(stated(l.workload(), Workload.ScheduleChoice.CUDA_GRAPHS,
                            l.workload().cudaGraphs().label())).append(',')
                    .append(org.scaledl.io.CsvTable.cell(d.name()))
                    .append(',').append(precision.label()).append(',');
            given.ifPresent(x -> sb.append(x.gpusPerNode()).append(',').append(x.nvlinkDomain()).append(',')
                    .append(number(x.interNodeGbps())));
            if (given.isEmpty()) {
                sb.append(",,");
            }
            sb.append(',').append(String.format(Locale.ROOT, "%.4f,%.3f,", l.millis(), l.memoryGb()))
                    .append(l.fits()).append('\n');
        }
        Reports.write(out, sb.toString());
        return copy;
    }

    /**
     * A caller's constraint on the ranking: the layouts whose degree of one kind is among those given.
     *
     * @param option  the option that gave it ({@code --tensor})
     * @param noun    its kind in messages ({@code tensor})
     * @param degrees the degrees kept, each once
     * @param degree  a layout's degree of the kind
     */
    record Constraint(String option, String noun, List<Integer> degrees,
            java.util.function.ToIntFunction<Parallelism> degree) {
        boolean keeps(LayoutSearch.Layout l) {
            return degrees.contains(degree.applyAsInt(l.parallelism()));
        }

        /** The degrees of this kind that the search's layouts have. */
        List<Integer> searched(List<LayoutSearch.Layout> layouts) {
            return layouts.stream().map(l -> degree.applyAsInt(l.parallelism())).distinct().sorted().toList();
        }

        /** Why the search takes those degrees, where the rule is not plain. */
        String why(org.scaledl.graph.ModelGraph graph) {
            return switch (noun) {
                case "tensor" -> " (powers of two that divide " + org.scaledl.model.exec.MegatronExecution
                        .headsDivisor(graph) + ", the heads' and every layer's key/value heads' common divisor, inside "
                        + "an NVLink domain; predict takes any divisor)";
                case "expert" -> graph.transformer().map(t -> t.experts() > 1 ? " (powers of two that divide the "
                        + t.experts() + " routed experts, within the GPUs; predict takes any divisor)"
                        : " (the model has no routed experts)").orElse("");
                case "context" -> " (powers of two up to " + LayoutSearch.MAX_CONTEXT + " whose double divides "
                        + "the sequence, where every attention core is fused; predict takes others)";
                default -> "";
            };
        }
    }
}
