package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import org.scaledl.eval.ErrorMetrics;
import org.scaledl.io.DatasetReader;
import org.scaledl.model.ProfilingPlan;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl learning-curve}: held-out accuracy against the number of profiled runs, for runs chosen D-optimally
 * and uniformly at random.
 */
@Command(name = "learning-curve", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Accuracy vs. profiled runs: D-optimal vs. random choice, on held-out "
        + "families; writes learning-curve.svg.")
final class LearningCurveCommand implements Callable<Integer> {
    static final double[] FRACTIONS = {0.05, 0.10, 0.15, 0.25, 0.50, 1.00};

    @Option(names = "--data", required = true, description = "Dataset folder")
    Path data;

    @Option(names = "--cv", defaultValue = "family", description = "Leave-one-out by: family or model")
    String by;

    @Option(names = "--random-seeds", defaultValue = "5", description = "Random subsets per size (default 5)")
    int seeds;

    @Option(names = "--out-dir", defaultValue = ".", description = "Where to write learning-curve.svg")
    Path outDir;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    /** The fit used at every size: fixed shrinkage, so that small subsets are not cross-validated on themselves. */
    private static final RuntimePredictor.Trainer TRAINER = RuntimePredictor.builder().shrinkage(1e-2).build();

    @Override
    public Integer call() throws Exception {
        if (!by.equals("family") && !by.equals("model")) {
            throw new IllegalArgumentException("--cv must be family or model, got '" + by + "'");
        }
        if (seeds < 1) {
            throw new IllegalArgumentException("--random-seeds must be >= 1");
        }
        Dataset d = DatasetReader.read(data);
        Set<String> groups = new LinkedHashSet<>(d.distinct(by));
        int k = FRACTIONS.length;
        List<List<double[]>> optimal = new ArrayList<>();
        List<List<double[]>> random = new ArrayList<>();
        for (int f = 0; f < k; f++) {
            optimal.add(new ArrayList<>());
            random.add(new ArrayList<>());
        }
        for (String g : groups) {
            List<Sample> train = d.samples().stream().filter(s -> !s.workload().tag(by).orElse("").equals(g))
                    .toList();
            List<Sample> test = d.samples().stream().filter(s -> s.workload().tag(by).orElse("").equals(g))
                    .toList();
            List<Workload> candidates = train.stream().map(Sample::workload).toList();
            for (int f = 0; f < k; f++) {
                int n = Math.max(2, (int) Math.round(FRACTIONS[f] * train.size()));
                List<Sample> chosen = new ArrayList<>();
                if (n >= train.size()) {
                    chosen.addAll(train);
                } else {
                    for (int i : ProfilingPlan.choose(candidates, List.of(), n, 1).indices()) {
                        chosen.add(train.get(i));
                    }
                }
                record(optimal.get(f), TRAINER.fit(chosen), test, 1);
                for (int s = 0; s < seeds; s++) {
                    List<Sample> shuffled = new ArrayList<>(train);
                    java.util.Collections.shuffle(shuffled, new Random(1000L * s + g.hashCode()));
                    record(random.get(f), TRAINER.fit(shuffled.subList(0, n)), test, seeds);
                }
            }
        }
        ObjectMapper om = new ObjectMapper();
        ObjectNode root = om.createObjectNode();
        ArrayNode rows = root.putArray("curve");
        double[][] mre = new double[2][k];
        for (int f = 0; f < k; f++) {
            ErrorMetrics a = metrics(optimal.get(f));
            ErrorMetrics b = metrics(random.get(f));
            mre[0][f] = a.mre();
            mre[1][f] = b.mre();
            ObjectNode o = rows.addObject();
            o.put("fraction", FRACTIONS[f]);
            o.putObject("d-optimal").put("mre", a.mre()).put("rmse_ms", a.rmseMs());
            o.putObject("random").put("mre", b.mre()).put("rmse_ms", b.rmseMs());
        }
        svg(mre, outDir.resolve("learning-curve.svg"));
        if (json) {
            System.out.println(om.writerWithDefaultPrettyPrinter().writeValueAsString(root));
        } else {
            System.out.printf(Locale.ROOT, "%-9s %13s %13s %15s %15s%n", "runs", "D-opt MRE", "random MRE",
                    "D-opt RMSE ms", "random RMSE ms");
            for (int f = 0; f < k; f++) {
                ErrorMetrics a = metrics(optimal.get(f));
                ErrorMetrics b = metrics(random.get(f));
                System.out.printf(Locale.ROOT, "%7.0f%% %12.1f%% %12.1f%% %15.1f %15.1f%n", 100 * FRACTIONS[f],
                        100 * a.mre(), 100 * b.mre(), a.rmseMs(), b.rmseMs());
            }
            System.out.println("random: mean over " + seeds + " subsets per size; wrote "
                    + outDir.resolve("learning-curve.svg"));
        }
        return 0;
    }

    /** Adds (prediction, measurement, weight) triples. */
    private static void record(List<double[]> out, RuntimePredictor p, List<Sample> test, int copies) {
        for (Sample s : test) {
            out.add(new double[] {p.predictMillis(s.workload()), s.millis(), 1.0 / copies});
        }
    }

    /** Weighted MRE and RMSE (random subsets each weigh 1/seeds). */
    private static ErrorMetrics metrics(List<double[]> rows) {
        double w = 0;
        double rel = 0;
        double sq = 0;
        for (double[] r : rows) {
            w += r[2];
            rel += r[2] * Math.abs(r[0] - r[1]) / r[1];
            sq += r[2] * (r[0] - r[1]) * (r[0] - r[1]);
        }
        double mre = rel / w;
        return new ErrorMetrics((int) Math.round(w), mre, Math.sqrt(sq / w), 100 * mre, Double.NaN, Double.NaN);
    }

    private static void svg(double[][] mre, Path file) throws java.io.IOException {
        int w = 560;
        int h = 380;
        int pad = 60;
        double max = 0;
        for (double[] m : mre) {
            for (double v : m) {
                max = Math.max(max, v);
            }
        }
        max = Math.ceil(max * 10) / 10;
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\"><rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n",
                w, h, w, h));
        String[] names = {"D-optimal", "random"};
        String[] colours = {"#d62728", "#1f77b4"};
        for (int m = 0; m < 2; m++) {
            StringBuilder pts = new StringBuilder();
            for (int f = 0; f < FRACTIONS.length; f++) {
                double x = pad + (Math.log(FRACTIONS[f]) - Math.log(0.05)) / (Math.log(1) - Math.log(0.05))
                        * (w - 2 * pad);
                double y = h - pad - mre[m][f] / max * (h - 2 * pad);
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n", x, y,
                        colours[m]));
                if (m == 0) {
                    sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f%%"
                            + "</text>%n", x, h - pad + 18, 100 * FRACTIONS[f]));
                }
            }
            sb.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\"/>%n", pts,
                    colours[m]));
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>%n", w - 150,
                    pad + 16 * m, colours[m], names[m]));
        }
        for (int t = 0; t <= 4; t++) {
            double v = max * t / 4;
            double y = h - pad - v / max * (h - 2 * pad);
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f%%</text>"
                    + "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n", pad - 6, y + 4,
                    100 * v, pad, y, w - pad, y));
        }
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">share of training runs "
                + "profiled (log scale)</text>%n", w / 2, h - 15));
        sb.append(String.format(Locale.ROOT, "<text x=\"15\" y=\"%d\" transform=\"rotate(-90 15 %d)\" "
                + "text-anchor=\"middle\">held-out MRE</text>%n</svg>%n", h / 2, h / 2));
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, sb.toString());
    }
}
