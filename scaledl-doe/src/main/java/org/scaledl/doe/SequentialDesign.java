package org.scaledl.doe;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;

/**
 * Greedy sequential D-optimal augmentation — "what should I profile next, given these runs?". Each step adds the
 * candidate with the largest variance {@code d(x) = xᵀM⁻¹x}, which multiplies {@code det M} by {@code 1 + d(x)}, the
 * largest possible single-row gain; {@code M⁻¹} is updated by Sherman–Morrison.
 *
 * <pre>{@code
 * List<Integer> next = SequentialDesign.next(candidates, measuredRows, 3);
 * }</pre>
 */
public final class SequentialDesign {
    private SequentialDesign() {
    }

    /**
     * Chooses {@code k} more candidates (distinct, none of them already chosen).
     *
     * @param candidates N × p rows (not modified; finite, of magnitude at most {@link FedorovExchange#MAX_VALUE})
     * @param measured   rows already measured (may be empty)
     * @param k          how many to add, 1 ≤ k ≤ N
     * @return candidate indices in the order they were picked
     */
    public static List<Integer> next(double[][] candidates, double[][] measured, int k) {
        return next(candidates, measured, k, 1e-8);
    }

    /** As {@link #next(double[][], double[][], int)} with an explicit ridge. */
    public static List<Integer> next(double[][] candidates, double[][] measured, int k, double ridge) {
        if (!(java.util.Objects.requireNonNull(candidates, "candidates").length > 0)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "no candidates"));
        }
        candidates = Rows.checkedCopy(candidates, "row", -1);
        measured = Rows.checkedCopy(measured, "measured row", candidates[0].length);
        Rows.ridge(ridge);
        if (!(k >= 1 && k <= candidates.length)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "k must be in 1..%s, got %s", candidates.length, k));
        }
        int p = candidates[0].length;
        DMatrixRMaj m = new DMatrixRMaj(p, p);
        for (double[] r : measured) {
            for (int a = 0; a < p; a++) {
                for (int b = 0; b < p; b++) {
                    m.add(a, b, r[a] * r[b]);
                }
            }
        }
        for (int j = 0; j < p; j++) {
            m.add(j, j, ridge);
        }
        DMatrixRMaj inv = new DMatrixRMaj(p, p);
        if (!(CommonOps_DDRM.invert(m, inv)) || !finite(inv)) {
            throw new IllegalStateException(String.format(Locale.ROOT, "information matrix is singular: give a ridge "
                    + "above 0 (%s), or measured rows that span the columns", ridge));
        }
        boolean[] taken = new boolean[candidates.length];
        List<Integer> out = new ArrayList<>();
        double[] u = new double[p];
        for (int step = 0; step < k; step++) {
            int best = -1;
            double bestD = -1;
            for (int j = 0; j < candidates.length; j++) {
                if (taken[j]) {
                    continue;
                }
                double d = 0;
                double[] v = candidates[j];
                for (int a = 0; a < p; a++) {
                    double s = 0;
                    for (int b = 0; b < p; b++) {
                        s += inv.unsafe_get(a, b) * v[b];
                    }
                    d += v[a] * s;
                }
                if (d > bestD) {
                    bestD = d;
                    best = j;
                }
            }
            if (best < 0) {
                // every remaining candidate adds nothing (or the inverse degenerated): no choice is D-optimal
                throw new IllegalStateException(String.format(Locale.ROOT, "no remaining candidate adds information "
                        + "after %d of %d; give a ridge above 0 (%s)", step, k, ridge));
            }
            taken[best] = true;
            out.add(best);
            double[] v = candidates[best];
            for (int a = 0; a < p; a++) {
                double s = 0;
                for (int b = 0; b < p; b++) {
                    s += inv.unsafe_get(a, b) * v[b];
                }
                u[a] = s;
            }
            for (int a = 0; a < p; a++) {
                for (int b = 0; b < p; b++) {
                    inv.add(a, b, -u[a] * u[b] / (1 + bestD));
                }
            }
        }
        return out;
    }

    private static boolean finite(DMatrixRMaj m) {
        for (int i = 0; i < m.getNumElements(); i++) {
            if (!Double.isFinite(m.get(i))) {
                return false;
            }
        }
        return true;
    }
}
