package org.scaledl.eval;

import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimeModel;
import org.scaledl.model.RuntimeTrainer;
import org.scaledl.model.cost.Roofline;
import org.scaledl.model.host.LayerBasis;
import org.scaledl.model.cost.Nnls;
import java.util.ArrayList;
import java.util.List;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.LinearSolverFactory_DDRM;
import org.ejml.interfaces.linsol.LinearSolverDense;
import org.scaledl.Checks;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * The methods ScaleDL is compared with, fitted on the same samples and evaluated by the same code.
 *
 * <ul>
 *   <li>{@link #additiveLinear()} ({@code additive-linear}): the traditional additive unit model, each layer's time
 *       linear in its FLOPs per op family ({@code a_f + b_f·FLOPs}, plus a pooled {@code a + b·FLOPs} shared by all
 *       layers so unseen families are not free), summed, plus an intercept; non-negative, relative-error fit.</li>
 *   <li>{@link #roofline()} ({@code roofline}): PALEO-like analytic model, each layer
 *       {@code max(FLOPs / (peak·threads), bytes / bandwidth)}, summed; peak and bandwidth fitted (grid search on
 *       their ratio, closed-form scale).</li>
 *   <li>{@link #graphRegression()} ({@code graph-regression}): whole-graph regression, {@code log time} linear in
 *       log totals (FLOPs, bytes, parameters, nodes, batch, world size, threads) and the phase; no layer
 *       structure.</li>
 * </ul>
 */
public final class Baselines {
    private Baselines() {
    }

    /** All three baselines, in the order above. */
    public static List<RuntimeTrainer> all() {
        return List.of(additiveLinear(), roofline(), graphRegression());
    }

    /** The additive per-layer linear-in-FLOPs model. */
    public static RuntimeTrainer additiveLinear() {
        return new Trainer("additive-linear") {
            @Override
            public RuntimeModel fit(List<Sample> samples) {
                check(samples);
                int fam = OpFamily.values().length;
                int width = 2 * fam + 3;
                double[][] rows = new double[samples.size()][];
                double[] y = new double[samples.size()];
                for (int i = 0; i < rows.length; i++) {
                    rows[i] = additiveRow(samples.get(i).workload(), width);
                    y[i] = samples.get(i).millis();
                }
                double[] theta = Nnls.relative(rows, y);
                return model(name(), w -> Nnls.dot(additiveRow(w, width), theta));
            }
        };
    }

    private static double[] additiveRow(Workload w, int width) {
        int fam = OpFamily.values().length;
        double[] r = new double[width];
        for (LayerFeatures lf : LayerBasis.standard().features(w)) {
            if (!lf.executes()) {
                continue;
            }
            double flops = lf.flopsFwd() + lf.flopsBwd();
            r[2 * lf.family().ordinal()] += 1;
            r[2 * lf.family().ordinal() + 1] += flops;
            r[2 * fam] += 1;
            r[2 * fam + 1] += flops;
        }
        r[2 * fam + 2] = 1;
        return r;
    }

    /** The roofline (PALEO-like) analytic model. */
    public static RuntimeTrainer roofline() {
        return new Trainer("roofline") {
            @Override
            public RuntimeModel fit(List<Sample> samples) {
                check(samples);
                List<double[][]> layers = new ArrayList<>();
                for (Sample s : samples) {
                    layers.add(rooflineLayers(s.workload()));
                }
                double bestErr = Double.POSITIVE_INFINITY;
                double bestRatio = 1;
                double bestScale = 1;
                for (int g = 0; g <= 240; g++) {
                    double ratio = Math.pow(10, -2 + g * 0.025);
                    double sxy = 0;
                    double sxx = 0;
                    double[] z = new double[samples.size()];
                    for (int i = 0; i < z.length; i++) {
                        z[i] = rooflineSum(layers.get(i), ratio) / samples.get(i).millis();
                        sxy += z[i];
                        sxx += z[i] * z[i];
                    }
                    if (sxx == 0) {
                        continue;
                    }
                    double scale = sxy / sxx;
                    double err = 0;
                    for (double zi : z) {
                        err += (scale * zi - 1) * (scale * zi - 1);
                    }
                    if (err < bestErr) {
                        bestErr = err;
                        bestRatio = ratio;
                        bestScale = scale;
                    }
                }
                double ratio = bestRatio;
                double scale = bestScale;
                return model(name(), w -> scale * rooflineSum(rooflineLayers(w), ratio));
            }
        };
    }

    /** Per executed layer: {FLOPs / threads, bytes}. */
    private static double[][] rooflineLayers(Workload w) {
        List<double[]> out = new ArrayList<>();
        for (LayerFeatures lf : LayerBasis.standard().features(w)) {
            if (lf.executes()) {
                out.add(new double[] {(lf.flopsFwd() + lf.flopsBwd()) / w.threads(), lf.bytesFwd() + lf.bytesBwd()});
            }
        }
        return out.toArray(new double[0][]);
    }

    /** Σ max(F/ratio, B): time in units of 1/bandwidth, with ratio = peak/bandwidth (FLOPs per byte). */
    private static double rooflineSum(double[][] layers, double ratio) {
        double t = 0;
        for (double[] l : layers) {
            t += Roofline.time(l[0], l[1], ratio, 1);
        }
        return t;
    }

    /** The whole-graph log-linear regression. */
    public static RuntimeTrainer graphRegression() {
        return new Trainer("graph-regression") {
            @Override
            public RuntimeModel fit(List<Sample> samples) {
                check(samples);
                int p = graphFeatures(samples.get(0).workload()).length;
                DMatrixRMaj a = new DMatrixRMaj(p, p);
                DMatrixRMaj b = new DMatrixRMaj(p, 1);
                for (Sample s : samples) {
                    double[] x = graphFeatures(s.workload());
                    double y = Math.log(s.millis());
                    for (int j = 0; j < p; j++) {
                        b.add(j, 0, x[j] * y);
                        for (int k = 0; k < p; k++) {
                            a.add(j, k, x[j] * x[k]);
                        }
                    }
                }
                for (int j = 1; j < p; j++) {
                    a.add(j, j, 1e-3 * samples.size());
                }
                LinearSolverDense<DMatrixRMaj> solver = LinearSolverFactory_DDRM.pseudoInverse(true);
                solver.setA(a);
                DMatrixRMaj beta = new DMatrixRMaj(p, 1);
                solver.solve(b, beta);
                double[] coef = beta.getData().clone();
                return model(name(), w -> Math.exp(Nnls.dot(graphFeatures(w), coef)));
            }
        };
    }

    private static double[] graphFeatures(Workload w) {
        double flops = 0;
        double bytes = 0;
        int nodes = 0;
        for (LayerFeatures lf : LayerBasis.standard().features(w)) {
            flops += lf.flopsFwd() + lf.flopsBwd();
            bytes += lf.bytesFwd() + lf.bytesBwd();
            nodes += lf.executes() ? 1 : 0;
        }
        return new double[] {1, Math.log1p(flops), Math.log1p(bytes), Math.log1p(w.graph().parameterCount()),
            Math.log1p(nodes), Math.log(w.batch()), Math.log(w.worldSize()), Math.log(w.threads()),
            w.phase() == Phase.TRAIN ? 1 : 0};
    }



    private static void check(List<Sample> samples) {
        Checks.argument(samples.size() >= 2, "need at least 2 samples to fit, got %s", samples.size());
    }

    private static RuntimeModel model(String name, java.util.function.ToDoubleFunction<Workload> f) {
        return new RuntimeModel() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Prediction predict(Workload workload) {
                return Prediction.point(Math.max(0, f.applyAsDouble(workload)));
            }
        };
    }

    private abstract static class Trainer implements RuntimeTrainer {
        private final String name;

        Trainer(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }
    }
}
