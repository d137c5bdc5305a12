package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.scaledl.eval.LearningCurve;
import org.scaledl.io.DatasetReader;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Dataset;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl learning-curve}: held-out accuracy against profiling seconds, for runs chosen D-optimally (by runs,
 * and within a budget of seconds) and uniformly at random.
 */
@Command(name = "learning-curve", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Accuracy vs. profiling seconds: D-optimal by runs, cost-aware D-optimal and random choice, "
        + "on held-out families; writes learning-curve.svg.")
final class LearningCurveCommand implements Callable<Integer> {
    @Option(names = "--data", required = true, description = "Dataset folder (with --gpu: the GPU data root, "
            + "datasets/gpu)")
    Path data;

    @Option(names = "--gpu", description = "The curve of the Megatron execution model on vTrain's 1,440 runs "
            + "(costs in GPU-seconds): the device layer model is fitted once without them, each subset of runs "
            + "calibrates it (scaledl fit --gpu's Megatron fit), and whole models are held out")
    boolean gpu;

    @Option(names = "--cv", defaultValue = "family", description = "Groups held out: family or model (default "
            + "${DEFAULT-VALUE})")
    String by;

    @Option(names = "--folds", defaultValue = "10", description = "Folds of whole groups (default ${DEFAULT-VALUE}; "
            + "0 = leave one group out)")
    int folds;

    @Option(names = "--random-seeds", defaultValue = "5", description = "Random subsets per size (default "
            + "${DEFAULT-VALUE})")
    int seeds;

    @Option(names = "--prior", description = "Model (a bundled name or a file) whose predictions price candidates "
            + "for the cost-aware plan (default: the roofline prior)")
    String prior;

    @Option(names = "--fractions", split = ",", description = "Shares of each fold's training grid, increasing, "
            + "ending with 1 (default 0.02,0.03,0.05,0.07,0.1,0.15,0.25,0.5,1)")
    List<Double> fractions;

    @picocli.CommandLine.Mixin
    ProfilingCostOptions costOptions;

    @Option(names = "--out-dir", defaultValue = ".", description = "Where to write learning-curve.svg")
    Path outDir;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    /** The most random subsets drawn per size (each is a fit per fold). */
    static final int MAX_SEEDS = 1000;

    private static final Map<String, String> COLOURS = Map.of(LearningCurve.D_OPTIMAL, "#ff7f0e",
            LearningCurve.D_OPTIMAL_COST, "#d62728", LearningCurve.RANDOM, "#1f77b4");

    @Override
    public Integer call() throws Exception {
        if (!by.equals("family") && !by.equals("model")) {
            throw new IllegalArgumentException("--cv must be family or model, got '" + by + "'");
        }
        Reports.checkFolds(folds);
        if (seeds < 1 || seeds > MAX_SEEDS) {
            throw new IllegalArgumentException("--random-seeds must be in 1.." + MAX_SEEDS + ", got " + seeds);
        }
        Path svg = outDir.resolve("learning-curve.svg");
        // checked before the folds' fits: nothing computed for a curve that cannot be written
        org.scaledl.model.file.SafeFiles.checkWritable(svg);
        LearningCurve.Builder b = LearningCurve.builder().folds(folds).randomSubsets(seeds)
                .cost(costOptions.cost(gpu));
        if (fractions != null) {
            b.fractions(fractions);
        }
        if (prior != null) {
            RuntimePredictor p = ModelArgument.load("--prior", prior);
            b.prior(p::predictMillis);
        }
        List<org.scaledl.workload.Sample> samples;
        if (gpu) {
            if (prior != null) {
                throw new IllegalArgumentException("--gpu prices runs with the device model fitted without them; "
                        + "--prior does not apply");
            }
            org.scaledl.io.GpuData d = org.scaledl.io.GpuData.read(data, Catalogs.of(null, data));
            samples = d.vtrainRuns();
            if (samples.isEmpty()) {
                throw new IllegalArgumentException(data + " has no vTrain runs (vtrain/ground_truth_single.csv)");
            }
            // the physics alone (no Megatron coefficients): the start of every subset's calibration and the prior
            RuntimePredictor base = EvaluateMegatronCommand.withoutMegatron(d);
            b.trainer(base::calibrate).rows(base::designRow).prior(base::predictMillis).perDevice(true);
        } else {
            samples = DatasetReader.read(data).samples();
        }
        Progress progress = Progress.of("learning-curve", Main.quiet);
        LearningCurve c = b.run(samples, by, (done, total) -> {
            progress.update(done, total, "fold " + done + " of " + total);
            return 0;
        });
        svg(c, svg, gpu ? "profiling GPU-seconds" : "profiling seconds");
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("full_mre", c.fullMre());
            root.put("grid_seconds", c.gridSeconds());
            c.methods().forEach((name, pts) -> {
                ObjectNode m = root.putObject(name);
                ArrayNode arr = m.putArray("points");
                for (LearningCurve.Point p : pts) {
                    ObjectNode o = arr.addObject().put("fraction", p.fraction()).put("seconds", p.seconds())
                            .put("runs", p.runs()).put("mre", p.mre()).put("rmse_ms", p.rmseMs());
                    if (name.equals(LearningCurve.RANDOM)) {
                        o.put("mre_low", p.mreLow()).put("mre_high", p.mreHigh());
                    }
                }
                Optional<Double> s = c.secondsTo(1.2, name);
                if (s.isPresent()) {
                    m.put("seconds_to_1_2x", s.get());
                } else {
                    m.putNull("seconds_to_1_2x");
                }
            });
            Reports.printJson(root);
        } else {
            System.out.printf(Locale.ROOT, "full-data MRE %.1f%%; profiling the whole grid takes %.0f s%n",
                    100 * c.fullMre(), c.gridSeconds());
            System.out.printf(Locale.ROOT, "%-15s %9s %10s %8s %9s %12s%n", "method", "fraction", "seconds", "runs",
                    "MRE", "RMSE ms");
            c.methods().forEach((name, pts) -> {
                for (LearningCurve.Point p : pts) {
                    System.out.printf(Locale.ROOT, "%-15s %8.1f%% %10.0f %8.1f %8.1f%% %12.1f%s%n", name,
                            100 * p.fraction(), p.seconds(), p.runs(), 100 * p.mre(), p.rmseMs(),
                            name.equals(LearningCurve.RANDOM) ? String.format(Locale.ROOT, "  (%.1f-%.1f%%)",
                                    100 * p.mreLow(), 100 * p.mreHigh()) : "");
                }
            });
            for (String name : c.methods().keySet()) {
                System.out.printf(Locale.ROOT, "%s reaches 1.2x the full-data MRE after %s%n", name,
                        c.secondsTo(1.2, name).map(s -> String.format(Locale.ROOT, "%.0f s (%.1f%% of the grid)",
                                s, 100 * s / c.gridSeconds())).orElse("never"));
            }
            System.out.println("random: mean over " + seeds + " subsets per size (range in brackets); wrote " + svg);
        }
        return 0;
    }

    /** MRE against profiling seconds (log scale), the random subsets' range shaded, 1.2x full-data MRE dashed. */
    static void svg(LearningCurve c, Path file, String unit) {
        int w = 720;
        int h = 440;
        int pad = 70;
        double lo = Double.POSITIVE_INFINITY;
        double hi = 0;
        double top = 1.2 * c.fullMre();
        for (List<LearningCurve.Point> pts : c.methods().values()) {
            for (LearningCurve.Point p : pts) {
                lo = Math.min(lo, p.seconds());
                hi = Math.max(hi, p.seconds());
                top = Math.max(top, p.mreHigh());
            }
        }
        double l0 = Math.log10(lo) - 0.05;
        double l1 = Math.log10(hi) + 0.05;
        double yMax = Math.ceil(top * 20) / 20;
        int plotW = w - 2 * pad - 120;
        java.util.function.DoubleUnaryOperator px = s -> pad + (Math.log10(s) - l0) / (l1 - l0) * plotW;
        java.util.function.DoubleUnaryOperator py = m -> h - pad - m / yMax * (h - 2 * pad);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\"><rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n",
                w, h, w, h));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">"
                + "Held-out MRE vs profiling time</text>%n", w / 2));
        for (double decade = Math.floor(l0); decade <= Math.ceil(l1); decade++) {
            for (double m : new double[] {1, 2, 5}) {
                double dd = decade + Math.log10(m);
                if (dd < l0 || dd > l1) {
                    continue;
                }
                double x = px.applyAsDouble(Math.pow(10, dd));
                sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                        + "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>%n", x, pad,
                        x, h - pad, x, h - pad + 18, Math.pow(10, dd)));
            }
        }
        for (int t = 0; t <= 5; t++) {
            double v = yMax * t / 5;
            double y = py.applyAsDouble(v);
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f%%</text>%n", pad, y, pad + plotW, y,
                    pad - 6, y + 4, 100 * v));
        }
        List<LearningCurve.Point> rnd = c.methods().get(LearningCurve.RANDOM);
        StringBuilder band = new StringBuilder();
        for (LearningCurve.Point p : rnd) {
            band.append(String.format(Locale.ROOT, "%.1f,%.1f ", px.applyAsDouble(p.seconds()),
                    py.applyAsDouble(p.mreHigh())));
        }
        for (int i = rnd.size() - 1; i >= 0; i--) {
            band.append(String.format(Locale.ROOT, "%.1f,%.1f ", px.applyAsDouble(rnd.get(i).seconds()),
                    py.applyAsDouble(rnd.get(i).mreLow())));
        }
        sb.append(String.format(Locale.ROOT, "<polygon points=\"%s\" fill=\"%s\" fill-opacity=\"0.18\" "
                + "stroke=\"none\"/>%n", band, COLOURS.get(LearningCurve.RANDOM)));
        double y12 = py.applyAsDouble(1.2 * c.fullMre());
        sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#555\" "
                + "stroke-dasharray=\"5 4\"/><text x=\"%d\" y=\"%.1f\" fill=\"#555\">1.2x full-data MRE</text>%n",
                pad, y12, pad + plotW, y12, pad + plotW + 6, y12 + 4));
        // Random first, the project's cost-aware plan last (on top).
        List<String> order = List.of(LearningCurve.RANDOM, LearningCurve.D_OPTIMAL, LearningCurve.D_OPTIMAL_COST);
        for (int m = 0; m < order.size(); m++) {
            String name = order.get(m);
            String colour = COLOURS.get(name);
            StringBuilder pts = new StringBuilder();
            for (LearningCurve.Point p : c.methods().get(name)) {
                double x = px.applyAsDouble(p.seconds());
                double y = py.applyAsDouble(p.mre());
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>%n", x,
                        y, colour));
            }
            sb.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" "
                    + "stroke-width=\"2\"/>%n", pts, colour));
            int ly = pad + 20 * (order.size() - 1 - m);
            sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                    + "<text x=\"%d\" y=\"%d\">%s</text>%n", w - pad - 60, ly - 4, colour, w - pad - 40, ly,
                    name + (name.equals(LearningCurve.RANDOM) ? " (range)" : "")));
        }
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s "
                + "(log scale)</text>%n", pad + plotW / 2, h - 20, unit));
        sb.append(String.format(Locale.ROOT, "<text x=\"18\" y=\"%d\" transform=\"rotate(-90 18 %d)\" "
                + "text-anchor=\"middle\">held-out MRE</text>%n</svg>%n", h / 2, h / 2));
        Reports.write(file, sb.toString());
    }
}
