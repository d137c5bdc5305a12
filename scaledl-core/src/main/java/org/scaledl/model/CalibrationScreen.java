package org.scaledl.model;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.scaledl.Checks;
import org.scaledl.model.cost.Quantiles;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * The runs a calibration should take, screened as {@code fit --calibrate gpu --runs} screens them before it
 * calibrates ({@link RuntimePredictor#screen}): each run predicted once; the runs of a job the predictor misses by more
 * than {@value #MISMATCH} times either way (their median: another job than the run says, or another unit) left out,
 * with the unit a time about 1,000 times off was probably written in; the runs kept that the predictor says do not
 * fit their GPUs' memory named (is the run the job that ran?); and whether the predictor was calibrated already (the
 * same runs again would count twice). {@link RuntimePredictor#calibrate} itself refuses only a run
 * {@link RuntimePredictor#MAX_CALIBRATION_RATIO} times off: a caller of the library screens first to calibrate as the
 * command line does.
 *
 * <pre>{@code
 * CalibrationScreen screen = gpu.screen(runs);
 * screen.leftOut().forEach(l -> log.warn("left out: {}", l.describe()));
 * RuntimePredictor mine = gpu.calibrate(screen.kept());
 * }</pre>
 *
 * @param kept              the runs to calibrate on, in their order
 * @param leftOut           the runs left out, in their order
 * @param predictedNotToFit the kept runs the predictor says do not fit their GPUs' memory
 * @param ratios            every run's predicted over measured time, in the order given (before any calibration)
 * @param calibratedOn      where the predictor was calibrated already, on how many runs
 */
public record CalibrationScreen(List<Sample> kept, List<LeftOut> leftOut, List<Sample> predictedNotToFit,
        List<Double> ratios, Optional<Integer> calibratedOn) {
    /** A job's runs may be off their prediction by this factor (their median) before they are left out. */
    public static final double MISMATCH = 5;

    /** Validates and copies. */
    public CalibrationScreen {
        kept = List.copyOf(kept);
        leftOut = List.copyOf(leftOut);
        predictedNotToFit = List.copyOf(predictedNotToFit);
        ratios = List.copyOf(ratios);
        Objects.requireNonNull(calibratedOn, "calibratedOn");
        Checks.argument(kept.size() + leftOut.size() == ratios.size(), "%s kept and %s left out of %s runs",
                kept.size(), leftOut.size(), ratios.size());
    }

    /**
     * A run left out.
     *
     * @param index     its place among the runs given, from 1
     * @param run       the run
     * @param predicted what the predictor says of it, ms
     */
    public record LeftOut(int index, Sample run, double predicted) {
        /** Validates. */
        public LeftOut {
            Objects.requireNonNull(run, "run");
        }

        /**
         * The run in a line: its source (or id), the predicted and measured times and the unit its time was probably
         * written in ({@link #unitSlip}), where about 1,000 times off.
         */
        public String describe() {
            String unit = unitSlip(Math.log(predicted / run.millis()));
            return String.format(Locale.ROOT, "%s (predicted %.1f ms, measured %.1f ms%s)", source(run).orElse("run "
                    + index), predicted, run.millis(), unit.isEmpty() ? "" : ": " + unit);
        }
    }

    /**
     * Screens runs with a predictor.
     *
     * @throws IllegalArgumentException naming the run (its place from 1, and its source) that the predictor cannot
     *         predict (a layout its model does not take, a device it lacks), as {@link RuntimePredictor#calibrate} does
     */
    static CalibrationScreen of(RuntimePredictor p, List<Sample> runs) {
        Objects.requireNonNull(runs, "runs").forEach(r -> Objects.requireNonNull(r, "a run of runs"));
        double[] ratios = new double[runs.size()];
        boolean[] outOfMemory = new boolean[runs.size()];
        List<String> jobs = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            Sample r = runs.get(i);
            Prediction pr = predictNamed(p, i, r);
            ratios[i] = pr.millis() / r.millis();
            outOfMemory[i] = pr.outOfMemory();
            jobs.add(r.workload().identity());
        }
        boolean[] far = mismatched(ratios, jobs);
        List<Sample> kept = new ArrayList<>();
        List<LeftOut> left = new ArrayList<>();
        List<Sample> unfitting = new ArrayList<>();
        List<Double> all = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            all.add(ratios[i]);
            if (far[i]) {
                left.add(new LeftOut(i + 1, runs.get(i), ratios[i] * runs.get(i).millis()));
            } else {
                kept.add(runs.get(i));
                if (outOfMemory[i]) {
                    unfitting.add(runs.get(i));
                }
            }
        }
        String earlier = p.provenance().config().get(Provenance.CALIBRATION_RUNS);
        Optional<Integer> before = Optional.ofNullable(earlier).flatMap(e -> {
            try {
                return Optional.of(Integer.parseInt(e));
            } catch (NumberFormatException x) {
                return Optional.empty();
            }
        });
        return new CalibrationScreen(kept, left, unfitting, all, before);
    }

    /**
     * A run's prediction; where the predictor refuses it, the same kind of error naming the run
     * ({@link #runName}): an {@code IllegalArgumentException} for a job it does not take, an
     * {@code InvalidInputException} for bad data.
     */
    static Prediction predictNamed(RuntimePredictor p, int index, Sample run) {
        try {
            return p.predict(run.workload());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(runName(index, run) + ": " + e.getMessage(), e);
        } catch (org.scaledl.InvalidInputException e) {
            throw org.scaledl.InvalidInputException.of(runName(index, run) + ": " + e.getMessage());
        }
    }

    /**
     * Where a run comes from, printable: its source (a table's or log's file and line), else its id ({@code id X});
     * empty where it has neither.
     */
    public static Optional<String> source(Sample run) {
        Workload w = run.workload();
        return w.tag(org.scaledl.io.DatasetReader.SOURCE_TAG).or(() -> w.tag("id").map(id -> "id " + id))
                .map(x -> org.scaledl.InvalidInputException.printable(x, 200));
    }

    /** How a calibration run is named in errors: its place from 1, and {@link #source} where it has one. */
    static String runName(int index, Sample run) {
        return "calibration run " + (index + 1) + source(run).map(x -> " (" + x + ")").orElse("");
    }

    /**
     * Where most of the runs are left out: rather a misread column than a slower or faster cluster.
     */
    public boolean mostLeftOut() {
        return 2 * leftOut.size() > ratios.size();
    }

    /**
     * Where the runs are about a thousand times off the same way (their median): the unit their times were probably
     * written in (" (every run's time is about 1,000 times shorter than predicted: seconds, not milliseconds?)"), else
     * nothing.
     */
    public String unitHint() {
        double median = Quantiles.median(ratios.stream().mapToDouble(Math::log).toArray());
        String unit = unitSlip(median);
        return unit.isEmpty() ? "" : " (every run's time is about 1,000 times " + (median > 0 ? "shorter" : "longer")
                + " than predicted: " + unit + ")";
    }

    /**
     * The unit a time about 1,000 times off its prediction was probably written in ({@code logRatio}, the logarithm of
     * predicted over measured, within a factor of 3 of ±ln 1,000): "seconds, not milliseconds?" or "microseconds, not
     * milliseconds?"; else empty.
     */
    public static String unitSlip(double logRatio) {
        return Math.abs(logRatio - Math.log(1000)) < Math.log(3) ? "seconds, not milliseconds?"
                : Math.abs(logRatio + Math.log(1000)) < Math.log(3) ? "microseconds, not milliseconds?" : "";
    }

    /**
     * Which runs a calibration leaves out, by their ratios of predicted to measured time and their jobs: every run of
     * a job whose runs' median ratio is beyond {@value #MISMATCH} either way (a job the model misses that far is rather
     * another job than the row says), so runs of one job measured alike are kept or left out together (three runs
     * 4.8–5.2 times faster than predicted lost the middle one, and the other two halved the level), except a run
     * of it within the limit and nearer its prediction than that median; and a run of its own beyond
     * {@link RuntimePredictor#MAX_CALIBRATION_RATIO}, which the library refuses to calibrate on.
     *
     * @param ratios each run's predicted over measured time
     * @param jobs   each run's job (runs of one job share it)
     */
    public static boolean[] mismatched(double[] ratios, List<String> jobs) {
        Checks.argument(ratios.length == jobs.size(), "%s ratios for %s jobs", ratios.length, jobs.size());
        Map<String, List<Double>> byJob = new HashMap<>();
        for (int i = 0; i < ratios.length; i++) {
            byJob.computeIfAbsent(jobs.get(i), k -> new ArrayList<>()).add(Math.log(ratios[i]));
        }
        double limit = Math.log(MISMATCH);
        boolean[] out = new boolean[ratios.length];
        for (int i = 0; i < ratios.length; i++) {
            double median = Quantiles.median(byJob.get(jobs.get(i)).stream().mapToDouble(Double::doubleValue)
                    .toArray());
            // (a run of the job near its prediction, nearer it than the job's far median, is kept: one run
            // written in seconds took the job's correct run with it)
            double own = Math.log(ratios[i]);
            out[i] = Math.abs(median) > limit && (Math.abs(own) > limit || Math.abs(own - median) < Math.abs(own))
                    || Math.abs(own) > Math.log(RuntimePredictor.MAX_CALIBRATION_RATIO);
        }
        return out;
    }
}
