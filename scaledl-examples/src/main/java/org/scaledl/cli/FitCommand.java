package org.scaledl.cli;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.scaledl.gnn.GnnInteractions;
import org.scaledl.io.DatasetReader;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.GpuData;
import org.scaledl.io.KernelTables;
import org.scaledl.model.CalibrationScreen;
import org.scaledl.model.device.DeviceLayerModel;
import org.scaledl.model.LayerCost;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.exec.MegatronFit;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl fit --data DIR --out model.sdl [--gnn [--attention]]}, or {@code scaledl fit --gpu --data
 * ../shared/data --out gpu.sdl [--devices my_gpus.csv] [--profiled my_kernels/]} for the device layer model.
 */
@Command(name = "fit", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Fit ScaleDL on a dataset and save the model.")
final class FitCommand implements Callable<Integer> {
    @Option(names = "--data", description = "Dataset folder; repeat it to fit several machines into one predictor "
            + "(with --gpu: the folder with neusight/ and deepbench/)")
    List<Path> dataDirs;

    @Option(names = "--runs", description = "With --calibrate and a GPU model: a job runs table of your cluster (the "
            + "candidate columns of predict --model gpu plus measured_ms or tokens_per_s_per_gpu); repeat it for "
            + "several")
    List<Path> runsTables;

    @Option(names = "--out", required = true, description = "Model file to write (.sdl)")
    Path out;

    @Option(names = "--seed", defaultValue = "0", description = "Seed recorded with the model (default 0)")
    long seed;

    @Option(names = "--gnn", description = "Add the GNN stage (layer-wise model corrected by the GNN)")
    boolean gnn;

    @Option(names = "--attention", description = "With --gnn: attention message passing instead of mean")
    boolean attention;

    @Option(names = "--gpu", description = "Fit the device layer model on GPU kernel and model measurements")
    boolean gpu;

    @Option(names = "--devices", description = "With --gpu: extra device catalog CSV (NeuSight device_configs "
            + "layout)")
    Path devices;

    @Option(names = "--profiled", description = "With --gpu: folder of kernel tables (NeuSight kernels layout) "
            + "measured on your GPU; the model is adapted to them")
    Path profiled;

    @Option(names = "--calibrate", description = "Fitted model (a bundled name or a file) to adapt to a new "
            + "machine instead of fitting anew: "
            + "the runs of --data (a few are enough) are that machine's; few-shot per-group corrections of the "
            + "closest machine the model knows")
    String calibrate;

    @Override
    public Integer call() {
        // an output that cannot be written, or that is one of the inputs, is refused before the fit, not after it
        org.scaledl.model.file.SafeFiles.checkWritable(out);
        // (a model file is .sdl: no table, catalog or dataset file it could overwrite)
        Reports.requireExtension(out, "the model", ".sdl");
        if (calibrate != null) {
            // the model it adapts, where that is a file: a calibration writes a new one beside it
            Reports.notAnInput(out, "--calibrate", java.nio.file.Path.of(calibrate));
        }
        if (dataDirs != null) {
            for (int i = 0; i < dataDirs.size(); i++) {
                for (int j = 0; j < i; j++) {
                    if (Reports.sameFile(dataDirs.get(i), dataDirs.get(j))) {
                        throw new IllegalArgumentException("--data " + org.scaledl.InvalidInputException.escaped(
                                dataDirs.get(i).toString()) + " is given twice: its runs would count twice");
                    }
                }
            }
        }
        if (runsTables != null && !runsTables.isEmpty()) {
            if (calibrate == null) {
                throw new IllegalArgumentException("--runs calibrates a GPU model: give --calibrate gpu (or a model "
                        + "file)");
            }
            if (dataDirs != null || gpu || gnn) {
                throw new IllegalArgumentException("--runs replaces --data, --gpu and --gnn: it calibrates the "
                        + "--calibrate model on your cluster's runs");
            }
            if (attention || profiled != null) {
                throw new IllegalArgumentException((attention ? "--attention belongs to a fit anew with --gnn"
                        : "--profiled belongs to a fit anew with --gpu") + "; --calibrate --runs adapts a fitted "
                        + "model");
            }
            return calibrateOnRuns();
        }
        if (dataDirs == null || dataDirs.isEmpty()) {
            throw new IllegalArgumentException("say what to fit on: --data DIR (or, with --calibrate gpu, --runs "
                    + "runs.csv)");
        }
        Path data = dataDirs.get(0);
        if (calibrate != null) {
            if (gpu || gnn || attention || profiled != null || devices != null) {
                throw new IllegalArgumentException("--calibrate adapts a fitted model; " + (gpu || gnn
                        ? "--gpu and --gnn fit anew" : attention ? "--attention belongs to a fit anew with --gnn"
                        : (profiled != null ? "--profiled" : "--devices") + " belongs to a fit anew with --gpu (or, "
                        + "calibrating a GPU model, to --runs)"));
            }
            Dataset runs = readAll();
            RuntimePredictor model = ModelArgument.load("--calibrate", calibrate);
            if (!model.modelsClusters() && model.machines().size() <= 1
                    && runs.samples().stream().anyMatch(s -> s.workload().device().isEmpty())) {
                // runs of no named machine calibrate the model's only one (a model of several refuses them)
                System.err.println("scaledl: warning: " + data + " has no machine.json: its runs are taken as runs of "
                        + (model.machines().isEmpty() ? "the machine " + calibrate + " was fitted on" : calibrate
                        + "'s machine " + model.machines()) + " (give a machine.json to calibrate another machine)");
            }
            RuntimePredictor p = model.calibrate(runs.samples());
            p.save(out);
            System.out.printf(Locale.ROOT, "calibrated %s to %d runs of %s, wrote %s%n", calibrate, runs.size(),
                    p.machines(), out);
            return 0;
        }
        if (gpu && dataDirs.size() > 1) {
            throw new IllegalArgumentException("--gpu reads one data root");
        }
        if (gpu) {
            if (gnn || attention) {
                throw new IllegalArgumentException("--gpu cannot be combined with --gnn or --attention");
            }
            if (profiled != null && !java.nio.file.Files.isDirectory(profiled)) {
                // said before the data root is read
                throw org.scaledl.InvalidInputException.inSource(profiled.toString(), java.nio.file.Files.exists(
                        profiled) ? "--profiled takes a folder of kernel tables (bmm.csv, linear.csv, ...), not a file"
                        : "no such folder (--profiled: the folder of kernel tables measured on your GPU)");
            }
            Progress progress = Progress.of("fit --gpu", Main.quiet);
            progress.update(0, 2, "reading " + data);
            DeviceCatalog catalog = Catalogs.of(devices, data);
            GpuData d = GpuData.read(data, catalog);
            org.scaledl.model.PredictorTrainer.Builder b = RuntimePredictor.builder().name("scaledl-device").seed(seed)
                    .layerCost(LayerCost.device(d.operators())).collectives(d.collectives());
            if (profiled != null) {
                List<OpMeasurement> rows = KernelTables.neusight(profiled, catalog);
                if (rows.isEmpty()) {
                    // KernelTables reports a folder without tables; these tables hold no rows
                    throw org.scaledl.InvalidInputException.inSource(profiled.toString(), "its kernel tables hold no "
                            + "measurements (a header and no rows)");
                }
                b.adaptTo(rows);
            }
            List<Sample> runs = new java.util.ArrayList<>(d.samples(r -> r.parallelism().ranks() == 1 && !r.fusion()));
            runs.addAll(d.megatronRuns());
            progress.update(1, 2, String.format(Locale.ROOT, "fitting the layer model on %d kernels, calibrating on %d "
                    + "runs and fitting the Megatron model on %d (about 15 s on 2 cores)", d.operators().size(),
                    runs.size() - d.megatronRuns().size(), d.megatronRuns().size()));
            RuntimePredictor p = b.build().fit(runs);
            progress.update(2, 2, "fitted");
            p.save(out);
            DeviceLayerModel m = p.deviceLayerModel().orElseThrow();
            double cv = p.provenance().cvMre();
            int megatron = d.megatronRuns().size();
            String megatronMre = p.provenance().config().getOrDefault("megatron_cv_mre", "NaN");
            System.out.printf(Locale.ROOT, "fitted the device layer model on %d GPUs; calibrated on %d runs of "
                    + "imported graphs (inference x%.3f, training x%.3f; %s)%s%s, wrote %s%n", m.devices().size(),
                    runs.size() - megatron, m.factor(Phase.INFER), m.factor(Phase.TRAIN), Double.isNaN(cv)
                            ? "runs of fewer than 3 GPUs, no cross-validated MRE"
                            : String.format(Locale.ROOT, "MRE %.1f%% with each run's GPU left out of the calibration",
                                    100 * cv),
                    megatron == 0 ? "" : String.format(Locale.ROOT, " and the Megatron model on %d transformer "
                            + "runs (MRE %.1f%% with each model left out)", megatron,
                            100 * Double.parseDouble(megatronMre)),
                    profiled == null ? "" : "; adapted to the kernels in " + profiled, out);
            return 0;
        }
        if (devices != null || profiled != null) {
            throw new IllegalArgumentException("--devices and --profiled need --gpu");
        }
        Dataset d = readAll();
        if (attention && !gnn) {
            throw new IllegalArgumentException("--attention needs --gnn");
        }
        org.scaledl.model.PredictorTrainer.Builder b = RuntimePredictor.builder().seed(seed);
        if (gnn) {
            b.interactions(new GnnInteractions().withAttention(attention));
        }
        if (d.size() < 2) {
            // named: the trainer's own "need at least 2 samples" says neither the folder nor the file
            throw org.scaledl.InvalidInputException.inSource(data.toString(), d.size() + " run"
                    + (d.size() == 1 ? "" : "s") + " in its tables: a fit needs 2 or more");
        }
        RuntimePredictor p = b.build().fit(d.samples());
        p.save(out);
        System.out.printf(Locale.ROOT, "fitted %s on %d samples (%s), wrote %s%n", p, d.size(),
                Reports.cvMre(p.provenance().cvMre()), out);
        String leftOut = p.provenance().config().get(LayerCost.LEFT_OUT);
        if (leftOut != null) {
            System.out.println("left out of the fit, as runs no model explains (each at least a factor of 5 off the "
                    + "fit of the others; check them): " + leftOut);
        }
        return 0;
    }

    /**
     * {@code fit --calibrate gpu --runs runs.csv --out mine.sdl}: the model calibrated on a cluster's measured runs
     * (its network, its sustained matrix efficiency, its overheads), pulled toward the model's values; a run the
     * model misses by more than a factor of 5 is left out and named ({@link CalibrationScreen}); with no
     * run left, the model is written unchanged with a warning.
     */
    private int calibrateOnRuns() {
        RuntimePredictor p = ModelArgument.load("--calibrate", calibrate);
        if (!p.modelsClusters()) {
            throw new IllegalArgumentException("--runs calibrates a GPU model; " + calibrate + " is a CPU model "
                    + "(calibrate it with --data DIR of runs.csv and machine.json)");
        }
        DeviceCatalog catalog = Catalogs.of(devices);
        List<org.scaledl.workload.Sample> runs;
        try {
            runs = org.scaledl.io.JobRuns.read(runsTables, org.scaledl.onnx.OnnxImporter::read,
                    PlanCommand.gpuNames(catalog), java.util.Map.of());
        } catch (org.scaledl.InvalidInputException e) {
            // a GPU the model was calibrated on, described by a --devices file then: the file is what is missing
            String hint = Catalogs.calibratedOnHint(p, calibrate, n -> catalog.find(n).isEmpty());
            if (hint.isEmpty() || !e.getMessage().contains("unknown device")) {
                throw e;
            }
            throw org.scaledl.InvalidInputException.of(e.getMessage() + hint);
        }
        // a GPU calibrated on before under another description: the runs now fit this one, the model that one
        runs.stream().flatMap(r -> r.workload().device().stream()).distinct()
                .filter(p::calibratedOnOtherFigures).forEach(d -> System.err.println("scaledl: warning: " + calibrate
                        + " was calibrated on runs of " + d.name() + " described with other figures than these runs' "
                        + "--devices row: its calibration fits that description, these runs this one; calibrate the "
                        + "model it came from on all the runs under one description"));
        // each run predicted once: its job's ratio for the screen, its memory for the warning below
        CalibrationScreen screen;
        try {
            screen = p.screen(runs);
        } catch (IllegalArgumentException e) {
            // a row the model cannot predict is the table's bad input (its line named)
            throw org.scaledl.InvalidInputException.of(e.getMessage());
        }
        screen.calibratedOn().ifPresent(earlier -> System.err.println("scaledl: warning: " + calibrate
                // a calibration pulls toward the model it starts from: the same runs again count twice
                + " is calibrated already (on " + earlier + " run" + (earlier == 1 ? "" : "s") + "): runs it was "
                + "calibrated on count again, moving it further their way; to add runs, calibrate the uncalibrated "
                + "model it came from (the bundled gpu, or the one you fitted) on all of them"));
        List<org.scaledl.workload.Sample> kept = screen.kept();
        List<String> leftOut = screen.leftOut().stream().map(CalibrationScreen.LeftOut::describe)
                .toList();
        List<String> unfitting = screen.predictedNotToFit().stream().map(r -> CalibrationScreen
                .source(r).orElse("run " + (runs.indexOf(r) + 1))).toList();
        if (!leftOut.isEmpty()) {
            System.err.println("scaledl: warning: left out of the calibration, runs of jobs the model misses by more "
                    + "than a factor of " + (int) CalibrationScreen.MISMATCH
                    + " (their runs' median), or a run " + (int) RuntimePredictor
                    .MAX_CALIBRATION_RATIO + " times off on its own (a different job than the row says? "
                    + "check them): " + String.join("; ", leftOut));
        }
        if (screen.mostLeftOut()) {
            // most of the table that far off: rather a misread column than a slower or faster cluster
            System.err.println(String.format(Locale.ROOT, "scaledl: warning: %d of the %d runs are left out: the "
                    + "rows more likely misdescribe the jobs measured than the cluster is slower or faster (batch is "
                    + "sequences per micro-batch, micro_batches a replica's micro-batches an iteration, measured_ms "
                    + "one iteration in milliseconds)", leftOut.size(), runs.size()));
        }
        if (kept.isEmpty()) {
            // nothing calibrated is no calibration: a script must not carry on with the model as if it were one
            throw org.scaledl.InvalidInputException.of(String.join(", ", runsTables.stream().map(Path::toString)
                    .toList()) + ": no run left to calibrate on, nothing written" + screen.unitHint());
        }
        if (!unfitting.isEmpty()) {
            System.err.println("scaledl: warning: calibrating on run" + (unfitting.size() == 1 ? " " : "s ")
                    + String.join(", ", unfitting) + ", which the model predicts " + (unfitting.size() == 1 ? "does"
                    : "do") + " not fit in " + (unfitting.size() == 1 ? "its" : "their") + " GPUs' memory: "
                    + "is the row the job that ran (batch per micro-batch, the layout, the GPU)?");
        }
        List<org.scaledl.workload.Sample> weighed = kept.stream()
                .filter(r -> org.scaledl.model.exec.MegatronFit.weight(r) > 0).toList();
        int weightless = kept.size() - weighed.size();
        if (weighed.isEmpty()) {
            // a weight of 0 keeps a run out of the fit: a calibration on none of them would say it calibrated
            throw org.scaledl.InvalidInputException.of(String.join(", ", runsTables.stream().map(Path::toString)
                    .toList()) + ": every run " + (kept.size() < runs.size() ? "kept (the others left out above) "
                    : "") + "has fit_weight 0, so none would be calibrated on (a weight of 0 keeps a run out): give "
                    + "the runs to calibrate on a positive fit_weight, or leave the column out (every run weighs 1)");
        }
        if (weightless > 0) {
            // a run of weight 0 moves nothing: kept out of the calibration, its counts and its checks
            System.err.println("scaledl: note: " + weightless + " run" + (weightless == 1 ? " of fit_weight 0 is"
                    : "s of fit_weight 0 are") + " kept out of the calibration");
            kept = weighed;
        }
        RuntimePredictor cal = p.calibrate(kept);
        cal.save(out);
        // on the runs calibrated on (those of weight 0 left out), before and after: the error, its sign, and how many
        // the 90 % interval holds (a calibration that pulls one run out of its interval says so)
        double before = 0;
        double beforeBias = 0;
        double after = 0;
        int insideBefore = 0;
        int insideAfter = 0;
        boolean[] intervals = new boolean[2];
        for (org.scaledl.workload.Sample r : kept) {
            org.scaledl.model.Prediction b = p.predict(r.workload());
            org.scaledl.model.Prediction a = cal.predict(r.workload());
            before += Math.abs(b.millis() / r.millis() - 1);
            beforeBias += b.millis() / r.millis() - 1;
            after += Math.abs(a.millis() / r.millis() - 1);
            insideBefore += b.lowMillis() <= r.millis() && r.millis() <= b.highMillis() ? 1 : 0;
            insideAfter += a.lowMillis() <= r.millis() && r.millis() <= a.highMillis() ? 1 : 0;
            intervals[0] |= b.highMillis() > b.lowMillis();
            intervals[1] |= a.highMillis() > a.lowMillis();
        }
        // (a model without an interval gives point predictions: no run is inside what is not there)
        int keptRuns = kept.size();
        java.util.function.BiFunction<Boolean, Integer, String> inside = (has, n) -> has ? n + " of " + keptRuns
                : "none (no interval)";
        System.out.printf(Locale.ROOT, "calibrated %s on %d run%s of %s: on them MRE %.1f%% (bias %+.1f%%) before, "
                + "%.1f%% after (in sample); inside the 90%% interval %s before, %s after; wrote %s%n", calibrate,
                kept.size(), kept.size() == 1 ? "" : "s", kept.stream().map(r -> r.workload().device()
                        .map(org.scaledl.workload.Device::name).orElse("?")).distinct().toList(),
                100 * before / kept.size(), 100 * beforeBias / kept.size(), 100 * after / kept.size(),
                inside.apply(intervals[0], insideBefore), inside.apply(intervals[1], insideAfter), out);
        disagreement(p, cal, kept).ifPresent(w -> System.err.println("scaledl: warning: " + w));
        onePhase(kept).ifPresent(w -> System.err.println("scaledl: warning: " + w));
        if (insideAfter == 0 && intervals[1] && kept.size() >= 2) {
            heldBack(p, cal, kept).ifPresent(w -> System.err.println("scaledl: warning: " + w));
        }
        levelOnly(p, cal, kept).ifPresent(w -> System.err.println("scaledl: note: " + w));
        outliers(cal, kept).ifPresent(w -> System.err.println("scaledl: warning: " + w));
        if (kept.size() < 3) {
            System.err.println("scaledl: warning: " + kept.size() + " run" + (kept.size() == 1 ? " moves" : "s move") + " "
                    + "the coefficients only as far as the model's prior allows; plan more: scaledl plan --model "
                    + calibrate + " --candidates jobs.csv --runs 3");
        }
        // the GPUs of the transformer runs, whose execution model the calibration refits
        List<String> gpus = transformerRuns(kept).stream()
                .flatMap(r -> r.workload().device().filter(org.scaledl.workload.Device::isGpu)
                        .map(org.scaledl.workload.Device::name).stream()).distinct().toList();
        if (!gpus.isEmpty()) {
            // the execution model's coefficients are one set for every GPU: a calibration moves them all
            System.err.println("scaledl: warning: calibrated on runs of " + String.join(", ", gpus) + " only: the "
                    + "execution model's coefficients are shared by every GPU, so " + out + " predicts other GPUs' "
                    + "transformer jobs differently too; use it for " + (gpus.size() == 1 ? "this GPU" : "these GPUs")
                    + ", and " + (p.provenance().calibrationDevices().isEmpty() ? calibrate + " for the others"
                    // a model calibrated already suits its own cluster's GPUs, not the others
                    : "for the others the model " + calibrate + " was calibrated from (gpu where that was the "
                    + "bundled one; " + calibrate + " itself is calibrated on runs of "
                    + String.join(", ", p.provenance().calibrationDevices()) + ")"));
        }
        return 0;
    }

    /**
     * Said where the transformer runs of a calibration are fewer than {@link MegatronFit#TERM_RUNS} (so it moves one
     * level for all of them) and no one level puts every one of them inside its 90 % interval: run {@code i}, measured
     * at {@code rᵢ} times its prediction, allows the levels {@code rᵢ/highᵢ … rᵢ/lowᵢ} ({@code low}, {@code high} its
     * interval's ends as multiples of the prediction), and these ranges do not overlap. A run of another cluster or
     * software, or a row describing its job wrongly, then pulls the others' predictions off. More runs refit the
     * terms, which a spread among them informs.
     */
    static Optional<String> disagreement(RuntimePredictor before, RuntimePredictor after, List<Sample> runs) {
        List<Sample> jobs = transformerRuns(runs);
        if (jobs.size() < 2 || jobs.size() >= MegatronFit.TERM_RUNS) {
            return Optional.empty();
        }
        double leastLevel = 0;
        double mostLevel = Double.POSITIVE_INFINITY;
        double lowest = Double.POSITIVE_INFINITY;
        double highest = 0;
        String fastest = "";
        String slowest = "";
        for (Sample r : jobs) {
            org.scaledl.model.Prediction pr = before.predict(r.workload());
            double ratio = r.millis() / pr.millis();
            leastLevel = Math.max(leastLevel, ratio * pr.millis() / pr.highMillis());
            mostLevel = Math.min(mostLevel, ratio * pr.millis() / pr.lowMillis());
            String where = r.workload().tag(org.scaledl.io.DatasetReader.SOURCE_TAG).orElse("?");
            if (ratio < lowest) {
                lowest = ratio;
                fastest = where;
            }
            if (ratio > highest) {
                highest = ratio;
                slowest = where;
            }
        }
        if (leastLevel <= mostLevel) {
            return Optional.empty();
        }
        org.scaledl.workload.Workload first = jobs.get(0).workload();
        return Optional.of(String.format(Locale.ROOT, "the runs disagree about the cluster's speed: measured from "
                + "x%.2f (%s) to x%.2f (%s) of the prediction, and no one level puts every run inside its 90%% "
                + "interval; a calibration on fewer than %d runs moves one level for all of them (here x%.2f), so a "
                + "run of another cluster or software, or a row that describes its job wrongly, pulls the others "
                + "off: check those runs", lowest, fastest, highest, slowest, MegatronFit.TERM_RUNS,
                after.predictMillis(first) / before.predictMillis(first)));
    }

    /**
     * Said where no run falls inside its 90 % interval after the calibration and the runs agree on a level beyond
     * what the calibration moved the model (a cluster four times slower than the model, whose prior level weighs as a
     * few runs against four: moved twice): the runs' median ratio to the model before and the level moved, so that
     * more runs, or a look at what the runs describe, follow.
     */
    static Optional<String> heldBack(RuntimePredictor before, RuntimePredictor after, List<Sample> runs) {
        List<Sample> jobs = transformerRuns(runs);
        if (jobs.size() < 2) {
            return Optional.empty();
        }
        double[] ratios = new double[jobs.size()];
        double[] moved = new double[jobs.size()];
        for (int i = 0; i < ratios.length; i++) {
            double b = before.predictMillis(jobs.get(i).workload());
            ratios[i] = jobs.get(i).millis() / b;
            moved[i] = after.predictMillis(jobs.get(i).workload()) / b;
        }
        double said = geometricMedian(ratios);
        double level = geometricMedian(moved);
        boolean agree = Arrays.stream(ratios).allMatch(r -> r > level) || Arrays.stream(ratios).allMatch(r -> r < level);
        if (!agree) {
            return Optional.empty();
        }
        return Optional.of(String.format(Locale.ROOT, "none of the %d runs falls inside its 90%% interval after the "
                + "calibration: they put the cluster at x%.2f of the model (their median), the calibration moved it "
                + "x%.2f, as the model's level weighs as %.1f runs against them; more runs of the cluster move it "
                + "further, or check that the runs are the jobs their rows describe (a time in seconds, another "
                + "cluster)", jobs.size(), said, level, after.executionModel().map(m -> m.levelPriorRuns())
                .orElse(0.0)));
    }

    /** The median of ratios taken on their logarithms (of an even count, the geometric mean of the middle two). */
    private static double geometricMedian(double[] ratios) {
        return Math.exp(org.scaledl.model.cost.Quantiles.of(Arrays.stream(ratios).map(Math::log).sorted().toArray(),
                0.5));
    }

    /**
     * Said where every transformer run calibrated on is of one phase: the execution model's coefficients are one set
     * for training and inference, so inference runs (prefills) alone move the training jobs' predictions too, and
     * training runs alone the inference ones.
     */
    static Optional<String> onePhase(List<Sample> kept) {
        List<org.scaledl.workload.Phase> phases = transformerRuns(kept).stream().map(r -> r.workload().phase())
                .distinct().toList();
        if (phases.size() != 1 || phases.get(0) != org.scaledl.workload.Phase.INFER) {
            return Optional.empty();
        }
        return Optional.of("every transformer run calibrated on is an inference (a prefill): the execution model's "
                + "coefficients are one set for both phases, so the calibrated model's training predictions moved "
                + "with them, on no training run's evidence (calibrate on training runs for training jobs)");
    }

    /** The runs of transformer jobs (those the execution model predicts and a calibration refits it on), in order. */
    private static List<Sample> transformerRuns(List<Sample> runs) {
        return runs.stream().filter(r -> r.workload().graph().transformer().isPresent()).toList();
    }

    /** How many runs a warning names (the furthest off first). */
    private static final int NAMED_RUNS = 3;

    /**
     * Said where a calibration moved the model's level only, by how much: with fewer transformer runs than refit the
     * execution terms ({@link MegatronFit#TERM_RUNS}), always; with enough, where its terms refitted predicted the
     * runs, each held out, worse than the level alone.
     */
    static java.util.Optional<String> levelOnly(RuntimePredictor before, RuntimePredictor after, List<Sample> kept) {
        int runs = transformerRuns(kept).size();
        // (a job measured again is one job: the terms are refitted from MegatronFit.TERM_RUNS jobs)
        int jobs = (int) transformerRuns(kept).stream().filter(r -> MegatronFit.weight(r) > 0)
                .map(r -> r.workload().identity()).distinct().count();
        String counted = runs == jobs ? runs + " run" + (runs == 1 ? "" : "s") : runs + " runs (" + jobs + " job"
                + (jobs == 1 ? "" : "s") + ")";
        java.util.Optional<org.scaledl.model.exec.MegatronModel> b = before.executionModel();
        java.util.Optional<org.scaledl.model.exec.MegatronModel> a = after.executionModel();
        if (jobs == 0 || b.isEmpty() || a.isEmpty()) {
            return java.util.Optional.empty();
        }
        org.scaledl.model.exec.ExecutionTerm dense = org.scaledl.model.exec.ExecutionTerm.DENSE;
        if (!(b.get().coefficient(dense) > 0)) {
            return java.util.Optional.empty();
        }
        double factor = a.get().coefficient(dense) / b.get().coefficient(dense);
        for (org.scaledl.model.exec.ExecutionTerm t : org.scaledl.model.exec.ExecutionTerm.values()) {
            if (Math.abs(a.get().coefficient(t) - factor * b.get().coefficient(t)) > 1e-9 * (1
                    + b.get().coefficient(t))) {
                return java.util.Optional.empty();
            }
        }
        if (jobs < MegatronFit.TERM_RUNS) {
            String moved = Math.abs(factor - 1) < 5e-4 ? "predictions unchanged" : String.format(Locale.ROOT,
                    "predictions %.1f %% %s", 100 * Math.abs(factor - 1), factor < 1 ? "faster" : "slower");
            return java.util.Optional.of(String.format(Locale.ROOT, "the %s moved the model's level (x%.3f on "
                    + "every coefficient: %s); fewer than %d jobs move the level only, %d or more may refit the "
                    + "terms", counted, factor, moved, MegatronFit.TERM_RUNS, MegatronFit.TERM_RUNS));
        }
        return java.util.Optional.of(String.format(Locale.ROOT, "the %s moved the model's level only (x%.3f "
                + "on every coefficient): its terms, refitted with each job held out in turn, predicted the runs "
                + "held out worse on average than the level alone did, so the model's terms are kept in their "
                + "proportions",
                counted, factor));
    }

    /**
     * Said where a calibration refits the execution terms (at least {@link MegatronFit#TERM_RUNS} transformer runs)
     * and runs lie beyond their 90 % interval after it by more than the fit's {@link MegatronFit#ROBUST} (a log error,
     * about 10 %: a run just outside its interval is one in ten by chance, and not said), furthest first,
     * {@value #NAMED_RUNS} named with their measured time as a multiple of the calibrated prediction. The fit weighs
     * an error beyond that by its size, not its square, so such a run moves the terms little and stays off: a run of
     * another cluster or software, or a row describing its job wrongly, shows here.
     */
    static Optional<String> outliers(RuntimePredictor after, List<Sample> runs) {
        List<Sample> jobs = transformerRuns(runs);
        if (jobs.size() < MegatronFit.TERM_RUNS) {
            return Optional.empty();
        }
        record Off(String where, double ratio, double beyond) {
        }
        List<Off> off = new java.util.ArrayList<>();
        for (Sample r : jobs) {
            org.scaledl.model.Prediction pr = after.predict(r.workload());
            double m = r.millis();
            double beyond = Math.max(Math.log(m / pr.highMillis()), Math.log(pr.lowMillis() / m));
            if (beyond > MegatronFit.ROBUST) {
                off.add(new Off(r.workload().tag(DatasetReader.SOURCE_TAG).orElse("?"), m / pr.millis(), beyond));
            }
        }
        if (off.isEmpty()) {
            return Optional.empty();
        }
        off.sort(java.util.Comparator.comparingDouble(Off::beyond).reversed());
        String named = String.join("; ", off.stream().limit(NAMED_RUNS).map(o -> String.format(Locale.ROOT,
                "%s measured x%.2f of its prediction", o.where(), o.ratio())).toList());
        boolean one = off.size() == 1;
        return Optional.of(String.format(Locale.ROOT, "%d of %d runs %s more than %.0f%% beyond %s 90%% interval after "
                + "the calibration: %s%s; the calibration weighs such an error by its size, not its square (the "
                + "level by the runs' median), so %s it little: check %s (another cluster, software or setting than "
                + "%s)", off.size(), jobs.size(),
                one ? "lies" : "lie", 100 * MegatronFit.ROBUST, one ? "its" : "their", named,
                off.size() > NAMED_RUNS ? " and " + (off.size() - NAMED_RUNS) + " more" : "",
                one ? "it moves" : "they move", one ? "its row" : "their rows", one ? "it says" : "they say"));
    }

    /** The runs of every --data folder, in order. */
    private Dataset readAll() {
        Dataset d = DatasetReader.read(dataDirs.get(0));
        for (Path more : dataDirs.subList(1, dataDirs.size())) {
            d = d.plus(DatasetReader.read(more));
        }
        return d;
    }
}
