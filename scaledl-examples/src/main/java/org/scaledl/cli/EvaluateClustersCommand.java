package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.eval.ClusterEvaluation;
import org.scaledl.io.CsvTable;
import org.scaledl.io.GpuData;
import org.scaledl.workload.Sample;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl evaluate-clusters --data datasets/gpu}: the cluster execution fitted on some of the published
 * cluster runs ({@code llm-public/runs.csv}, with vTrain's single-node runs always) and scored on the others, split by
 * family, by system, small clusters to large, the newest GPU from its catalog row, and the newer software releases
 * from the runs before them.
 */
@Command(name = "evaluate-clusters", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Fit the cluster execution on some of the published cluster runs (llm-public/runs.csv under "
                + "--data) and score the others: each model family held out, each system held out, <= 64 GPUs -> "
                + "larger clusters, the newest GPU held out, the newer software releases held out (and with "
                + "--each-cluster each system and release); MRE "
                + "with the signed bias, and the 90%% interval's coverage.")
final class EvaluateClustersCommand implements Callable<Integer> {
    @Option(names = "--data", defaultValue = "datasets/gpu", description = "GPU data root (default "
            + "${DEFAULT-VALUE})")
    Path data;

    @Option(names = "--newest", defaultValue = "NVIDIA GB200", description = "The GPU held out whole as the newest "
            + "generation (default ${DEFAULT-VALUE})")
    String newest;

    @Option(names = "--each-cluster", description = "Also hold out each cluster (system and release) in turn: a "
            + "new cluster of a GPU and families the fit has seen (one refit per cluster: minutes more)")
    boolean eachCluster;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Option(names = "--calibration", description = "Instead of the splits: for each system and release, the model "
            + "fitted without its runs, then calibrated on N of them (planned as plan --runs N chooses, and at random) "
            + "and scored on the others, for N in --calibration-runs")
    boolean calibration;

    @Option(names = "--calibration-runs", defaultValue = "1,3,5", split = ",", description = "Runs to calibrate on "
            + "(default ${DEFAULT-VALUE})")
    int[] calibrationRuns;

    @Option(names = "--draws", defaultValue = "10", description = "Random draws per group and N (--calibration), "
            + "per held-out family and budget (--learning-curve) (default ${DEFAULT-VALUE}, at most 1000)")
    int draws;

    @Option(names = "--learning-curve", description = "Instead of the splits: every other model family held out, "
            + "the others' runs added as GPU-hour budgets buy them (D-optimal as plan --budget-gpu-hours chooses, and "
            + "at random), with the held-out MRE and bias after each budget")
    boolean learningCurve;

    @Option(names = "--budgets-gpu-hours", defaultValue = "50,200,1000,5000", split = ",", description = "The "
            + "learning curve's budgets in GPU-hours (default ${DEFAULT-VALUE})")
    double[] budgets;

    @Option(names = "--out", description = "With the splits: write every held-out prediction to this CSV (split, the "
            + "run's id, family, system, release, GPU, precision, GPUs, measured, predicted and its 90%% interval in "
            + "ms, relative error)")
    Path out;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** The most random draws per group and number of runs. */
    static final int MAX_DRAWS = 1000;

    @Override
    public Integer call() throws Exception {
        long t0 = System.nanoTime();
        // an experiment's option given without its experiment would be accepted and ignored
        picocli.CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        record Tied(String option, String experiments, boolean run) {
        }
        for (Tied o : List.of(new Tied("--calibration-runs", "--calibration", calibration),
                new Tied("--draws", "--calibration or --learning-curve", calibration || learningCurve),
                new Tied("--budgets-gpu-hours", "--learning-curve", learningCurve))) {
            if (parsed.hasMatchedOption(o.option()) && !o.run()) {
                throw new IllegalArgumentException(o.option() + " is an option of " + o.experiments() + " (give "
                        + o.experiments() + ", or leave " + o.option() + " out)");
            }
        }
        if (calibration && learningCurve) {
            throw new IllegalArgumentException("--calibration and --learning-curve are two experiments: give one");
        }
        if (draws < 1 || draws > MAX_DRAWS) {
            // checked before the data are read (each draw is a calibration per group and N)
            throw new IllegalArgumentException("--draws must be in 1.." + MAX_DRAWS + ", got " + draws);
        }
        if (eachCluster && (calibration || learningCurve)) {
            throw new IllegalArgumentException("--each-cluster is a split; --calibration and --learning-curve run "
                    + "instead of the splits");
        }
        if (out != null && (calibration || learningCurve)) {
            throw new IllegalArgumentException("--out writes the splits' held-out predictions; --calibration and "
                    + "--learning-curve print their tables only");
        }
        if (out != null) {
            org.scaledl.model.file.SafeFiles.checkWritable(out);   // before the minute of fitting, not after
            Reports.requireExtension(out, "the held-out predictions", ".csv");
            Reports.notAnInput(out, "--data", data);
        }
        String gpu;
        org.scaledl.io.DeviceCatalog catalog = Catalogs.of(null, data);
        try {
            // the held-out GPU named before the data are read: an unknown one is a usage error, as predict's
            gpu = catalog.require(newest).name();
        } catch (org.scaledl.InvalidInputException e) {
            throw new IllegalArgumentException("--newest: " + e.detail());
        }
        GpuData d = GpuData.read(data, catalog);
        List<Sample> published = d.publishedRuns();
        if (published.isEmpty()) {
            throw new IllegalArgumentException(data + " has no published cluster runs (" + GpuData.LLM_PUBLIC + ")");
        }
        if (calibration) {
            return calibration(d, published, t0);
        }
        if (learningCurve) {
            return learningCurve(d, published, t0);
        }
        ClusterEvaluation e = ClusterEvaluation.run(EvaluateMegatronCommand.withoutMegatron(d), d.vtrainRuns(),
                published, gpu, eachCluster);
        if (out != null) {
            writePredictions(e, out);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("published_runs", published.size());
            root.put("vtrain_runs", d.vtrainRuns().size());
            root.put("seconds", seconds);
            ArrayNode arr = root.putArray("splits");
            for (ClusterEvaluation.Split s : e.splits()) {
                arr.addObject().put("name", s.name().strip()).put("train_runs", s.trainRuns())
                        .put("test_runs", s.testRuns()).put("mre", s.mre()).put("bias", s.bias())
                        .put("median", s.median()).put("p90", s.p90()).put("coverage", s.coverage());
            }
            Reports.printJson(root);
            return 0;
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%d published cluster runs (%s) with %d vTrain "
                + "runs always fitted%n", published.size(), data.resolve(GpuData.LLM_PUBLIC), d.vtrainRuns().size()));
        b.append(String.format(Locale.ROOT, "%-58s %6s %5s %7s %7s %7s %7s %8s%n", "split", "train", "test", "MRE",
                "bias", "median", "p90", "in 90%"));
        for (ClusterEvaluation.Split s : e.splits()) {
            b.append(String.format(Locale.ROOT, "%-58s %6.0f %5d %6.1f%% %+6.1f%% %6.1f%% %6.1f%% %7.0f%%%n",
                    s.name(), s.trainRuns(), s.testRuns(), 100 * s.mre(), 100 * s.bias(), 100 * s.median(),
                    100 * s.p90(), 100 * s.coverage()));
        }
        b.append(String.format(Locale.ROOT, "(%.0f s; bias > 0: predicted too slow)", seconds));
        System.out.println(b);
        return 0;
    }

    private int learningCurve(GpuData d, List<Sample> published, long t0) throws Exception {
        double prev = 0;
        for (double x : budgets) {
            if (!(x > prev && Double.isFinite(x))) {
                throw new IllegalArgumentException("--budgets-gpu-hours must be positive and ascending, got "
                        + java.util.Arrays.toString(budgets));
            }
            prev = x;
        }
        org.scaledl.model.plan.ProfilingCost cost = new ProfilingCostOptions().cost(true);
        List<ClusterEvaluation.CurvePoint> points = ClusterEvaluation.learningCurve(
                EvaluateMegatronCommand.withoutMegatron(d), d.vtrainRuns(), published, budgets, cost, draws, 7);
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("seconds", seconds);
            ArrayNode arr = root.putArray("learning_curve");
            for (ClusterEvaluation.CurvePoint c : points) {
                arr.addObject().put("budget_gpu_hours", c.budgetGpuHours()).put("planned_runs", c.plannedRuns())
                        .put("planned_gpu_hours", c.plannedGpuHours()).put("planned_mre", c.planned())
                        .put("planned_bias", c.plannedBias()).put("random_runs", c.randomRuns())
                        .put("random_mre", c.random()).put("random_bias", c.randomBias());
            }
            Reports.printJson(root);
            return 0;
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "every other model family held out; a run "
                + "costs its GPUs x (%.0f s + %d iterations)%n%12s %28s %22s%n", cost.overheadSeconds(),
                cost.warmupIterations() + cost.timedIterations(), "GPU-hours", "planned: runs, GPU-h, MRE (bias)",
                "random: runs, MRE (bias)"));
        for (ClusterEvaluation.CurvePoint c : points) {
            b.append(String.format(Locale.ROOT, "%12.0f %5d %8.0f %6.1f%% (%+5.1f) %6.1f %6.1f%% (%+5.1f)%n",
                    c.budgetGpuHours(), c.plannedRuns(), c.plannedGpuHours(), 100 * c.planned(),
                    100 * c.plannedBias(), c.randomRuns(), 100 * c.random(), 100 * c.randomBias()));
        }
        b.append(String.format(Locale.ROOT, "(%.0f s; the first row is vTrain alone, the last every run of the "
                + "fitted half)", seconds));
        System.out.println(b);
        return 0;
    }

    private int calibration(GpuData d, List<Sample> published, long t0) throws Exception {
        for (int n : calibrationRuns) {
            if (n < 1) {
                throw new IllegalArgumentException("--calibration-runs must be positive, got " + n);
            }
        }
        // a group scores the runs it was not calibrated on (ClusterEvaluation.fewestCalibrationRuns); the first
        // table's groups are systems and releases, the second's systems
        int most = java.util.Arrays.stream(calibrationRuns).max().orElse(1);
        int fewest = ClusterEvaluation.fewestCalibrationRuns(calibrationRuns);
        java.util.Map<String, Integer> clusters = new java.util.TreeMap<>();
        java.util.Map<String, Integer> bySystem = new java.util.TreeMap<>();
        published.forEach(s -> {
            clusters.merge(org.scaledl.model.exec.MegatronFit.cluster(s.workload()), 1, Integer::sum);
            bySystem.merge(s.workload().tag("system").orElse("?"), 1, Integer::sum);
        });
        List<String> small = clusters.entrySet().stream().filter(e -> e.getValue() < fewest)
                .map(e -> e.getKey() + " (" + e.getValue() + ")").toList();
        boolean anySystem = bySystem.values().stream().anyMatch(v -> v >= fewest);
        if (small.size() == clusters.size() && !anySystem) {
            throw org.scaledl.InvalidInputException.of(published.isEmpty() ? "no published runs to calibrate on"
                    : "no system, nor system and release, holds the " + fewest + " runs a calibration on " + most
                    + (most == 1 ? " run" : " runs") + " and its scoring need (" + String.join(", ", small) + ")");
        }
        if (!small.isEmpty()) {
            System.err.println("scaledl: note: " + small.size() + " of " + clusters.size() + " systems and releases "
                    + "left out of the first table, fewer than the " + fewest + " runs each needs: "
                    + String.join(", ", small));
        }
        org.scaledl.model.RuntimePredictor base = EvaluateMegatronCommand.withoutMegatron(d);
        List<ClusterEvaluation.Calibration> rows = ClusterEvaluation.calibration(base, d.vtrainRuns(), published,
                calibrationRuns, draws, 7);
        // a system held out with every release of it: a new generation's first cluster
        List<ClusterEvaluation.Calibration> systems = ClusterEvaluation.calibration(base, d.vtrainRuns(), published,
                calibrationRuns, draws, 7, s -> s.workload().tag("system").orElse("?"));
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("seconds", seconds);
            calibrationJson(root.putArray("calibration"), rows);
            calibrationJson(root.putArray("calibration_by_system"), systems);
            Reports.printJson(root);
            return 0;
        }
        StringBuilder b = new StringBuilder();
        calibrationTable(b, "system release (model fitted without it)", rows);
        b.append('\n');
        calibrationTable(b, "system (fitted without any of its releases)", systems);
        b.append(String.format(Locale.ROOT, "(%.0f s; MRE with the mean signed error in brackets, > 0: too slow)",
                seconds));
        System.out.println(b);
        return 0;
    }

    private static void calibrationJson(ArrayNode arr, List<ClusterEvaluation.Calibration> rows) {
        for (ClusterEvaluation.Calibration c : rows) {
            arr.addObject().put("group", c.group()).put("runs", c.runs()).put("before_mre", c.before())
                    .put("before_bias", c.beforeBias()).put("n", c.n()).put("planned_mre", c.planned())
                    .put("planned_bias", c.plannedBias()).put("random_mre", c.random())
                    .put("random_bias", c.randomBias()).put("before_inside", c.beforeInside())
                    .put("planned_inside", c.plannedInside()).put("random_inside", c.randomInside());
        }
    }

    private void calibrationTable(StringBuilder b, String heading, List<ClusterEvaluation.Calibration> rows) {
        b.append(String.format(Locale.ROOT, "%-40s %5s %15s %3s %15s %15s%n", heading, "runs", "before", "n",
                "planned", "random (mean)"));
        for (ClusterEvaluation.Calibration c : rows) {
            b.append(String.format(Locale.ROOT, "%-40s %5d %6.1f%% (%+5.1f) %3d %6.1f%% (%+5.1f) %6.1f%% (%+5.1f)%n",
                    c.group(), c.runs(), 100 * c.before(), 100 * c.beforeBias(), c.n(), 100 * c.planned(),
                    100 * c.plannedBias(), 100 * c.random(), 100 * c.randomBias()));
        }
        for (int n : calibrationRuns) {
            List<ClusterEvaluation.Calibration> at = rows.stream().filter(c -> c.n() == n).toList();
            b.append(String.format(Locale.ROOT, "mean over %d groups, n = %d: before %.1f%%, planned %.1f%% (%+.1f%%), "
                    + "random %.1f%% (%+.1f%%); inside the 90%% interval before %.0f%%, planned %.0f%%, random "
                    + "%.0f%%%n", at.size(), n,
                    100 * at.stream().mapToDouble(ClusterEvaluation.Calibration::before).average().orElse(Double.NaN),
                    100 * at.stream().mapToDouble(ClusterEvaluation.Calibration::planned).average().orElse(Double.NaN),
                    100 * at.stream().mapToDouble(ClusterEvaluation.Calibration::plannedBias).average()
                            .orElse(Double.NaN),
                    100 * at.stream().mapToDouble(ClusterEvaluation.Calibration::random).average().orElse(Double.NaN),
                    100 * at.stream().mapToDouble(ClusterEvaluation.Calibration::randomBias).average()
                            .orElse(Double.NaN),
                    100 * at.stream().mapToDouble(ClusterEvaluation.Calibration::beforeInside).average()
                            .orElse(Double.NaN),
                    100 * at.stream().mapToDouble(ClusterEvaluation.Calibration::plannedInside).average()
                            .orElse(Double.NaN),
                    100 * at.stream().mapToDouble(ClusterEvaluation.Calibration::randomInside).average()
                            .orElse(Double.NaN)));
        }
    }

    /** The splits' held-out predictions, one CSV row each (fields as a spreadsheet reads them safely). */
    static void writePredictions(ClusterEvaluation e, Path file) {
        StringBuilder b = new StringBuilder("split,id,family,system,release,device,precision,gpus,measured_ms,"
                + "predicted_ms,low_ms,high_ms,error\n");
        for (ClusterEvaluation.Scored s : e.predictions()) {
            var w = s.run().workload();
            b.append(s.split());
            for (String tag : List.of("id", "family", "system", "release")) {
                b.append(',').append(CsvTable.cell(w.tag(tag).orElse("")));
            }
            b.append(',').append(String.join(",", CsvTable.cell(w.device().map(org.scaledl.workload.Device::name)
                    .orElse("")), w.precision().label(),
                    Integer.toString(w.parallelism().ranks()), String.format(Locale.ROOT, "%.4f,%.4f,%.4f,%.4f,%.6f",
                            s.run().millis(), s.predicted(), s.low(), s.high(), s.error()))).append('\n');
        }
        Reports.write(file, b.toString());
    }
}
