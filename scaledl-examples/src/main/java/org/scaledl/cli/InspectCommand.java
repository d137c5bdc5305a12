package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.Phase;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code scaledl inspect graph.onnx [--batch N]} or {@code scaledl inspect --transformer config.json --seq N}:
 * per-layer features and totals; {@code scaledl inspect --model m.sdl}: what a saved predictor was fitted on (its
 * training domain).
 */
@Command(name = "inspect", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Print per-layer shapes, FLOPs, parameters and bytes of an ONNX graph or of a transformer's "
                + "config.json (--transformer, --seq), or with --model, a saved predictor's provenance and training "
                + "domain.")
final class InspectCommand implements Callable<Integer> {
    @Parameters(index = "0", arity = "0..1", paramLabel = "GRAPH", description = "ONNX graph file")
    Path model;

    @Option(names = "--model", description = "A predictor (a bundled name or a saved .sdl): print its provenance and training domain")
    String predictor;

    @Option(names = "--transformer", paramLabel = "CONFIG", description = "A Hugging Face config.json, or the "
            + "model's folder holding one (with --seq): its layer graph, one block of each kind, each layer with "
            + "how many times it repeats")
    Path transformer;

    @Option(names = "--seq", description = "Sequence length of --transformer")
    Long seq;

    @Option(names = "--batch", description = "Batch size (with an ONNX file or --transformer; default 1)")
    Integer batchArg;

    @Option(names = "--phase", description = "train (forward, backward, optimizer) or infer (one forward pass: a "
            + "transformer's prefill, no decoding; default: train)")
    Phase phaseArg;

    @Option(names = "--json", description = "Print one JSON document")
    boolean json;

    @picocli.CommandLine.Mixin
    GraphOptions graphOptions;

    @Override
    public Integer call() throws Exception {
        int given = (predictor != null ? 1 : 0) + (model != null ? 1 : 0) + (transformer != null ? 1 : 0);
        if (given > 1) {
            throw new IllegalArgumentException("give one of an ONNX file, --transformer and --model");
        }
        if (seq != null && transformer == null) {
            throw new IllegalArgumentException("--seq is the sequence length of --transformer, which is not given");
        }
        if (predictor != null) {
            if (batchArg != null || phaseArg != null || !graphOptions.dimArgs.isEmpty() || graphOptions.allowPartial) {
                throw new IllegalArgumentException((batchArg != null ? "--batch" : phaseArg != null ? "--phase"
                        : !graphOptions.dimArgs.isEmpty() ? "--dim" : "--allow-partial") + " describes a graph to "
                        + "inspect; --model prints a predictor's provenance and training domain");
            }
            return domain();
        }
        int batch = batchArg == null ? 1 : batchArg;
        Phase ph = phaseArg == null ? Phase.TRAIN : phaseArg;
        if (given == 0) {
            throw new IllegalArgumentException("say what to inspect: an ONNX graph file, --transformer config.json "
                    + "--seq N, or --model m.sdl (a predictor)");
        }
        if (batch <= 0) {
            throw new IllegalArgumentException("--batch must be positive, got " + batch);
        }
        if (graphOptions.allowPartial) {
            // accepted as predict takes it, said rather than ignored in silence
            System.err.println("scaledl: note: --allow-partial changes nothing here: inspect lists every graph, "
                    + "complete or not, and says what it cannot resolve (the option lets predict time such a graph)");
        }
        ModelGraph g;
        if (transformer != null) {
            if (seq == null || seq <= 0) {
                throw new IllegalArgumentException("--transformer needs --seq, a positive sequence length"
                        + (seq == null ? "" : ", got " + seq));
            }
            g = graphOptions.readTransformer(transformer, seq);
        } else {
            g = graphOptions.read(model);
        }
        org.scaledl.graph.Coverage cov = g.coverage();
        List<LayerFeatures> fs = FeatureExtractor.of(g).extract(batch, ph);
        double fwd = 0;
        double bwd = 0;
        double bytes = 0;
        // a compact graph's layers stand for every copy of their block
        boolean repeated = false;
        for (LayerFeatures f : fs) {
            int n = g.repeats(f.layer());
            fwd += n * f.flopsFwd();
            bwd += n * f.flopsBwd();
            bytes += n * f.bytesFwd();
            repeated |= n > 1;
        }
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("graph", g.name());
            root.put("batch", batch);
            root.put("phase", ph.label());
            ArrayNode layers = root.putArray("layers");
            for (LayerFeatures f : fs) {
                Layer l = g.layer(f.layer());
                ObjectNode o = layers.addObject();
                o.put("name", l.name());
                o.put("op", l.opType());
                o.put("family", f.family().name());
                List<Long> s = outputShape(g, l, batch);
                if (s == null) {
                    o.putNull("output_shape");
                } else {
                    s.forEach(o.putArray("output_shape")::add);
                }
                o.put("flops_fwd", f.flopsFwd());
                o.put("flops_bwd", f.flopsBwd());
                o.put("params", f.params());
                o.put("bytes", f.bytesFwd());
                o.put("repeats", g.repeats(f.layer()));
            }
            ObjectNode totals = root.putObject("totals");
            totals.put("params", g.parameterCount());
            totals.put("flops_fwd", fwd);
            totals.put("flops_bwd", bwd);
            totals.put("bytes", bytes);
            ObjectNode c = root.putObject("coverage");
            c.put("complete", cov.isComplete());
            c.put("unresolved_layers", cov.unresolvedLayers().size());
            c.put("unresolved_share_layers", cov.unresolvedShareLayers());
            c.put("unresolved_share_bytes", cov.unresolvedShareBytes());
            cov.unsupportedOperators().forEach(c.putArray("unsupported_ops")::add);
            c.put("from_value_info", cov.fromValueInfo().size());
            if (cov.exportedBatch().isPresent()) {
                c.put("exported_batch", cov.exportedBatch().getAsLong());
            } else {
                c.putNull("exported_batch");
            }
            cov.boundDimensions().forEach(c.putObject("bound_dims")::put);
            if (!cov.unresolvedLayers().isEmpty()) {
                c.put("first_unresolved", cov.unresolvedLayers().get(0));
                c.put("first_problem", cov.firstProblem());
            }
            Reports.printJson(root);
            return 0;
        }
        System.out.printf("%s: %d layers%s, %d edges, batch %d, %s%n", org.scaledl.InvalidInputException.escaped(g.name()), g.size(), repeated
                ? " (one block of each kind, standing for " + g.blocks().orElseThrow().pattern().size()
                + " transformer layers)" : "", g.edges().size(), batch, ph.label());
        System.out.printf("%-48s %-18s %-22s %12s %12s %11s %12s%s%n", "layer", "op", "output shape", "MFLOPs fwd",
                "MFLOPs bwd", "params", "KiB", repeated ? "  repeats" : "");
        for (LayerFeatures f : fs) {
            Layer l = g.layer(f.layer());
            String escaped = org.scaledl.InvalidInputException.escaped(l.name());
            String name = escaped.length() > 48 ? "…" + escaped.substring(escaped.length() - 47) : escaped;
            List<Long> shape = outputShape(g, l, batch);
            System.out.printf("%-48s %-18s %-22s %12.3f %12.3f %11d %12.1f%s%n", name, org.scaledl.InvalidInputException.escaped(l.opType()),
                    shape == null ? "?" : shape, f.flopsFwd() / 1e6, f.flopsBwd() / 1e6, f.params(),
                    f.bytesFwd() / 1024, repeated ? String.format(Locale.ROOT, "  %7d", g.repeats(f.layer())) : "");
        }
        System.out.printf("total: %d params, %.3f GFLOPs forward, %.3f GFLOPs backward, %.1f MiB moved forward%n",
                g.parameterCount(), fwd / 1e9, bwd / 1e9, bytes / (1 << 20));
        System.out.println("coverage: " + cov.summary());
        if (ph == Phase.INFER && org.scaledl.model.exec.MegatronExecution.generates(g)) {
            // the graph is the whole forward pass; predict times a prefill
            System.out.println("note: predict times a prefill: the output head over each sequence's last token alone "
                    + "and no loss (the rows above are the graph's, over every token)");
        }
        return 0;
    }

    /** The first output's concrete shape, {@code null} when unknown ({@code []} is a scalar). */
    static List<Long> outputShape(ModelGraph g, Layer l, long batch) {
        if (l.outputs().isEmpty() || l.outputs().get(0).isEmpty()) {
            return null;
        }
        return g.tensor(l.outputs().get(0)).flatMap(t -> t.shape())
                .map(s -> java.util.Arrays.stream(s.at(batch)).boxed().toList()).orElse(null);
    }

    /** The execution model's coefficients, one named term a line, and what a calibration weighs its level as. */
    private static void printExecution(org.scaledl.model.exec.MegatronModel m) {
        System.out.println("execution model of transformers on GPUs (each term's fitted coefficient: a scale of its "
                + "physics, or ms for the host's steps and the fixed costs; where it enters; its prior):");
        m.coefficients().forEach((t, c) -> System.out.printf(Locale.ROOT, "  %-28s %8.3f  %-8s prior %s%n", t.key(),
                c, t.fit().name().toLowerCase(Locale.ROOT), t.prior()));
        double[] iv = m.interval();
        double[] ie = m.interval(true);
        System.out.printf(Locale.ROOT, "  90%% interval x%.2f..x%.2f (mixtures of experts x%.2f..x%.2f); a "
                + "calibration on fewer runs than its terms need weighs the model's level as %.2f runs%n",
                Math.exp(iv[0]), Math.exp(iv[1]), Math.exp(ie[0]), Math.exp(ie[1]), m.levelPriorRuns());
        if (m.revision() != org.scaledl.model.exec.MegatronModel.EXECUTION_REVISION) {
            System.out.printf(Locale.ROOT, "  fitted to the formulas of execution revision %d; this library's are "
                    + "revision %d: refit it%n", m.revision(), org.scaledl.model.exec.MegatronModel.EXECUTION_REVISION);
        }
    }

    /** The predictor's provenance and domain: JSON with --json, else a summary and the domain's JSON. */
    private int domain() throws Exception {
        RuntimePredictor p = ModelArgument.load(predictor);
        ObjectMapper om = new ObjectMapper();
        ObjectNode root = om.createObjectNode();
        root.put("predictor", p.toString());
        root.put("layer_cost", p.layerCostKind());
        p.interactions().ifPresent(i -> root.put("interactions", i.describe()));
        root.put("training_samples", p.provenance().trainingSamples());
        root.put("library_version", p.provenance().libraryVersion());
        Reports.number(root, "cross_validated_mre", p.provenance().cvMre());
        p.machines().forEach(root.putArray("machines")::add);
        // a calibrated copy says so: the runs it was calibrated on (RuntimePredictor.calibrate counts them)
        Integer calibrated = count(p, org.scaledl.model.Provenance.CALIBRATION_RUNS);
        List<String> calibratedOn = p.provenance().calibrationDevices();
        if (calibrated != null) {
            root.put("calibration_runs", calibrated);
            calibratedOn.forEach(root.putArray("calibration_devices")::add);
        }
        // an adaptation to profiled kernels (fit --gpu --profiled) says so, with the GPUs it corrected
        Integer adapted = count(p, org.scaledl.model.Provenance.ADAPTED_KERNELS);
        List<String> corrected = p.deviceLayerModel().map(m -> m.corrections().entrySet().stream()
                .filter(e -> !e.getValue().layers().isEmpty()).map(java.util.Map.Entry::getKey).toList())
                .orElse(List.of());
        if (adapted != null) {
            root.put("adapted_kernels", adapted);
            corrected.forEach(root.putArray("adapted_devices")::add);
        }
        root.put("created_at", p.provenance().createdAt());
        root.set("domain", p.domain().toJson());
        p.executionModel().ifPresent(m -> root.set("execution", m.toJson()));
        if (!json) {
            System.out.printf(Locale.ROOT, "%s: %s, %d training samples, %s, machines %s%s%n",
                    org.scaledl.InvalidInputException.escaped(predictor), org.scaledl.InvalidInputException.escaped(p.toString()), p.provenance().trainingSamples(), Reports.cvMre(p.provenance().cvMre()),
                    p.machines(), calibrated == null ? "" : ", calibrated on " + calibrated + " run"
                            + (calibrated == 1 ? "" : "s") + (calibratedOn.isEmpty() ? "" : " of "
                            + String.join(", ", calibratedOn)) + " since it was fitted (the fit's time, " + p.provenance()
                            .createdAt() + "; a calibration keeps it)");
            if (adapted != null) {
                System.out.println("adapted to " + adapted + " profiled kernels" + (corrected.isEmpty() ? ""
                        : " (its layer predictions corrected on " + String.join(", ", corrected) + ")"));
            }
            p.executionModel().ifPresentOrElse(InspectCommand::printExecution, () -> {
                if (p.modelsClusters()) {
                    System.out.println("no execution model of transformers on GPUs (fitted without transformer runs: "
                            + "a transformer's parallel job is timed with every term at its prior, and warned of)");
                }
            });
            System.out.println("training domain (predictions outside it carry warnings):");
        }
        Reports.printJson(json ? root : root.get("domain"));
        return 0;
    }

    /** A count the predictor's provenance keeps as text ({@code null} where it has none; a model file checks it). */
    private static Integer count(RuntimePredictor p, String key) {
        String value = p.provenance().config().get(key);
        return value == null ? null : Integer.valueOf(value);
    }
}
