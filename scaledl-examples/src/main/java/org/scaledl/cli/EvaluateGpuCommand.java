package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.scaledl.eval.GpuEvaluation;
import org.scaledl.eval.GpuEvaluation.Cell;
import org.scaledl.eval.GpuEvaluation.ModelCase;
import org.scaledl.eval.GpuEvaluation.Report;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.GpuData;
import org.scaledl.workload.Parallelism;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl evaluate-gpu}: the device layer model on NeuSight and DeepBench GPU measurements (see
 * {@link GpuEvaluation}).
 */
@Command(name = "evaluate-gpu", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Evaluate the GPU layer model on per-operator kernels (held-out shapes "
        + "and leave-one-GPU-out), whole transformer models and 4-GPU DP/TP/PP runs.")
final class EvaluateGpuCommand implements Callable<Integer> {
    @Option(names = "--data", required = true,
            description = "Folder with neusight/ and deepbench/ (the bundled datasets/gpu)")
    Path data;

    @Option(names = "--holdout-gpu", description = "Hold out only this GPU (default: each GPU in turn, averaged)")
    String holdout;

    @Option(names = "--devices", description = "Extra device catalog CSV (NeuSight device_configs layout): its "
            + "GPUs are added beside the bundled ones, never in their place")
    Path devices;

    @Option(names = "--seed", defaultValue = "7", description = "Seed of the held-out-shape split (default 7)")
    long seed;

    @Option(names = "--adapt", defaultValue = "0", description = "Also profile this many kernels per op of each "
            + "held-out GPU and score the model adapted to them (default 0: off)")
    int adapt;

    @Option(names = "--adapt-runs", defaultValue = "0", description = "Also calibrate on this many whole-model runs "
            + "of each held-out GPU and score its other runs (default 0: off)")
    int adaptRuns;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    /** The most kernels per op {@code --adapt} asks for (each op gives at most half of its rows). */
    static final int MAX_ADAPT_KERNELS = 100_000;

    /** The most whole-model runs {@code --adapt-runs} asks for (a GPU gives at most half of its runs). */
    static final int MAX_ADAPT_RUNS = 10_000;

    @Override
    public Integer call() throws Exception {
        if (adapt < 0 || adapt > MAX_ADAPT_KERNELS) {
            throw new IllegalArgumentException("--adapt must be in 0.." + MAX_ADAPT_KERNELS + " (kernels per op), got "
                    + adapt);
        }
        if (adaptRuns < 0 || adaptRuns > MAX_ADAPT_RUNS) {
            throw new IllegalArgumentException("--adapt-runs must be in 0.." + MAX_ADAPT_RUNS + ", got " + adaptRuns);
        }
        DeviceCatalog catalog = Catalogs.of(devices, data);
        if (holdout != null) {
            // said before the data are read: a name typed on the command line (unknown, or ambiguous with its
            // candidates), a usage error
            try {
                catalog.require(holdout);
            } catch (org.scaledl.InvalidInputException e) {
                throw new IllegalArgumentException("--holdout-gpu: " + e.getMessage(), e);
            }
        }
        long t0 = System.nanoTime();
        Report r = GpuEvaluation.run(data, catalog, Optional.ofNullable(holdout), seed, adapt, adaptRuns);
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (json) {
            System.out.println(json(r, seconds));
        } else {
            table(r, seconds, System.out);
        }
        return 0;
    }

    static String json(Report r, double seconds) throws Exception {
        ObjectMapper om = new ObjectMapper();
        ObjectNode root = om.createObjectNode();
        ObjectNode k = root.putObject("kernels");
        Reports.number(k, "leave_one_gpu_out_mre", r.kernelLeaveOneGpuOutMre());
        Reports.number(k, "seen_gpu_mre", r.kernelSeenGpuMre());
        Reports.number(k, "roofline_leave_one_gpu_out_mre", r.rooflineLeaveOneGpuOutMre());
        Reports.number(k, "large_product_slope", r.largeProductSlope().orElse(Double.NaN));
        ObjectNode perOp = k.putObject("per_op");
        Map<String, Double> seen = Report.perOp(r.seenGpu());
        Map<String, Double> logo = Report.perOp(r.leaveOneGpuOut());
        Map<String, Double> roof = Report.perOp(r.rooflineLeaveOneGpuOut());
        for (String op : new java.util.TreeSet<>(java.util.stream.Stream.concat(seen.keySet().stream(),
                logo.keySet().stream()).toList())) {
            ObjectNode o = perOp.putObject(op);
            Reports.number(o, "seen_gpu_mre", seen.getOrDefault(op, Double.NaN));
            Reports.number(o, "leave_one_gpu_out_mre", logo.getOrDefault(op, Double.NaN));
            Reports.number(o, "roofline_leave_one_gpu_out_mre", roof.getOrDefault(op, Double.NaN));
        }
        cells(k.putArray("leave_one_gpu_out"), r.leaveOneGpuOut());
        cells(k.putArray("seen_gpu"), r.seenGpu());
        ObjectNode m = root.putObject("models");
        Reports.number(m, "leave_one_gpu_out_mre", r.modelMre());
        Reports.number(m, "interval_coverage", r.modelCoverage());
        ObjectNode p = m.putObject("parallel");
        for (Parallelism kind : r.parallelisms()) {
            Reports.number(p, kind.label(), r.parallelMre(kind));
        }
        r.adapted().ifPresent(ad -> {
            ObjectNode a = root.putObject("adapted");
            // as asked (each op and GPU gives at most half of its rows), and what was taken
            a.put("kernels_profiled_per_op", ad.kernelsPerOp());
            a.put("kernels_profiled", ad.kernelsProfiled());
            a.put("runs_per_gpu", ad.runs());
            a.put("runs_measured", ad.runsMeasured());
            Reports.number(a, "kernels_mre", ad.kernelMre());
            Reports.number(a, "kernels_mre_before_adapting", ad.kernelMreBefore());
            ObjectNode ap = a.putObject("per_op");
            Map<String, Double> before = Report.perOp(ad.kernelsBefore());
            Report.perOp(ad.kernels()).forEach((op, v) -> {
                ObjectNode o = ap.putObject(op);
                Reports.number(o, "mre", v);
                Reports.number(o, "mre_before_adapting", before.getOrDefault(op, Double.NaN));
            });
            Reports.number(a, "models_mre", ad.modelMre());
            Reports.number(a, "models_mre_before_adapting", ad.modelMreBefore());
            a.put("models_scored", ad.models().size());
            cells(a.putArray("cells"), ad.kernels());
        });
        ArrayNode runs = m.putArray("runs");
        for (ModelCase c : concat(r.models(), r.parallel())) {
            runs.addObject().put("gpu", c.gpu()).put("model", c.model()).put("phase", c.phase().label())
                    .put("seq_len", c.seqLen()).put("batch", c.batch()).put("parallel", c.parallel().label())
                    .put("measured_ms", c.measuredMs()).put("predicted_ms", c.predictedMs())
                    .put("low_ms", c.lowMs()).put("high_ms", c.highMs());
        }
        ArrayNode notes = root.putArray("notes");
        r.notes().forEach(notes::add);
        root.put("seconds", seconds);
        return Reports.pretty(root);
    }

    private static List<ModelCase> concat(List<ModelCase> a, List<ModelCase> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }

    private static void cells(ArrayNode out, List<Cell> cells) {
        for (Cell c : cells) {
            out.addObject().put("op", c.op()).put("gpu", c.gpu()).put("n", c.n()).put("mre", c.mre())
                    .put("within10", c.within10());
        }
    }

    static void table(Report r, double seconds, PrintStream out) {
        if (!r.seenGpu().isEmpty()) {
            out.println("Kernels, seen GPUs, held-out shapes (" + Math.round(100 * GpuEvaluation.SEEN_HOLDOUT)
                    + "% of shapes):");
            cellTable(r.seenGpu(), out);
        }
        out.println("Kernels, leave one GPU out:");
        cellTable(r.leaveOneGpuOut(), out);
        out.println("Per op (mean over GPUs; roofline = max(FLOPs/peak, bytes/bandwidth) x median efficiency of the "
                + "training GPUs):");
        Map<String, Double> seen = Report.perOp(r.seenGpu());
        Map<String, Double> logo = Report.perOp(r.leaveOneGpuOut());
        Map<String, Double> roof = Report.perOp(r.rooflineLeaveOneGpuOut());
        out.printf(Locale.ROOT, "  %-10s %12s %14s %16s%n", "op", "seen MRE", "held-out MRE", "roofline held-out");
        for (String op : logo.keySet()) {
            out.printf(Locale.ROOT, "  %-10s %12s %14s %16s%n", op, percent(seen.get(op)), percent(logo.get(op)),
                    percent(roof.get(op)));
        }
        out.println("Whole models (single GPU, GPU held out):");
        caseTable(r.models(), out);
        out.println("4-GPU runs (GPU held out):");
        caseTable(r.parallel(), out);
        out.printf(Locale.ROOT, "%nkernels: seen-GPU MRE %s, leave-one-GPU-out MRE %s (roofline %s)%n",
                percent(r.kernelSeenGpuMre()), percent(r.kernelLeaveOneGpuOutMre()),
                percent(r.rooflineLeaveOneGpuOutMre()));
        r.largeProductSlope().ifPresent(sl -> out.printf(Locale.ROOT, "matrix products of >= %.0e FLOPs, GPU held "
                + "out: slope of measured on predicted log efficiency %.2f (the cluster model's shrinkage)%n",
                GpuEvaluation.LARGE_PRODUCT_FLOPS, sl));
        StringBuilder par = new StringBuilder();
        for (Parallelism kind : r.parallelisms()) {
            par.append("; ").append(kind.label()).append(' ').append(percent(r.parallelMre(kind)));
        }
        out.printf(Locale.ROOT, "models: leave-one-GPU-out MRE %s (%d runs, %s in the 90%% interval)%s%n",
                percent(r.modelMre()), r.models().size(), percent(r.modelCoverage()), par);
        r.adapted().ifPresent(ad -> {
            Map<String, Double> after = Report.perOp(ad.kernels());
            Map<String, Double> before = Report.perOp(ad.kernelsBefore());
            out.printf(Locale.ROOT, "%nAdapted: %d profiled kernels (up to %d per op, at most half of each op's) and %d "
                    + "whole-model runs (up to %d of each held-out GPU, at most half of its runs); scored on the rest, "
                    + "before -> after:%n", ad.kernelsProfiled(), ad.kernelsPerOp(), ad.runsMeasured(), ad.runs());
            after.forEach((op, v) -> out.printf(Locale.ROOT, "  %-10s %7s -> %6s%n", op, percent(before.get(op)),
                    percent(v)));
            out.printf(Locale.ROOT, "  kernels %s -> %s; models %s -> %s (%d runs)%n",
                    percent(ad.kernelMreBefore()), percent(ad.kernelMre()), percent(ad.modelMreBefore()),
                    percent(ad.modelMre()), ad.models().size());
        });
        r.notes().forEach(n -> out.println("note: " + n));
        out.printf(Locale.ROOT, "(%.0f s)%n", seconds);
    }

    private static void cellTable(List<Cell> cells, PrintStream out) {
        out.printf(Locale.ROOT, "  %-10s %-24s %6s %8s %9s%n", "op", "gpu", "n", "MRE", "within10");
        for (Cell c : cells) {
            out.printf(Locale.ROOT, "  %-10s %-24s %6d %7.1f%% %8.0f%%%n", c.op(), c.gpu(), c.n(), 100 * c.mre(),
                    100 * c.within10());
        }
    }

    private static void caseTable(List<ModelCase> cases, PrintStream out) {
        out.printf(Locale.ROOT, "  %-24s %-11s %-5s %5s %5s %-6s %10s %10s %7s%n", "gpu", "model", "phase", "seq",
                "batch", "par", "measured", "predicted", "error");
        for (ModelCase c : cases) {
            out.printf(Locale.ROOT, "  %-24s %-11s %-5s %5d %5d %-6s %8.1f ms %8.1f ms %6.1f%%%n", c.gpu(), c.model(),
                    c.phase().label(), c.seqLen(), c.batch(), c.parallel(), c.measuredMs(), c.predictedMs(),
                    100 * c.relativeError());
        }
    }

    /**
     * A figure as a percentage, or {@code n/a} where there is none (an op only one GPU measured has no seen-GPU
     * hold-out of its own shapes).
     */
    static String percent(Double v) {
        return v == null || v.isNaN() ? "n/a" : String.format(Locale.ROOT, "%.1f%%", 100 * v);
    }
}
