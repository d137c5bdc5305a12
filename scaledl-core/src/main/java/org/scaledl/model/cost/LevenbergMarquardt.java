package org.scaledl.model.cost;

import java.util.function.Function;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.LinearSolverFactory_DDRM;
import org.ejml.interfaces.linsol.LinearSolverDense;
import org.scaledl.Checks;

/**
 * Nonlinear least squares by Levenberg–Marquardt: minimises {@code Σ r_i(x)²} from a start, with a forward-difference
 * Jacobian and the damped normal equations {@code (JᵀJ + μ·diag(JᵀJ)) δ = −Jᵀr} solved by Cholesky (EJML). For the
 * few-parameter models fitted to measured iterations (a dozen parameters, thousands of residuals). Deterministic.
 *
 * <pre>{@code
 * double[] x = LevenbergMarquardt.minimise(p -> residuals(p), new double[] {0, 0}, 200);
 * }</pre>
 */
public final class LevenbergMarquardt {
    private LevenbergMarquardt() {
    }

    /**
     * The minimiser.
     *
     * @param residuals the residual vector at a point (must be finite where the search goes; not modified)
     * @param start     the starting point (not modified)
     * @param maxIterations the most iterations
     * @return the point reached when the step or the improvement becomes negligible, or after {@code maxIterations}
     */
    public static double[] minimise(Function<double[], double[]> residuals, double[] start, int maxIterations) {
        Checks.argument(start.length > 0, "no parameters");
        int p = start.length;
        double[] x = start.clone();
        double[] r = residuals.apply(x);
        double cost = sumSquares(r);
        double mu = 1e-3;
        for (int it = 0; it < maxIterations; it++) {
            double[][] jac = new double[r.length][p];
            for (int k = 0; k < p; k++) {
                double h = 1e-6 * Math.max(1, Math.abs(x[k]));
                double[] xh = x.clone();
                xh[k] += h;
                double[] rh = residuals.apply(xh);
                for (int i = 0; i < r.length; i++) {
                    jac[i][k] = (rh[i] - r[i]) / h;
                }
            }
            double[][] a = new double[p][p];
            double[] g = new double[p];
            for (int i = 0; i < r.length; i++) {
                for (int k = 0; k < p; k++) {
                    g[k] += jac[i][k] * r[i];
                    for (int l = 0; l < p; l++) {
                        a[k][l] += jac[i][k] * jac[i][l];
                    }
                }
            }
            boolean improved = false;
            for (int tries = 0; tries < 20 && !improved; tries++) {
                double[][] damped = new double[p][p];
                for (int k = 0; k < p; k++) {
                    damped[k] = a[k].clone();
                    damped[k][k] += mu * Math.max(a[k][k], 1e-12) + 1e-12;
                }
                double[] step = solve(damped, g);
                double[] xn = new double[p];
                for (int k = 0; k < p; k++) {
                    xn[k] = x[k] - step[k];
                }
                double[] rn = residuals.apply(xn);
                double cn = sumSquares(rn);
                if (Double.isFinite(cn) && cn < cost) {
                    double gain = cost - cn;
                    x = xn;
                    r = rn;
                    cost = cn;
                    mu = Math.max(mu / 3, 1e-12);
                    improved = true;
                    if (gain < 1e-12 * Math.max(1, cost)) {
                        return x;
                    }
                } else {
                    mu *= 4;
                }
            }
            if (!improved) {
                return x;
            }
        }
        return x;
    }

    private static double sumSquares(double[] r) {
        double s = 0;
        for (double v : r) {
            s += v * v;
        }
        return s;
    }

    private static double[] solve(double[][] a, double[] b) {
        DMatrixRMaj m = new DMatrixRMaj(a);
        LinearSolverDense<DMatrixRMaj> s = LinearSolverFactory_DDRM.linear(b.length);
        if (!s.setA(m)) {
            return new double[b.length];
        }
        DMatrixRMaj x = new DMatrixRMaj(b.length, 1);
        s.solve(new DMatrixRMaj(b.length, 1, true, b), x);
        return x.getData();
    }
}
