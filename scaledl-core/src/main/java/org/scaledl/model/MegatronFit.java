package org.scaledl.model;

import java.util.ArrayList;
import java.util.List;
import org.scaledl.model.cost.LevenbergMarquardt;
import org.scaledl.model.device.DeviceStage;
import org.scaledl.model.exec.MegatronModel;
import org.scaledl.model.exec.MegatronTerms;
import org.scaledl.workload.Folds;
import org.scaledl.workload.Sample;

/**
 * Fits the Megatron execution model ({@link MegatronModel}) from measured training iterations, ScaleDL's way: each
 * run's uncalibrated terms ({@link MegatronTerms}: contractions and other layers as the device layer model predicts
 * them, collectives, layer executions, hand-offs, the optimizer) against its measured time. The coefficients minimise
 * the squared relative error of the predicted time (the compute part's four by Levenberg–Marquardt on their
 * logarithms, the five additive ones by non-negative least squares at every step), with a weak pull ({@value #PRIOR})
 * of the scales that physics fixes at 1 (contractions, other layers, collectives, transfers, the optimizer) toward 1:
 * the data then decide what they can tell apart, and the physics the rest (the measured runs of small models cannot
 * separate the contractions from the memory-bound layers).
 *
 * <p>Its errors are each run's prediction by the model fitted without its group (the {@code groupTag}'s values;
 * the fit's own errors when there are fewer than three groups).
 *
 * @param model          the fitted model
 * @param logErrors      {@code log(predicted / measured)} per run, out of group where cross-validated
 * @param crossValidated whether the errors are out of group
 */
record MegatronFit(MegatronModel model, List<Double> logErrors, boolean crossValidated) {
    /** The weight of the pull toward the physical scales. */
    static final double PRIOR = 0.3;
    /** Coefficients pulled toward 1 (scales of physical estimates); the others are free. */
    private static final boolean[] PULLED = {true, true, true, false, false, true, true, true, false};

    static MegatronFit fit(DeviceStage stage, List<Sample> runs, String groupTag) {
        return fit(stage, runs, groupTag, MegatronModel.uncalibrated());
    }

    /**
     * The fit with the physical scales pulled toward {@code centre}'s instead of 1: a calibration of a fitted model
     * on a few runs of the user's stays near it where they say little.
     */
    static MegatronFit fit(DeviceStage stage, List<Sample> runs, String groupTag, MegatronModel centre) {
        double[] mid = centre.coefficients();
        List<MegatronTerms> terms = new ArrayList<>();
        double[] y = new double[runs.size()];
        for (int i = 0; i < y.length; i++) {
            terms.add(stage.megatronTerms(runs.get(i).workload()));
            y[i] = runs.get(i).millis();
        }
        int[] all = new int[y.length];
        for (int i = 0; i < all.length; i++) {
            all[i] = i;
        }
        MegatronModel model = fit(terms, y, all, mid);
        List<Folds.Fold> folds = Folds.leaveOneGroupOut(runs, Folds.byTag(groupTag));
        List<Double> errors = new ArrayList<>();
        boolean cv = folds.size() >= 3;
        double[] out = new double[y.length];
        if (cv) {
            for (Folds.Fold f : folds) {
                MegatronModel m = fit(terms, y, f.train().stream().mapToInt(Integer::intValue).toArray(), mid);
                for (int i : f.test()) {
                    out[i] = Math.log(m.millis(terms.get(i)) / y[i]);
                }
            }
        } else {
            for (int i = 0; i < y.length; i++) {
                out[i] = Math.log(model.millis(terms.get(i)) / y[i]);
            }
        }
        for (double e : out) {
            errors.add(e);
        }
        double[] interval = org.scaledl.model.cost.Quantiles.interval(errors);
        return new MegatronFit(model.withInterval(interval[0], interval[1]), errors, cv);
    }

    /** The coefficients multiplying the terms that add (hand-offs, transfers, data-parallel, optimizer, fixed). */
    private static final int[] LINEAR = {4, 5, 6, 7, 8};
    /** The coefficients inside the compute part (contractions, other layers, tensor-parallel, host per layer). */
    private static final int[] NONLINEAR = {0, 1, 2, 3};

    /**
     * The coefficients for a subset of the runs: the compute part's four by Levenberg–Marquardt on their logarithms,
     * and for each of its steps the five additive ones by non-negative least squares (variable projection), both on
     * relative errors, with the physical scales pulled toward 1.
     */
    static MegatronModel fit(List<MegatronTerms> terms, double[] y, int[] rows) {
        return fit(terms, y, rows, MegatronModel.uncalibrated().coefficients());
    }

    /** The coefficients with the physical scales pulled toward {@code centre}'s. */
    static MegatronModel fit(List<MegatronTerms> terms, double[] y, int[] rows, double[] centre) {
        int n = MegatronModel.NAMES.size();
        double[] start = new double[NONLINEAR.length];
        for (int k = 0; k < start.length; k++) {
            start[k] = Math.log(centre[NONLINEAR[k]] > 0 ? centre[NONLINEAR[k]] : 1.0);
        }
        double[] phi = LevenbergMarquardt.minimise(x -> residuals(terms, y, rows, x, null, centre), start, 200);
        double[] c = new double[n];
        residuals(terms, y, rows, phi, c, centre);
        return new MegatronModel(c);
    }

    /**
     * The residuals of the model with the compute part's log-coefficients {@code phi} and the additive ones that fit
     * best given them; {@code out}, when not null, receives all the coefficients.
     */
    private static double[] residuals(List<MegatronTerms> terms, double[] y, int[] rows, double[] phi, double[] out,
            double[] centre) {
        int n = MegatronModel.NAMES.size();
        double[] c = new double[n];
        for (int k = 0; k < NONLINEAR.length; k++) {
            c[NONLINEAR[k]] = Math.exp(Math.max(-30, Math.min(30, phi[k])));
        }
        MegatronModel compute = new MegatronModel(c);
        double[] base = new double[rows.length];
        double[][] a = new double[rows.length][LINEAR.length];
        for (int i = 0; i < rows.length; i++) {
            MegatronTerms t = terms.get(rows[i]);
            base[i] = compute.millis(t);
            double yi = y[rows[i]];
            a[i] = new double[] {t.sends() / yi, t.pipelineComm() / yi, t.dataComm() / yi, t.optimizer() / yi,
                1 / yi};
        }
        // inner problem: min Σ (a_i·x − (1 − base_i / y_i))² + PRIOR² Σ_pulled (x_k − centre_k)², x ≥ 0
        int m = LINEAR.length;
        double[][] h = new double[m][m];
        double[] g = new double[m];
        for (int i = 0; i < rows.length; i++) {
            double target = 1 - base[i] / y[rows[i]];
            for (int j = 0; j < m; j++) {
                g[j] += a[i][j] * target;
                for (int k = 0; k < m; k++) {
                    h[j][k] += a[i][j] * a[i][k];
                }
            }
        }
        for (int j = 0; j < m; j++) {
            if (PULLED[LINEAR[j]]) {
                h[j][j] += PRIOR * PRIOR;
                g[j] += PRIOR * PRIOR * centre[LINEAR[j]];
            }
            h[j][j] += 1e-12 * (1 + h[j][j]);
        }
        double[] x = org.scaledl.model.cost.Nnls.solve(h, g);
        for (int j = 0; j < m; j++) {
            c[LINEAR[j]] = x[j];
        }
        if (out != null) {
            System.arraycopy(c, 0, out, 0, n);
        }
        MegatronModel model = new MegatronModel(c);
        int pulled = 0;
        for (int k : NONLINEAR) {
            pulled += PULLED[k] ? 1 : 0;
        }
        double[] r = new double[rows.length + pulled];
        for (int i = 0; i < rows.length; i++) {
            r[i] = model.millis(terms.get(rows[i])) / y[rows[i]] - 1;
        }
        int at = rows.length;
        for (int k = 0; k < NONLINEAR.length; k++) {
            if (PULLED[NONLINEAR[k]]) {
                r[at++] = PRIOR * (phi[k] - Math.log(centre[NONLINEAR[k]]));
            }
        }
        return r;
    }
}
