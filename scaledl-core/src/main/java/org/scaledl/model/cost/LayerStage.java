package org.scaledl.model.cost;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * A fitted layer cost stage: what one iteration of a workload costs on the machine or device it runs on. The host
 * stage ({@code org.scaledl.model.host}) fits a nonlinear basis per CPU machine from whole-iteration times; the
 * device stage ({@code org.scaledl.model.device}) predicts any described GPU from operator measurements and spreads
 * the work over tensor, pipeline and data parallelism. {@link org.scaledl.model.RuntimePredictor} composes one with
 * the shared parts (interval, domain, provenance) and never asks which it is.
 *
 * <p>Implementations are immutable and thread-safe; each writes itself ({@link #toJson}) and its package reads it
 * back.
 */
public interface LayerStage {
    /** {@code host} or {@code device}: the {@code kind} of its saved form. */
    String kind();

    /**
     * Refuses what the stage cannot predict: a machine or device it does not know, a parallelism it does not model.
     *
     * @throws IllegalArgumentException naming the workload's machine, device or parallelism and the fix
     */
    void check(Workload w);

    /** The predicted time in ms (the fast path: no breakdown). */
    double millis(Workload w);

    /** The predicted time with its per-layer and per-term breakdown. */
    StageCost cost(Workload w);

    /**
     * A copy calibrated on a few measured runs of the machines or devices they name.
     *
     * @throws IllegalArgumentException for a run this stage cannot take
     */
    LayerStage calibrate(List<Sample> runs);

    /**
     * The most times slower or faster than a model's prediction a measurement may be to be taken at all (a run
     * calibrated on, a run fitted, a GPU's profiled kernels as a whole): far beyond a model's error and the few times
     * a machine differs from the one fitted; a time in another unit is a thousand times off.
     */
    double MAX_MEASURED_RATIO = 100;

    /**
     * Whether a ratio of measured to predicted time lies beyond {@link #MAX_MEASURED_RATIO} either way (a ratio that
     * underflows to 0, a measurement of a few subnormal milliseconds, among them); not NaN, which says the stage could
     * not tell.
     */
    static boolean beyondMeasuredRatio(double ratio) {
        return ratio >= 0 && ratio < Double.POSITIVE_INFINITY
                && (ratio > MAX_MEASURED_RATIO || ratio < 1 / MAX_MEASURED_RATIO);
    }

    /**
     * What a calibration run measures over what this stage predicts of it before the calibration it would replace:
     * the ratio {@link org.scaledl.model.RuntimePredictor#calibrate} refuses beyond
     * {@link org.scaledl.model.RuntimePredictor#MAX_CALIBRATION_RATIO} either way; NaN where the stage cannot tell
     * (then {@link #calibrate} refuses the run, saying why, or takes it). By default the current prediction's.
     */
    default double calibrationRatio(Sample run) {
        try {
            return run.millis() / millis(run.workload());
        } catch (IllegalArgumentException | org.scaledl.InvalidInputException e) {
            return Double.NaN;
        }
    }

    /** The CPU machines or GPUs the stage knows from measurements (fitted and calibrated), sorted. */
    List<String> devices();

    /**
     * The workload's design row for choosing what to profile (D-optimal design): the columns its fit or calibration
     * estimates, evaluated for the workload before anything is measured.
     */
    double[] designRow(Workload w);

    /**
     * The 90 % interval's log-ratio ends for a workload, when the stage knows its own for that kind of workload
     * (the device stage for jobs of configuration-built transformers, whose errors differ from eager runs'); empty:
     * the predictor's.
     */
    default java.util.Optional<double[]> interval(Workload w) {
        return java.util.Optional.empty();
    }

    /**
     * The workload with what it leaves to the predictor decided (a transformer's {@link
     * org.scaledl.workload.Recompute#AUTO} recomputation: the least that fits); the workload itself where nothing is
     * left or the stage decides nothing. Predicting the result gives what predicting the workload gives.
     */
    default Workload resolve(Workload w) {
        return w;
    }

    /**
     * The peak memory one device needs for a workload, bytes, when the stage estimates it (the fast path of
     * {@link StageCost#memoryBytes()}).
     */
    default java.util.OptionalDouble memoryBytes(Workload w) {
        return cost(w).memoryBytes();
    }

    /**
     * The stage's cost of single operators, when it predicts layer by layer from operator measurements (the device
     * stage); empty for a stage fitted on whole iterations only.
     */
    default java.util.Optional<OperatorCost> operators() {
        return java.util.Optional.empty();
    }

    /**
     * A copy adapted to a device from a few profiled operators (the device stage: per device, family and pass, a
     * damped median ratio of measured to predicted time).
     *
     * @throws IllegalStateException for a stage that cannot take operator measurements (naming what it takes)
     */
    default LayerStage adapt(List<org.scaledl.workload.OpMeasurement> profiled) {
        throw new IllegalStateException("adapting to profiled operators needs a device predictor; this one is "
                + kind() + " (calibrate it with measured runs instead)");
    }

    /**
     * What is known of a machine this stage predicts (a CPU machine's cores, vector width, caches, clock and
     * bandwidth, as its runs described it), if anything.
     */
    default java.util.Optional<org.scaledl.workload.Device> description(String machine) {
        return java.util.Optional.empty();
    }

    /**
     * Whether the stage predicts jobs spread over several devices with tensor, pipeline, context and expert
     * parallelism (a layout search needs it).
     */
    default boolean modelsClusters() {
        return false;
    }

    /** The saved form, with {@code kind} set. */
    ObjectNode toJson();
}
