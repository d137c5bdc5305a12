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
 * the squared log-ratio of predicted to measured time (Levenberg–Marquardt on their logarithms, so they stay
 * positive), with a weak pull ({@value #PRIOR}) of the scales that physics fixes at 1 (contractions, other layers,
 * collectives, transfers, the optimizer) toward 1: the data then decide what they can tell apart, and the physics
 * the rest (the measured runs of small models cannot separate the contractions from the memory-bound layers).
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
        MegatronModel model = fit(terms, y, all);
        List<Folds.Fold> folds = Folds.leaveOneGroupOut(runs, Folds.byTag(groupTag));
        List<Double> errors = new ArrayList<>();
        boolean cv = folds.size() >= 3;
        double[] out = new double[y.length];
        if (cv) {
            for (Folds.Fold f : folds) {
                MegatronModel m = fit(terms, y, f.train().stream().mapToInt(Integer::intValue).toArray());
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
        double[] interval = RuntimePredictor.interval(errors);
        return new MegatronFit(model.withInterval(interval[0], interval[1]), errors, cv);
    }

    /** The coefficients for a subset of the runs. */
    static MegatronModel fit(List<MegatronTerms> terms, double[] y, int[] rows) {
        int n = MegatronModel.NAMES.size();
        double[] start = new double[n];
        start[3] = Math.log(1.0);
        start[4] = Math.log(0.5);
        start[8] = Math.log(1.0);
        int pulled = 0;
        for (boolean b : PULLED) {
            pulled += b ? 1 : 0;
        }
        int penalties = pulled;
        double[] phi = LevenbergMarquardt.minimise(x -> {
            double[] c = new double[n];
            for (int k = 0; k < n; k++) {
                c[k] = Math.exp(Math.max(-30, Math.min(30, x[k])));
            }
            MegatronModel m = new MegatronModel(c);
            double[] r = new double[rows.length + penalties];
            for (int i = 0; i < rows.length; i++) {
                r[i] = Math.log(m.millis(terms.get(rows[i])) / y[rows[i]]);
            }
            int at = rows.length;
            for (int k = 0; k < n; k++) {
                if (PULLED[k]) {
                    r[at++] = PRIOR * x[k];
                }
            }
            return r;
        }, start, 300);
        double[] c = new double[n];
        for (int k = 0; k < n; k++) {
            c[k] = Math.exp(Math.max(-30, Math.min(30, phi[k])));
        }
        return new MegatronModel(c);
    }
}
