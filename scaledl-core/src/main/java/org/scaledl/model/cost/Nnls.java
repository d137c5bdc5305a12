package org.scaledl.model.cost;

import java.util.Arrays;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.LinearSolverFactory_DDRM;
import org.ejml.interfaces.linsol.LinearSolverDense;

/**
 * Non-negative least squares in Gram form: minimises {@code ½θᵀHθ − bᵀθ} subject to {@code θ ≥ 0}, where
 * {@code H = AᵀA} (plus any penalty) is symmetric positive definite and {@code b = Aᵀy}. Lawson–Hanson active-set
 * algorithm (the "fast NNLS" of Bro and De Jong, 1997, which works on {@code AᵀA} and {@code Aᵀy}); each passive-set
 * subproblem is solved by Cholesky (EJML). Deterministic.
 */
public final class Nnls {
    private Nnls() {
    }

    /**
     * Solves the problem.
     *
     * @param h symmetric positive definite, {@code d × d}, row-major (not modified)
     * @param b length {@code d} (not modified)
     * @return the minimiser, length {@code d}
     */
    public static double[] solve(double[][] h, double[] b) {
        return solve(h, b, null);
    }

    /**
     * Solves the problem from a starting point (warm start): its positive entries form the first passive set, so a
     * nearby problem (the next reweighting step of a fit) takes a few active-set moves instead of building the set
     * from empty. The minimiser is the same (it is unique for positive definite {@code h}), up to rounding.
     *
     * @param start a previous solution, or {@code null} to start from zero
     */
    public static double[] solve(double[][] h, double[] b, double[] start) {
        int d = b.length;
        double[] theta = new double[d];
        boolean[] passive = new boolean[d];
        double tol = 1e-10 * Math.max(1, Arrays.stream(b).map(Math::abs).max().orElse(1));
        if (start != null) {
            for (int j = 0; j < d; j++) {
                passive[j] = start[j] > 0;
                theta[j] = Math.max(0, start[j]);
            }
            theta = feasible(h, b, passive, theta);
        }
        double[] w = gradient(h, b, theta);
        int maxOuter = 3 * d + 10;
        for (int outer = 0; outer < maxOuter; outer++) {
            int t = -1;
            double best = tol;
            for (int j = 0; j < d; j++) {
                if (!passive[j] && w[j] > best) {
                    best = w[j];
                    t = j;
                }
            }
            if (t < 0) {
                break;
            }
            passive[t] = true;
            theta = feasible(h, b, passive, theta);
            w = gradient(h, b, theta);
        }
        return theta;
    }

    /**
     * The Lawson–Hanson inner loop: solves on the passive set and steps back toward {@code theta} (feasible) until
     * the passive solution is positive, dropping variables that reach zero ({@code passive} is modified).
     */
    private static double[] feasible(double[][] h, double[] b, boolean[] passive, double[] theta) {
        int d = b.length;
        for (int inner = 0; inner < 3 * d + 10; inner++) {
            double[] s = solvePassive(h, b, passive);
            double alpha = 1;
            boolean feasible = true;
            for (int j = 0; j < d; j++) {
                if (passive[j] && s[j] <= 0) {
                    feasible = false;
                    double denom = theta[j] - s[j];
                    if (denom > 0) {
                        alpha = Math.min(alpha, theta[j] / denom);
                    }
                }
            }
            if (feasible) {
                return s;
            }
            for (int j = 0; j < d; j++) {
                theta[j] += alpha * (s[j] - theta[j]);
                if (passive[j] && theta[j] <= 1e-14) {
                    passive[j] = false;
                    theta[j] = 0;
                }
            }
        }
        return theta;
    }

    /** {@code b − Hθ}: the negative gradient, positive where raising a variable lowers the objective. */
    private static double[] gradient(double[][] h, double[] b, double[] theta) {
        int d = b.length;
        double[] w = new double[d];
        for (int j = 0; j < d; j++) {
            double hx = 0;
            for (int k = 0; k < d; k++) {
                hx += h[j][k] * theta[k];
            }
            w[j] = b[j] - hx;
        }
        return w;
    }

    private static double[] solvePassive(double[][] h, double[] b, boolean[] passive) {
        int d = b.length;
        int[] idx = new int[d];
        int m = 0;
        for (int j = 0; j < d; j++) {
            if (passive[j]) {
                idx[m++] = j;
            }
        }
        DMatrixRMaj a = new DMatrixRMaj(m, m);
        DMatrixRMaj rhs = new DMatrixRMaj(m, 1);
        for (int r = 0; r < m; r++) {
            for (int c = 0; c < m; c++) {
                a.set(r, c, h[idx[r]][idx[c]]);
            }
            rhs.set(r, 0, b[idx[r]]);
        }
        LinearSolverDense<DMatrixRMaj> solver = LinearSolverFactory_DDRM.symmPosDef(m);
        if (!solver.setA(a)) {
            solver = LinearSolverFactory_DDRM.pseudoInverse(true);
            solver.setA(a);
        }
        DMatrixRMaj x = new DMatrixRMaj(m, 1);
        solver.solve(rhs, x);
        double[] out = new double[d];
        for (int r = 0; r < m; r++) {
            out[idx[r]] = x.get(r, 0);
        }
        return out;
    }

    /** Non-negative least squares of relative errors, columns scaled to unit RMS first. */
    public static double[] relative(double[][] rows, double[] y) {
        int d = rows[0].length;
        double[] scale = new double[d];
        for (int i = 0; i < rows.length; i++) {
            for (int j = 0; j < d; j++) {
                double a = rows[i][j] / y[i];
                scale[j] += a * a;
            }
        }
        for (int j = 0; j < d; j++) {
            scale[j] = scale[j] > 0 ? Math.sqrt(scale[j] / rows.length) : 1;
        }
        double[][] h = new double[d][d];
        double[] b = new double[d];
        for (int i = 0; i < rows.length; i++) {
            for (int j = 0; j < d; j++) {
                double aj = rows[i][j] / y[i] / scale[j];
                b[j] += aj;
                for (int k = 0; k < d; k++) {
                    h[j][k] += aj * rows[i][k] / y[i] / scale[k];
                }
            }
        }
        for (int j = 0; j < d; j++) {
            h[j][j] += 1e-9 * rows.length + 1e-12;
        }
        double[] theta = Nnls.solve(h, b);
        for (int j = 0; j < d; j++) {
            theta[j] /= scale[j];
        }
        return theta;
    }

    /** The dot product of two equally long vectors. */
    public static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }
}
