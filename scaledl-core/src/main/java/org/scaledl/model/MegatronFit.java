package org.scaledl.model;

import java.util.ArrayList;
import java.util.List;
import org.scaledl.model.cost.Nnls;
import org.scaledl.model.device.DeviceStage;
import org.scaledl.model.exec.ParallelExecution;
import org.scaledl.workload.Folds;
import org.scaledl.workload.Sample;

/**
 * Fits the Megatron execution model's group coefficients from measured training iterations, ScaleDL's way: each run's
 * uncalibrated cost groups ({@link ParallelExecution.Group}: contractions, other layers, tensor-parallel,
 * pipeline and data-parallel communication, optimizer, a fixed overhead) are a design row, and the coefficients
 * {@code θ ≥ 0} minimise the squared relative error {@code Σ ((x·θ − y)/y)²} (non-negative least squares on scaled
 * columns, {@link Nnls#relative}). Its errors are each run's prediction by the coefficients fitted without its group
 * (the {@code groupTag}'s values; the fit itself when there are fewer than three groups).
 *
 * @param coefficients  the fitted coefficients, per group
 * @param logErrors     {@code log(predicted / measured)} per run, out of group where cross-validated
 * @param crossValidated whether the errors are out of group
 */
record MegatronFit(double[] coefficients, List<Double> logErrors, boolean crossValidated) {

    static MegatronFit fit(DeviceStage stage, List<Sample> runs, String groupTag) {
        double[][] rows = new double[runs.size()][];
        double[] y = new double[runs.size()];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = stage.execute(runs.get(i).workload()).groups();
            y[i] = runs.get(i).millis();
        }
        double[] theta = Nnls.relative(rows, y);
        List<Folds.Fold> folds = Folds.leaveOneGroupOut(runs, Folds.byTag(groupTag));
        List<Double> errors = new ArrayList<>();
        boolean cv = folds.size() >= 3;
        if (cv) {
            double[] out = new double[runs.size()];
            for (Folds.Fold f : folds) {
                double[][] r = f.train().stream().map(i -> rows[i]).toArray(double[][]::new);
                double[] yy = f.train().stream().mapToDouble(i -> y[i]).toArray();
                double[] th = Nnls.relative(r, yy);
                for (int i : f.test()) {
                    out[i] = Math.log(Nnls.dot(rows[i], th) / y[i]);
                }
            }
            for (double e : out) {
                errors.add(e);
            }
        } else {
            for (int i = 0; i < rows.length; i++) {
                errors.add(Math.log(Nnls.dot(rows[i], theta) / y[i]));
            }
        }
        return new MegatronFit(theta, errors, cv);
    }
}
