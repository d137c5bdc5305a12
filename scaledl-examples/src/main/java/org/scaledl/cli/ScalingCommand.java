package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.io.CsvTable;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code scaledl scaling --model gpu --graph g.onnx --batch 64 --device "Tesla T4" --gpus 1,2,4,8 --out s.svg}: a
 * job's predicted time and throughput as data-parallel workers (GPUs, or CPU workers) and the batch grow, with the
 * 90 % interval, measured points over them where given; an SVG of four panels, and a table or JSON.
 */
@Command(name = "scaling", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Plot a job's predicted iteration time and throughput against the number of data-parallel "
                + "workers (GPUs) and against the batch, with the 90% interval and measured points (SVG).")
final class ScalingCommand implements Callable<Integer> {
    @Mixin
    JobOptions job;

    @Option(names = "--gpus", split = ",", description = "Data-parallel workers to sweep (each a replica of the "
            + "job's tensor x pipeline GPUs; default 1,2,4,8,16,32,64)")
    List<Integer> workers = new ArrayList<>(List.of(1, 2, 4, 8, 16, 32, 64));

    @Option(names = "--batches", split = ",", description = "Batches (per micro-batch) to sweep at the job's "
            + "--world-size (default 1,2,4,...,256 up to 8 x --batch)")
    List<Integer> batches;

    @Option(names = "--measured", description = "CSV of measured points: world_size (or gpus), batch, measured_ms; "
            + "drawn over the prediction where they match a sweep")
    Path measured;

    @Option(names = "--out", defaultValue = "scaling.svg", description = "SVG to write (default ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--json", description = "Print the predictions as JSON instead of a table")
    boolean json;

    /** One predicted point of a sweep. */
    record Point(int workers, int batch, double ms, double lowMs, double highMs, double samplesPerSecond) {
    }

    @Override
    public Integer call() throws Exception {
        if (job.graph == null == (job.transformer == null) || job.batch == null) {
            throw new IllegalArgumentException("say what to plot: --graph or --transformer (with --seq), and --batch");
        }
        RuntimePredictor p = ModelArgument.load(job.model);
        if (job.graphOptions.allowPartial) {
            p = p.allowingPartialGraphs();
        }
        Workload base = job.workload(p);
        for (int w : workers) {
            org.scaledl.Checks.argument(w > 0, "--gpus must be positive, got %s", w);
        }
        List<Integer> bs = batches;
        if (bs == null) {
            bs = new ArrayList<>();
            for (int b = 1; b <= Math.max(8, 8 * job.batch); b *= 2) {
                bs.add(b);
            }
        }
        for (int b : bs) {
            org.scaledl.Checks.argument(b > 0, "--batches must be positive, got %s", b);
        }
        int m = base.parallelism().microBatches();
        List<Point> byWorkers = new ArrayList<>();
        for (int w : workers.stream().sorted().distinct().toList()) {
            byWorkers.add(point(p, base, w, job.batch, m));
        }
        List<Point> byBatch = new ArrayList<>();
        for (int b : bs.stream().sorted().distinct().toList()) {
            byBatch.add(point(p, base, base.parallelism().data(), b, m));
        }
        List<double[]> points = measured == null ? List.of() : readMeasured(measured);
        String title = base.graph().name() + " on " + JobOptions.machine(p, base);
        Reports.write(out, svg(title, base, byWorkers, byBatch, points, m));
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("graph", base.graph().name());
            root.put("machine", JobOptions.machine(p, base));
            put(root.putArray("by_workers"), byWorkers);
            put(root.putArray("by_batch"), byBatch);
            root.put("svg", out.toString());
            System.out.println(om.writerWithDefaultPrettyPrinter().writeValueAsString(root));
        } else {
            StringBuilder sb = new StringBuilder(title).append('\n');
            sb.append(String.format(Locale.ROOT, "%8s %6s %12s %12s %12s %14s%n", "workers", "batch", "ms", "low ms",
                    "high ms", "samples/s"));
            for (List<Point> sweep : List.of(byWorkers, byBatch)) {
                for (Point x : sweep) {
                    sb.append(String.format(Locale.ROOT, "%8d %6d %12.2f %12.2f %12.2f %14.1f%n", x.workers(),
                            x.batch(), x.ms(), x.lowMs(), x.highMs(), x.samplesPerSecond()));
                }
            }
            sb.append("wrote ").append(out);
            System.out.println(sb);
        }
        return 0;
    }

    private static Point point(RuntimePredictor p, Workload base, int workers, int batch, int micro) {
        Parallelism q = base.parallelism();
        Workload w = base.toBuilder().batch(Math.multiplyExact(batch, micro)).parallelism(new Parallelism(workers,
                q.tensor(), q.pipeline(), q.microBatches(), q.sequenceParallel(), q.zeroStage(), q.virtualStages(),
                q.context(), q.expert(), q.expertTensor()))
                .build();
        Prediction pr = p.predict(w);
        return new Point(workers, batch, pr.millis(), pr.lowMillis(), pr.highMillis(),
                pr.throughputPerSecond().orElse((double) batch * micro * workers / (pr.millis() / 1000)));
    }

    private static void put(ArrayNode arr, List<Point> sweep) {
        for (Point x : sweep) {
            arr.addObject().put("world_size", x.workers()).put("batch", x.batch()).put("ms", x.ms())
                    .put("low_ms", x.lowMs()).put("high_ms", x.highMs()).put("throughput_per_s", x.samplesPerSecond());
        }
    }

    /** Measured points: {world_size, batch, ms}. */
    private static List<double[]> readMeasured(Path csv) {
        CsvTable t = CsvTable.read(csv, "batch", "measured_ms");
        String workersColumn = t.has("world_size") ? "world_size" : "gpus";
        if (!t.has(workersColumn)) {
            throw org.scaledl.InvalidInputException.inSource(csv.toString(), "needs a world_size (or gpus) column");
        }
        List<double[]> out = new ArrayList<>();
        for (int r = 0; r < t.size(); r++) {
            out.add(new double[] {t.positiveInt(r, workersColumn), t.positiveInt(r, "batch"),
                t.positiveFinite(r, "measured_ms")});
        }
        return out;
    }

    private static String svg(String title, Workload base, List<Point> byWorkers, List<Point> byBatch,
            List<double[]> measured, int micro) {
        int batch = byWorkers.get(0).batch();
        int fixedWorkers = base.parallelism().data();
        List<double[]> onWorkers = measured.stream().filter(x -> x[1] == batch).toList();
        List<double[]> onBatch = measured.stream().filter(x -> x[0] == fixedWorkers).toList();
        String predicted = "#1f77b4";
        String throughput = "#2ca02c";
        String meas = "#d62728";
        int w = 960;
        int h = 680;
        List<String> panels = List.of(
                SvgChart.panel(0, 30, w / 2, 320, "time vs workers (batch " + batch + ")", "data-parallel workers",
                        "ms per iteration", List.of(series("predicted (90% interval)", predicted, byWorkers, true,
                                false, micro)), List.of(points("measured", meas, onWorkers, true, false, micro))),
                SvgChart.panel(w / 2, 30, w / 2, 320, "throughput vs workers", "data-parallel workers",
                        "samples per second", List.of(series("predicted", throughput, byWorkers, true, true, micro)),
                        List.of(points("measured", meas, onWorkers, true, true, micro))),
                SvgChart.panel(0, 360, w / 2, 320, "time vs batch (" + fixedWorkers + " workers)",
                        "batch per micro-batch", "ms per iteration", List.of(series("predicted (90% interval)",
                                predicted, byBatch, false, false, micro)),
                        List.of(points("measured", meas, onBatch, false, false, micro))),
                SvgChart.panel(w / 2, 360, w / 2, 320, "throughput vs batch", "batch per micro-batch",
                        "samples per second", List.of(series("predicted", throughput, byBatch, false, true, micro)),
                        List.of(points("measured", meas, onBatch, false, true, micro))));
        return SvgChart.document(w, h + 20, title, panels);
    }

    private static SvgChart.Series series(String name, String colour, List<Point> pts, boolean byWorkers,
            boolean throughputAxis, int micro) {
        int n = pts.size();
        double[] x = new double[n];
        double[] y = new double[n];
        double[] lo = new double[n];
        double[] hi = new double[n];
        for (int i = 0; i < n; i++) {
            Point q = pts.get(i);
            x[i] = byWorkers ? q.workers() : q.batch();
            double samples = (double) q.batch() * micro * q.workers();
            y[i] = throughputAxis ? q.samplesPerSecond() : q.ms();
            lo[i] = throughputAxis ? samples / (q.highMs() / 1000) : q.lowMs();
            hi[i] = throughputAxis ? samples / (q.lowMs() / 1000) : q.highMs();
        }
        return new SvgChart.Series(name, colour, x, y, lo, hi);
    }

    private static SvgChart.Points points(String name, String colour, List<double[]> pts, boolean byWorkers,
            boolean throughputAxis, int micro) {
        double[] x = new double[pts.size()];
        double[] y = new double[pts.size()];
        for (int i = 0; i < pts.size(); i++) {
            double[] q = pts.get(i);
            x[i] = byWorkers ? q[0] : q[1];
            y[i] = throughputAxis ? q[1] * micro * q[0] / (q[2] / 1000) : q[2];
        }
        return new SvgChart.Points(name, colour, x, y);
    }
}
