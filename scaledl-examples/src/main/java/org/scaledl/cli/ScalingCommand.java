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
        description = "Plot a job's predicted iteration time and throughput against the number of GPUs (data-parallel "
                + "replicas of the job) and against the batch, with the 90%% interval, measured points and the model "
                + "calibrated on them, and the points that do not fit in memory marked (SVG).")
final class ScalingCommand implements Callable<Integer> {
    @Mixin
    JobOptions job;

    @Option(names = "--gpus", split = ",", description = "GPUs to sweep, every GPU of the job as predict --gpus "
            + "counts them: each a multiple of the job's tensor x pipeline x context GPUs, a data-parallel replica "
            + "(default the GPUs of 1, 2, 4, ... 64 replicas; CPU workers for a host model)")
    List<Integer> gpus;

    @Option(names = "--batches", split = ",", description = "Batches (per micro-batch) to sweep at the job's "
            + "--world-size, or without one at the fewest of --gpus (default 1,2,4,... up to 8 x --batch)")
    List<Integer> batches;

    @Option(names = "--measured", description = "CSV of measured points: world_size (data-parallel replicas) or "
            + "gpus, batch, measured_ms; drawn over the prediction where they match a sweep, and the model calibrated "
            + "on them drawn beside it")
    Path measured;

    @Option(names = "--out", defaultValue = "scaling.svg", description = "SVG to write (default ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--json", description = "Print the predictions as JSON instead of a table")
    boolean json;

    /** Read to be refused with the reason: the sweep keeps a replica's batch (weak scaling). */
    @Option(names = "--global-batch", hidden = true)
    Integer globalBatch;

    /** The largest batch a default sweep reaches. */
    static final int MAX_SWEPT_BATCH = 1 << 20;

    /**
     * One predicted point of a sweep.
     *
     * @param workers    data-parallel replicas
     * @param gpus       GPUs (or CPU workers) in all
     * @param recompute  the recomputation the point runs with (what {@code auto} chose: {@code full:21} for the
     *                   full recomputation of 21 layers a chunk; {@code none+off:28} for 28 layers' activations a
     *                   chunk offloaded to the host)
     * @param prediction the point's prediction: its time and interval, memory per GPU, tokens per second per GPU
     *                   where the model knows them
     */
    record Point(int workers, int gpus, int batch, double samplesPerSecond, String recompute, Prediction prediction) {
        double ms() {
            return prediction.millis();
        }

        double lowMs() {
            return prediction.lowMillis();
        }

        double highMs() {
            return prediction.highMillis();
        }

        /** Whether the job fits in the device's memory (true where memory is not estimated). */
        boolean fits() {
            return !prediction.outOfMemory();
        }
    }

    @Override
    public Integer call() throws Exception {
        if (globalBatch != null) {
            throw new IllegalArgumentException("--global-batch: scaling sweeps weak scaling, every point keeping a "
                    + "replica's batch (--batch x --micro-batches), so the global batch grows with the replicas; for a "
                    + "fixed global batch on more GPUs run layouts at each GPU count (or predict --global-batch for one "
                    + "layout at each)");
        }
        if (job.graph == null == (job.transformer == null) || job.batch == null) {
            throw new IllegalArgumentException("say what to plot: --graph or --transformer (with --seq), and --batch");
        }
        org.scaledl.model.file.SafeFiles.checkWritable(out);
        Reports.requireExtension(out, "the chart", ".svg");
        Reports.notAnInput(out, "--measured", measured);
        Reports.notAnInput(out, "--devices", job.devices);
        // picocli reads "--gpus ," as an empty list: a sweep of nothing is refused, as is a point given twice
        sweep("--gpus", gpus, Integer.MAX_VALUE);
        sweep("--batches", batches, org.scaledl.io.DatasetReader.MAX_BATCH);
        RuntimePredictor p = ModelArgument.load(job.model);
        if (job.graphOptions.allowPartial) {
            p = p.allowingPartialGraphs();
        }
        // the sweep in data-parallel replicas: --gpus counts every GPU, as predict --gpus does; by default 1, 2, 4, ...
        // 64 replicas, those an expert layout can spread its experts over (8 expert ranks need 8 / (tensor x context)
        // replicas or a multiple). A count refused for its replicas alone is named here; what is wrong whatever the
        // count (a degree that does not divide the heads, a precision the GPU lacks) is left to the job's own checks.
        // the graph read once: the expert tensor degree not given is its default for the graph
        org.scaledl.graph.ModelGraph graph = job.graph();
        expertTensor = job.cluster.expertTensor(positive(job.tensor), graph);
        List<Integer> workers = new ArrayList<>();
        // how a refusal names each point
        List<String> named = new ArrayList<>();
        List<Integer> leftOut = new ArrayList<>();
        if (gpus == null) {
            for (int k = 1; k <= 64; k *= 2) {
                if (replicasProblem(k).isEmpty()) {
                    workers.add(k);
                    named.add(replicas(k) + " of the default sweep");
                } else if (forTheReplicas(k)) {
                    leftOut.add(k);
                }
            }
            if (workers.isEmpty() && !leftOut.isEmpty()) {
                throw org.scaledl.InvalidInputException.of(expertLayout() + " divides none of the default sweep's 1 "
                        + "to 64 replicas: give the GPUs to sweep with --gpus (" + replicasProblem(1).orElseThrow()
                        + ")");
            }
            if (workers.isEmpty()) {
                // wrong whatever the count: the job's own checks say what
                workers.add(1);
                named.add(replicas(1) + " of the default sweep");
            }
        } else {
            for (int g : gpus) {
                int w = JobOptions.replicas(g, job.tensor, job.pipeline, job.cluster.context);
                String point = "--gpus " + g + " (" + replicas(w) + ")";
                if (forTheReplicas(w)) {
                    throw org.scaledl.InvalidInputException.of(point + ": " + replicasProblem(w).orElseThrow());
                }
                workers.add(w);
                named.add(point);
            }
        }
        if (job.worldSize == null) {
            // the batch sweep on GPUs the caller asked for: the fewest of --gpus (or of the default sweep), not one
            // replica's
            job.worldSize = workers.stream().min(Integer::compare).orElseThrow();
        }
        Workload base = job.workload(p, graph);
        if (!leftOut.isEmpty()) {
            System.err.println("scaledl: note: the default sweep leaves out " + leftOut.size() + (leftOut.size() == 1
                    ? " replica count" : " replica counts") + " (" + leftOut.stream().map(String::valueOf).collect(
                    java.util.stream.Collectors.joining(", ")) + ") that " + expertLayout() + " cannot spread its "
                    + "experts over (--gpus names others)");
        }
        for (int k = 0; k < workers.size(); k++) {
            checked(p, base, workers.get(k), job.batch, base.parallelism().microBatches(), named.get(k));
        }
        List<Integer> bs = batches;
        if (bs == null) {
            bs = new ArrayList<>();
            long top = Math.min(MAX_SWEPT_BATCH, Math.max(8L, 8L * job.batch));
            for (long b = 1; b <= top; b *= 2) {
                bs.add((int) b);
            }
        }
        int m = base.parallelism().microBatches();
        for (int b : bs) {
            org.scaledl.Checks.argument(b > 0, "--batches must be positive, got %s", b);
            org.scaledl.Checks.argument((long) b * m <= Integer.MAX_VALUE, "--batches %s x %s micro-batches is too "
                    + "large (at most %s samples per replica)", b, m, Integer.MAX_VALUE);
            checked(p, base, base.parallelism().data(), b, m, "--batches " + b);
        }
        List<Integer> sweptWorkers = workers.stream().sorted().distinct().toList();
        List<Integer> sweptBatches = bs.stream().sorted().distinct().toList();
        // a point's device read as --device is: the command's catalog (with --devices' rows) or the model's machines
        RuntimePredictor model = p;
        java.util.function.Function<String, java.util.Optional<String>> deviceOf = cell -> {
            try {
                return job.resolveDevice(model, cell).map(org.scaledl.workload.Device::name);
            } catch (RuntimeException e) {
                return java.util.Optional.empty();
            }
        };
        List<double[]> points = measured == null ? List.of() : readMeasured(measured, p, base, deviceOf);
        long offSweeps = points.stream().filter(x -> !onWorkersSweep(x, job.batch, sweptWorkers)
                && !onBatchSweep(x, base.parallelism().data(), sweptBatches)).count();
        if (offSweeps > 0) {
            System.err.println("scaledl: warning: " + offSweeps + " measured point" + (offSweeps == 1 ? " lies" : "s lie")
                    + " on neither sweep (batch " + job.batch + " on " + sweptWorkers.get(0) + " to "
                    + sweptWorkers.get(sweptWorkers.size() - 1) + " replicas, or " + replicas(base.parallelism().data())
                    + " at batch " + sweptBatches.get(0)
                    + " to " + sweptBatches.get(sweptBatches.size() - 1)
                    + "): the calibration uses " + (offSweeps == 1 ? "it" : "them") + ", the plot does not show "
                    + (offSweeps == 1 ? "it" : "them"));
        }
        RuntimePredictor calibrated = null;
        Workload measuredOn = base;
        boolean calibrate = true;
        if (!points.isEmpty() && !p.modelsClusters() && base.device().isEmpty()) {
            // a CPU model calibrates a machine: the points are the one it knows, or the --device named
            if (p.machines().size() == 1) {
                measuredOn = base.toBuilder().device(job.resolveDevice(p, p.machines().get(0)).orElseThrow())
                        .build();
            } else if (!p.machines().isEmpty()) {
                System.err.println("scaledl: warning: the model is not calibrated on the measured points: "
                        + job.model + " knows " + p.machines().size() + " machines " + p.machines() + "; give theirs "
                        + "with --device NAME (the points are drawn over the model's curve)");
                calibrate = false;
            }
            // (a model of one unnamed machine, its dataset without a machine.json, calibrates it on points of none)
        }
        if (!points.isEmpty() && calibrate) {
            List<org.scaledl.workload.Sample> runs = new ArrayList<>();
            // a point the model says does not fit is said, as fit --calibrate says a run's (is it the job that ran?)
            List<String> unfitting = new ArrayList<>();
            for (double[] x : points) {
                org.scaledl.workload.Sample run = org.scaledl.workload.Sample.of(at(measuredOn, (int) x[0], (int) x[1],
                        m).toBuilder().tag(org.scaledl.io.DatasetReader.SOURCE_TAG, measured + ":" + (int) x[3])
                        .build(), x[2]);
                runs.add(run);
                try {
                    if (p.predict(run.workload()).outOfMemory()) {
                        unfitting.add(String.format(Locale.ROOT, "world_size %d, batch %d", (int) x[0], (int) x[1]));
                    }
                } catch (IllegalArgumentException e) {
                    // (the calibration below says why it cannot use the point)
                }
            }
            if (!unfitting.isEmpty()) {
                System.err.println("scaledl: warning: calibrating on measured point" + (unfitting.size() == 1 ? " "
                        : "s ") + "(" + String.join("; ", unfitting) + "), which the model predicts "
                        + (unfitting.size() == 1 ? "does" : "do") + " not fit in the GPUs' memory: is "
                        + (unfitting.size() == 1 ? "it" : "each") + " the job that ran (batch per micro-batch, the "
                        + "layout, the GPU)?");
            }
            try {
                calibrated = p.calibrate(runs);
            } catch (IllegalArgumentException | org.scaledl.InvalidInputException e) {
                System.err.println("scaledl: warning: the model cannot be calibrated on the measured points ("
                        + e.getMessage() + "); only the bundled curve is drawn");
            }
        }
        List<Point> byWorkers = new ArrayList<>();
        List<Point> byWorkersCal = new ArrayList<>();
        for (int w : sweptWorkers) {
            byWorkers.add(point(p, base, w, job.batch, m));
            if (calibrated != null) {
                byWorkersCal.add(point(calibrated, base, w, job.batch, m));
            }
        }
        List<Point> byBatch = new ArrayList<>();
        List<Point> byBatchCal = new ArrayList<>();
        for (int b : sweptBatches) {
            byBatch.add(point(p, base, base.parallelism().data(), b, m));
            if (calibrated != null) {
                byBatchCal.add(point(calibrated, base, base.parallelism().data(), b, m));
            }
        }
        // the points beyond the GPU counts the model was fitted on, once for the whole sweep (predict warns of each)
        java.util.Map<String, java.util.TreeSet<Integer>> beyond = new java.util.TreeMap<>();
        for (Point x : byWorkers) {
            x.prediction().warnings().stream()
                    .filter(w -> w.kind() == org.scaledl.model.PredictionWarning.Kind.OUTSIDE_WORLD_SIZE_RANGE)
                    .forEach(w -> beyond.computeIfAbsent(w.range(), k -> new java.util.TreeSet<>()).add(x.gpus()));
        }
        String units = p.modelsClusters() ? "GPU" : "worker";
        // what the sweep says of some points, once (stderr and the JSON's warnings: kind, message)
        List<org.scaledl.model.PredictionWarning> sweepWarnings = new ArrayList<>();
        beyond.forEach((range, gpus) -> sweepWarnings.add(sweepWarning(
                org.scaledl.model.PredictionWarning.Kind.OUTSIDE_WORLD_SIZE_RANGE, gpus.size() + " point"
                + (gpus.size() == 1 ? " lies" : "s lie") + " beyond the " + units + " counts the model was "
                + "fitted on (" + range + "): " + gpus.stream().map(String::valueOf).collect(
                        java.util.stream.Collectors.joining(", ")) + " " + units + "s (predict names each)")));
        List<Point> oom = java.util.stream.Stream.concat(byWorkers.stream(), byBatch.stream()).filter(x -> !x.fits())
                .toList();
        if (!oom.isEmpty()) {
            // a job on both sweeps (the base batch on the base GPUs) is one point
            List<String> jobs = oom.stream().map(ScalingCommand::job).distinct().toList();
            sweepWarnings.add(sweepWarning(org.scaledl.model.PredictionWarning.Kind.OUT_OF_MEMORY, jobs.size()
                    + (jobs.size() == 1 ? " point does" : " points do") + " not fit in the device's memory (marked in "
                    + "the plot and the table): " + String.join(", ", jobs)));
        }
        List<String> near = java.util.stream.Stream.concat(byWorkers.stream(), byBatch.stream())
                .filter(x -> x.fits() && x.prediction().warnings().stream().anyMatch(w -> w.kind()
                        == org.scaledl.model.PredictionWarning.Kind.NEAR_MEMORY_LIMIT))
                .map(ScalingCommand::job).distinct().toList();
        if (!near.isEmpty()) {
            // (each point's own warning is per point, and left out of the warnings every point shares)
            sweepWarnings.add(sweepWarning(org.scaledl.model.PredictionWarning.Kind.NEAR_MEMORY_LIMIT, near.size()
                    + (near.size() == 1 ? " point fills" : " points fill") + " the GPUs' memory to near its capacity "
                    + "(the recomputation or offloading chosen to fit, column recompute; an allocator's fragmentation "
                    + "may not leave room: predict says by how much): " + String.join(", ", near)));
        }
        sweepWarnings.forEach(x -> System.err.println("scaledl: warning: " + x.message()));
        // what predict says of every point alike (a precision run as another, an unseen device or phase), once; what
        // varies along the sweeps (memory, the fitted ranges, the recomputation chosen) is said above, per point, and
        // a note of some points only (ZeRO with one replica) is predict's to give for that job
        java.util.Set<org.scaledl.model.PredictionWarning.Kind> perPoint = java.util.EnumSet.of(
                org.scaledl.model.PredictionWarning.Kind.OUT_OF_MEMORY,
                org.scaledl.model.PredictionWarning.Kind.NEAR_MEMORY_LIMIT,
                org.scaledl.model.PredictionWarning.Kind.OUTSIDE_WORLD_SIZE_RANGE,
                org.scaledl.model.PredictionWarning.Kind.OUTSIDE_BATCH_RANGE,
                org.scaledl.model.PredictionWarning.Kind.CHOSEN,
                org.scaledl.model.PredictionWarning.Kind.ASSUMED);
        List<Point> all = java.util.stream.Stream.concat(byWorkers.stream(), byBatch.stream()).toList();
        // (a warning is every point's where its kind and words are, whatever share of each point it concerns: the
        // line leaves the share out, as the JSON does)
        java.util.function.Function<org.scaledl.model.PredictionWarning, String> line = w -> PredictCommand
                .stderrLine(w, false);
        java.util.Map<String, org.scaledl.model.PredictionWarning> common = new java.util.LinkedHashMap<>();
        all.get(0).prediction().warnings().stream().filter(w -> !perPoint.contains(w.kind()))
                .forEach(w -> common.putIfAbsent(line.apply(w), w));
        all.forEach(x -> common.keySet().retainAll(x.prediction().warnings().stream()
                .filter(w -> !perPoint.contains(w.kind())).map(line).toList()));
        common.keySet().forEach(System.err::println);
        // the machine is the sweep's first point's: a sweep over GPUs says its range
        int fewest = byWorkers.stream().mapToInt(Point::gpus).min().orElse(0);
        int most = byWorkers.stream().mapToInt(Point::gpus).max().orElse(0);
        String title = base.graph().name() + (p.modelsClusters() && base.device().isPresent() ? " in "
                + base.precision().label() : "") + " on " + JobOptions.machine(p, base) + (most > fewest
                ? String.format(Locale.ROOT, " (the first point; the sweep runs %d to %d %s)", fewest, most,
                        p.modelsClusters() ? "GPUs" : "workers") : "");
        Reports.write(out, svg(title, base, byWorkers, byBatch, byWorkersCal, byBatchCal, points, m, units + "s"));
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("graph", base.graph().name());
            root.put("machine", JobOptions.machine(p, base));
            // what every point's prediction says alike, said once (stderr says it too)
            ArrayNode alike = root.putArray("warnings");
            sweepWarnings.forEach(x -> PredictCommand.said(alike, x));
            common.values().forEach(w -> PredictCommand.said(alike, w));
            put(root.putArray("by_workers"), byWorkers);
            put(root.putArray("by_batch"), byBatch);
            if (calibrated != null) {
                put(root.putArray("calibrated_by_workers"), byWorkersCal);
                put(root.putArray("calibrated_by_batch"), byBatchCal);
            }
            root.put("svg", out.toString());
            Reports.printJson(root);
        } else {
            // the graph's name comes from its file or configuration: no control character of it reaches the terminal
            StringBuilder sb = new StringBuilder(org.scaledl.InvalidInputException.escaped(title)).append('\n');
            // a host model's columns count CPU workers, not GPUs
            sb.append(String.format(Locale.ROOT, "%8s %8s %6s %12s %12s %12s %14s %10s %8s %-14s%s%n", "replicas",
                    p.modelsClusters() ? "GPUs" : "workers", "batch", "ms", "low ms", "high ms", "samples/s",
                    p.modelsClusters() ? "tok/s/GPU" : "tok/s/wkr", "mem GiB", "recompute", calibrated == null ? ""
                            : "  calibrated ms"));
            List<List<Point>> sweeps = List.of(byWorkers, byBatch);
            List<List<Point>> cal = List.of(byWorkersCal, byBatchCal);
            for (int k = 0; k < 2; k++) {
                for (int i = 0; i < sweeps.get(k).size(); i++) {
                    Point x = sweeps.get(k).get(i);
                    double rate = x.samplesPerSecond();
                    sb.append(String.format(Locale.ROOT, "%8d %8d %6d %12.2f %12.2f %12.2f %14s %10s %8s %-14s%s%s%n",
                            x.workers(), x.gpus(), x.batch(), x.ms(), x.lowMs(), x.highMs(), String.format(Locale.ROOT,
                                    rate >= 100 ? "%.0f" : rate >= 1 ? "%.1f" : "%.3f", rate),
                            x.prediction().tokensPerSecondPerGpu().isPresent() ? String.format(Locale.ROOT, "%.0f",
                                    x.prediction().tokensPerSecondPerGpu().getAsDouble()) : "-",
                            x.prediction().memoryGb().isPresent() ? String.format(Locale.ROOT, "%.1f",
                                    x.prediction().memoryGb().getAsDouble()) : "-",
                            x.recompute(),
                            calibrated == null ? "" : String.format(Locale.ROOT, "  %13.2f", cal.get(k).get(i).ms()),
                            x.fits() ? "" : "  (out of memory)"));
                }
            }
            sb.append("wrote ").append(out);
            System.out.println(sb);
        }
        return 0;
    }

    /** A point's job as the sweep's warnings name it: {@code batch 2 on 32 GPUs}. */
    private static String job(Point x) {
        return "batch " + x.batch() + " on " + x.gpus() + (x.gpus() == 1 ? " GPU" : " GPUs");
    }

    /** {@code 1 replica}, {@code 4 replicas}. */
    private static String replicas(int n) {
        return n + (n == 1 ? " replica" : " replicas");
    }

    /** A degree not given: 1. */
    private static int positive(Integer value) {
        return value == null ? 1 : value;
    }

    /** The job's expert tensor degree (given, or its default for the graph), once the graph is read. */
    private int expertTensor = 1;

    /** {@code expert x expert tensor parallelism (8 x 1)}, as the layout's checks name it. */
    private String expertLayout() {
        return "expert x expert tensor parallelism (" + positive(job.cluster.expert) + " x " + expertTensor + ")";
    }

    /**
     * What is wrong with the job's tensor, context and expert degrees over {@code replicas} data-parallel replicas
     * (the checks of {@link Parallelism} that the replicas enter), if anything.
     */
    private java.util.Optional<String> replicasProblem(int replicas) {
        try {
            new Parallelism(replicas, positive(job.tensor), 1, 1, false, 0, 1, positive(job.cluster.context),
                    positive(job.cluster.expert), expertTensor);
            return java.util.Optional.empty();
        } catch (IllegalArgumentException e) {
            return java.util.Optional.of(String.valueOf(e.getMessage()));
        }
    }

    /**
     * Whether {@code replicas} is refused for the count itself: another count (as many replicas as expert ranks)
     * passes the same checks.
     */
    private boolean forTheReplicas(int replicas) {
        long ranks = (long) positive(job.cluster.expert) * expertTensor;
        return replicasProblem(replicas).isPresent() && ranks >= 1 && ranks <= Parallelism.MAX_RANKS
                && replicasProblem((int) ranks).isEmpty();
    }

    /**
     * The base job with another data-parallel degree and batch per micro-batch, refused as bad input (exit 1, as
     * {@code predict} refuses it) where that layout does not go with the model, naming the point ({@code where}).
     */
    private static void checked(RuntimePredictor p, Workload base, int workers, int batch, int micro, String where) {
        problem(p, base, workers, batch, micro).ifPresent(m -> {
            throw org.scaledl.InvalidInputException.of(where + ": " + m);
        });
    }

    /** What does not go with the model in the base job at another degree and batch ({@link #at}), if anything. */
    private static java.util.Optional<String> problem(RuntimePredictor p, Workload base, int workers, int batch,
            int micro) {
        try {
            Workload w = at(base, workers, batch, micro);
            if (p.modelsClusters()) {
                org.scaledl.model.exec.ParallelExecution.checkJob(w);
            }
            return java.util.Optional.empty();
        } catch (IllegalArgumentException | ArithmeticException e) {
            return java.util.Optional.of(String.valueOf(e.getMessage()));
        }
    }

    /** The base job with another data-parallel degree and batch per micro-batch. */
    private static Workload at(Workload base, int workers, int batch, int micro) {
        Parallelism q = base.parallelism();
        return base.toBuilder().batch(Math.multiplyExact(batch, micro)).parallelism(new Parallelism(workers,
                q.tensor(), q.pipeline(), q.microBatches(), q.sequenceParallel(), q.zeroStage(), q.virtualStages(),
                q.context(), q.expert(), q.expertTensor())).build();
    }

    private static Point point(RuntimePredictor p, Workload base, int workers, int batch, int micro) {
        Workload w = at(base, workers, batch, micro);
        Prediction pr = p.predict(w);
        return new Point(workers, w.worldSize(), batch,
                pr.throughputPerSecond().orElse((double) batch * micro * workers / (pr.millis() / 1000)),
                JobOptions.recomputeUsed(p, w), pr);
    }

    private static void put(ArrayNode arr, List<Point> sweep) {
        for (Point x : sweep) {
            ObjectNode o = arr.addObject().put("world_size", x.workers()).put("data_parallel", x.workers())
                    .put("gpus", x.gpus()).put("batch", x.batch()).put("ms", x.ms()).put("low_ms", x.lowMs())
                    .put("high_ms", x.highMs()).put("throughput_per_s", x.samplesPerSecond()).put("fits", x.fits())
                    .put("recompute", x.recompute());
            x.prediction().memoryGb().ifPresent(v -> o.put("memory_gb", v));
            x.prediction().tokensPerSecondPerGpu().ifPresent(v -> o.put("tokens_per_s_per_gpu", v));
            x.prediction().modelTflopsPerGpu().ifPresent(v -> o.put("model_tflops_per_gpu", v));
        }
    }

    /** Refuses an empty sweep, a value outside 1..max and a value given twice (null: the option not given). */
    private static void sweep(String option, List<Integer> values, int max) {
        if (values == null) {
            return;
        }
        if (values.isEmpty()) {
            throw new IllegalArgumentException(option + " names no value: give a comma-separated list (e.g. 1,2,4)");
        }
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (int v : values) {
            org.scaledl.Checks.argument(v >= 1 && v <= max, "%s must be in 1..%s, got %s", option, max, v);
            org.scaledl.Checks.argument(seen.add(v), "%s names %s twice", option, v);
        }
    }

    /**
     * Whether a measured point ({replicas, batch, ms}) lies on the sweep over replicas, at the job's batch and within
     * the swept replicas (sorted), where the plot draws it.
     */
    static boolean onWorkersSweep(double[] x, int batch, List<Integer> swept) {
        return x[1] == batch && x[0] >= swept.get(0) && x[0] <= swept.get(swept.size() - 1);
    }

    /** Whether a measured point lies on the sweep over the batch, at the job's replicas and within the swept batches. */
    static boolean onBatchSweep(double[] x, int replicas, List<Integer> swept) {
        return x[0] == replicas && x[1] >= swept.get(0) && x[1] <= swept.get(swept.size() - 1);
    }

    /** The sweep's job's values of the columns a measured point may state, as a candidate table writes them. */
    private static java.util.Map<String, String> sweepValues(Workload base) {
        Parallelism par = base.parallelism();
        java.util.Map<String, String> m = new java.util.HashMap<>();
        m.put("tensor", String.valueOf(par.tensor()));
        m.put("pipeline", String.valueOf(par.pipeline()));
        m.put("context", String.valueOf(par.context()));
        m.put("expert", String.valueOf(par.expert()));
        m.put("expert_tensor", String.valueOf(par.expertTensor()));
        m.put("virtual_stages", String.valueOf(par.virtualStages()));
        m.put("micro_batches", String.valueOf(par.microBatches()));
        m.put("sequence_parallel", String.valueOf(par.sequenceParallel()));
        m.put("precision", base.precision().label());
        m.put("phase", base.phase().label());
        m.put("zero_stage", String.valueOf(par.zeroStage()));
        m.put("lora_rank", String.valueOf(base.loraRank()));
        m.put("fp8_param_gather", String.valueOf(base.fp8ParamGather()));
        m.put("grad_reduce", base.gradReduce().label());
        if (base.recompute() != org.scaledl.workload.Recompute.AUTO) {
            // (auto is each point's own choice: any recomputation a point states may be it)
            m.put("recompute", base.recompute().label());
        }
        base.graph().transformer().ifPresent(ts -> m.put("seq", String.valueOf(ts.seq())));
        base.device().ifPresent(d -> m.put("device", d.name()));
        return m;
    }

    /** The sweep's option that states a column's value, in words: {@code give the sweep --zero-stage 1}. */
    private static String optionFor(String column, String value) {
        String option = "--" + column.replace('_', '-');
        if (column.equals("fp8_param_gather") || column.equals("sequence_parallel")) {
            return org.scaledl.io.Candidates.parseFlag(value).orElse(true) ? "give the sweep " + option
                    : "leave out " + option;
        }
        return "give the sweep " + option + " " + value.trim();
    }

    /** Whether a measured point's cell says the sweep's value of {@code column} (numbers by value, names parsed). */
    private static boolean sameAs(String column, String cell, String sweep,
            java.util.function.Function<String, java.util.Optional<String>> deviceOf) {
        try {
            return switch (column) {
                case "precision" -> org.scaledl.workload.Precision.parse(cell).label().equals(sweep);
                // a name no one described (not the catalog's, --devices' or the model's machines') is not the
                // sweep's device: a point of such a GPU calibrated the sweep's curve on it
                case "device" -> org.scaledl.workload.Device.key(cell).equals(org.scaledl.workload.Device.key(sweep))
                        || deviceOf.apply(cell).map(sweep::equals).orElse(false);
                case "sequence_parallel", "fp8_param_gather" -> org.scaledl.io.Candidates.parseFlag(cell)
                        .map(f -> f == Boolean.parseBoolean(sweep)).orElse(false);
                case "phase" -> org.scaledl.workload.Phase.parse(cell).label().equals(sweep);
                case "grad_reduce" -> org.scaledl.workload.GradReduce.parse(cell).label().equals(sweep);
                case "recompute" -> org.scaledl.workload.Recompute.parse(cell).label().equals(sweep);
                default -> org.scaledl.io.CsvTable.parseNumber(cell) == Double.parseDouble(sweep);
            };
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Measured points: {data-parallel replicas, batch, ms}; a gpus column is divided by the replica's GPUs, and where
     * the table has both, a row's two must agree (as in a candidate table). A point whose layout does not go with the
     * model, and one given twice with the same time (however its numbers are written), is refused at its line; so is
     * one whose column describing the job (a runs table's, under its name or another framework's) contradicts the
     * sweep's job ({@link #sweepValues}); such a column this cannot compare is said.
     */
    private static List<double[]> readMeasured(Path csv, RuntimePredictor p, Workload base,
            java.util.function.Function<String, java.util.Optional<String>> deviceOf) {
        CsvTable t = CsvTable.read(csv, "batch", "measured_ms");
        if (t.size() == 0) {
            System.err.println("scaledl: warning: " + csv + ": no measured points (a header and no rows)");
        }
        java.util.Map<List<Object>, Integer> seen = new java.util.HashMap<>();
        List<String> others = t.columns().stream().filter(c -> !List.of("gpus", "world_size", "batch", "measured_ms")
                .contains(c)).toList();
        // a column that describes the job (a runs table's, a log's): a point of another job than the sweep's would
        // calibrate its curve on that job's times, so a value the sweep's job contradicts is refused at its line; one
        // that cannot be compared here is said
        java.util.Map<String, String> described = new java.util.LinkedHashMap<>();
        for (String c : others) {
            org.scaledl.io.Candidates.canonical(c).filter(k -> !k.equals("model") && !k.equals("family"))
                    .ifPresent(k -> described.put(c, k));
        }
        java.util.Map<String, String> sweep = sweepValues(base);
        List<String> uncompared = described.entrySet().stream().filter(e -> !sweep.containsKey(e.getValue()))
                .map(java.util.Map.Entry::getKey).toList();
        if (!uncompared.isEmpty()) {
            System.err.println("scaledl: warning: " + csv + ": column" + (uncompared.size() == 1 ? " " : "s ")
                    + String.join(", ", uncompared) + " describe" + (uncompared.size() == 1 ? "s" : "") + " the job "
                    + "but " + (uncompared.size() == 1 ? "is" : "are") + " not compared with the sweep's: the points "
                    + "are taken as the sweep's own job");
        }
        if (!t.has("world_size") && !t.has("gpus")) {
            throw org.scaledl.InvalidInputException.inSource(csv.toString(), "needs a world_size (data-parallel "
                    + "replicas) or gpus column");
        }
        Parallelism par = base.parallelism();
        int perReplica = par.ranks() / par.data();
        List<double[]> out = new ArrayList<>();
        for (int r = 0; r < t.size(); r++) {
            int line = t.line(r);
            Integer replicas = t.has("world_size") ? t.intInRange(r, "world_size", 1, Parallelism.MAX_RANKS) : null;
            if (t.has("gpus")) {
                int n = t.intInRange(r, "gpus", 1, Parallelism.MAX_RANKS);
                int fromGpus = Parallelism.replicas(n, par.tensor(), par.pipeline(), par.context())
                        .orElseThrow(() -> org.scaledl.InvalidInputException.atLine(csv.toString(), line, "gpus " + n
                                + " is not a multiple of a replica's " + perReplica + " GPUs"));
                if (replicas != null && replicas != fromGpus) {
                    throw org.scaledl.InvalidInputException.atLine(csv.toString(), line, "gpus " + n + " and "
                            + "world_size " + replicas + " disagree: world_size counts data-parallel replicas (of "
                            + perReplica + " GPUs), so gpus " + n + " is world_size " + fromGpus
                            + " (give one of them)");
                }
                replicas = fromGpus;
            }
            for (java.util.Map.Entry<String, String> e : described.entrySet()) {
                String want = sweep.get(e.getValue());
                String have = t.opt(r, e.getKey()).orElse("");
                if (want != null && !have.isEmpty() && !sameAs(e.getValue(), have, want, deviceOf)) {
                    // (a sweep's setting left at its default, a runs table's written from its log: the option names it)
                    throw org.scaledl.InvalidInputException.atLine(csv.toString(), line, e.getKey() + " " + have
                            + " is not the sweep's job's (" + e.getValue() + " " + want + "): --measured points are the "
                            + "sweep's own job (" + optionFor(e.getValue(), have) + " where they are); score other "
                            + "jobs' runs with predict --candidates");
                }
            }
            // (the point's line last: a calibration's message names where it was read)
            double[] x = {replicas, t.intInRange(r, "batch", 1, MAX_SWEPT_BATCH),
                t.numberInRange(r, "measured_ms", org.scaledl.io.JobRuns.MIN_MILLIS, org.scaledl.io.JobRuns.MAX_MILLIS),
                line};
            // the same point and time, and nothing else to tell them apart (an id, a date)
            List<Object> key = new ArrayList<>(List.of(x[0], x[1], x[2]));
            final int row = r;
            others.forEach(c -> key.add(t.get(row, c)));
            Integer before = seen.putIfAbsent(key, line);
            if (before != null) {
                throw org.scaledl.InvalidInputException.atLine(csv.toString(), line, "the same point as line "
                        + before + " (a repeated measurement has a time of its own)");
            }
            problem(p, base, replicas, (int) x[1], base.parallelism().microBatches()).ifPresent(m -> {
                throw org.scaledl.InvalidInputException.atLine(csv.toString(), line, m);
            });
            out.add(x);
        }
        return out;
    }

    private static String svg(String title, Workload base, List<Point> byWorkers, List<Point> byBatch,
            List<Point> byWorkersCal, List<Point> byBatchCal, List<double[]> measured, int micro, String units) {
        int batch = byWorkers.get(0).batch();
        int fixedWorkers = base.parallelism().data();
        int perReplica = base.parallelism().ranks() / base.parallelism().data();
        List<Integer> swept = byWorkers.stream().map(Point::workers).toList();
        List<Integer> sweptBatches = byBatch.stream().map(Point::batch).toList();
        List<double[]> onWorkers = measured.stream().filter(x -> onWorkersSweep(x, batch, swept)).toList();
        List<double[]> onBatch = measured.stream().filter(x -> onBatchSweep(x, fixedWorkers, sweptBatches)).toList();
        String predicted = "#1f77b4";
        String throughput = "#2ca02c";
        String cal = "#ff7f0e";
        String meas = "#d62728";
        String oom = "#7f7f7f";
        int w = 960;
        int h = 680;
        List<String> panels = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
            boolean workersAxis = k < 2;
            boolean tput = k % 2 == 1;
            List<Point> pts = workersAxis ? byWorkers : byBatch;
            List<Point> calPts = workersAxis ? byWorkersCal : byBatchCal;
            List<SvgChart.Series> series = new ArrayList<>();
            series.add(series(tput ? "predicted" : "predicted (90% interval)", tput ? throughput : predicted, pts,
                    workersAxis, tput, micro));
            if (!calPts.isEmpty()) {
                series.add(series("calibrated on the measured points", cal, calPts, workersAxis, tput, micro));
            }
            List<SvgChart.Points> marks = new ArrayList<>();
            marks.add(points("measured", meas, workersAxis ? onWorkers : onBatch, workersAxis, tput, micro,
                    perReplica));
            List<Point> noFit = pts.stream().filter(x -> !x.fits()).toList();
            marks.add(new SvgChart.Points("does not fit in memory", oom, noFit.stream().mapToDouble(x -> workersAxis
                    ? x.gpus() : x.batch()).toArray(), noFit.stream().mapToDouble(x -> tput ? x.samplesPerSecond()
                    : x.ms()).toArray()));
            String heading = (tput ? "throughput" : "time") + " vs " + (workersAxis ? units + " (batch " + batch + ")"
                    : "batch (" + fixedWorkers * perReplica + " " + units + ")");
            panels.add(SvgChart.panel(k % 2 == 0 ? 0 : w / 2, k < 2 ? 30 : 360, w / 2, 320, heading,
                    workersAxis ? units : "batch per micro-batch", tput ? "samples per second" : "ms per iteration",
                    series, marks));
        }
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
            x[i] = byWorkers ? q.gpus() : q.batch();
            double samples = (double) q.batch() * micro * q.workers();
            y[i] = throughputAxis ? q.samplesPerSecond() : q.ms();
            lo[i] = throughputAxis ? samples / (q.highMs() / 1000) : q.lowMs();
            hi[i] = throughputAxis ? samples / (q.lowMs() / 1000) : q.highMs();
        }
        return new SvgChart.Series(name, colour, x, y, lo, hi);
    }

    private static SvgChart.Points points(String name, String colour, List<double[]> pts, boolean byWorkers,
            boolean throughputAxis, int micro, int perReplica) {
        double[] x = new double[pts.size()];
        double[] y = new double[pts.size()];
        for (int i = 0; i < pts.size(); i++) {
            double[] q = pts.get(i);
            x[i] = byWorkers ? q[0] * perReplica : q[1];
            y[i] = throughputAxis ? q[1] * micro * q[0] / (q[2] / 1000) : q[2];
        }
        return new SvgChart.Points(name, colour, x, y);
    }

    /** A warning of the sweep's own (of some of its points, said once): its kind and words, no share of one point. */
    private static org.scaledl.model.PredictionWarning sweepWarning(org.scaledl.model.PredictionWarning.Kind kind,
            String message) {
        return new org.scaledl.model.PredictionWarning(kind, message, java.util.Optional.empty(), "", 1);
    }
}
