package org.scaledl.doe;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The rows that best represent a candidate set (k-medoids): the {@code n} candidates whose rows lie nearest the
 * others, the least total Euclidean distance from every candidate to its nearest chosen or fixed row. Where a model
 * measured on few rows estimates one quantity shared by all of them (a level), its best runs are not a D-optimal
 * design's extremes, whose rows carry what the other columns would estimate, but the rows most like the candidates it
 * will be applied to.
 *
 * <p>A greedy build (each step the row that lowers the distance most), then swaps of a chosen row for an unchosen one
 * while any lowers it; ties go to the lower index, so the design is deterministic. The returned design's
 * {@code logDet} and {@code dEfficiency} are those of its rows, as {@link FedorovExchange} reports them (with this
 * design's ridge), so two designs can be compared; {@code exchanges} counts the swaps.
 *
 * <pre>{@code
 * Design d = new RepresentativeDesign(rows, 3).fixed(measured).design();
 * }</pre>
 */
public final class RepresentativeDesign {
    private final double[][] x;
    private final int n;
    private double[][] fixed = new double[0][];
    private double ridge = 1e-8;

    /**
     * Configures a choice.
     *
     * @param candidates N × p candidate rows (copied; rows of one length, finite, of magnitude at most
     *                   {@link FedorovExchange#MAX_VALUE})
     * @param runs       rows to choose, 1 ≤ runs ≤ N
     */
    public RepresentativeDesign(double[][] candidates, int runs) {
        if (!(java.util.Objects.requireNonNull(candidates, "candidates").length > 0)) {
            throw new IllegalArgumentException("no candidates");
        }
        this.x = Rows.checkedCopy(candidates, "row", -1);
        if (!(runs >= 1 && runs <= candidates.length)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "runs must be in 1..%s, got %s",
                    candidates.length, runs));
        }
        this.n = runs;
    }

    /** Rows already measured: a candidate near one of them is represented already; they are not chosen. */
    public RepresentativeDesign fixed(double[][] rows) {
        this.fixed = Rows.checkedCopy(rows, "fixed row", x[0].length);
        return this;
    }

    /** Ridge of the reported information matrix (≥ 0; default 1e-8); the choice does not depend on it. */
    public RepresentativeDesign ridge(double value) {
        this.ridge = Rows.ridge(value);
        return this;
    }

    /** The candidates' total distance to their nearest chosen or fixed row. */
    public double distance(int[] chosen) {
        for (int c : java.util.Objects.requireNonNull(chosen, "chosen")) {
            if (c < 0 || c >= x.length) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "row %d is not a candidate (0..%d)", c,
                        x.length - 1));
            }
        }
        return total(distances(), Arrays.stream(chosen).boxed().toList());
    }

    /** Chooses. */
    public Design design() {
        double[][] d = distances();
        List<Integer> chosen = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int best = -1;
            double bestTotal = Double.POSITIVE_INFINITY;
            for (int c = 0; c < x.length; c++) {
                if (chosen.contains(c)) {
                    continue;
                }
                chosen.add(c);
                double t = total(d, chosen);
                chosen.remove(chosen.size() - 1);
                if (t < bestTotal) {
                    bestTotal = t;
                    best = c;
                }
            }
            chosen.add(best);
        }
        double current = total(d, chosen);
        int swaps = 0;
        boolean improved = true;
        while (improved) {
            improved = false;
            for (int k = 0; k < chosen.size() && !improved; k++) {
                for (int c = 0; c < x.length && !improved; c++) {
                    if (chosen.contains(c)) {
                        continue;
                    }
                    int old = chosen.set(k, c);
                    double t = total(d, chosen);
                    // (a relative tolerance: a swap that gains only rounding is no gain, and the loop ends)
                    if (t < current - 1e-12 * (1 + current)) {
                        current = t;
                        swaps++;
                        improved = true;
                    } else {
                        chosen.set(k, old);
                    }
                }
            }
        }
        int[] rows = chosen.stream().mapToInt(Integer::intValue).sorted().toArray();
        FedorovExchange report = new FedorovExchange(x, n).fixed(fixed).ridge(ridge);
        double logDet = report.logDet(rows);
        return new Design(Arrays.stream(rows).boxed().toList(), logDet, report.dEfficiency(rows), swaps,
                List.of(logDet));
    }

    /** Distances from each candidate (rows) to each candidate and fixed row (columns, fixed after candidates). */
    private double[][] distances() {
        double[][] d = new double[x.length][x.length + fixed.length];
        for (int i = 0; i < x.length; i++) {
            for (int j = 0; j < x.length + fixed.length; j++) {
                double[] b = j < x.length ? x[j] : fixed[j - x.length];
                double s = 0;
                for (int k = 0; k < b.length; k++) {
                    s += (x[i][k] - b[k]) * (x[i][k] - b[k]);
                }
                d[i][j] = Math.sqrt(s);
            }
        }
        return d;
    }

    private double total(double[][] d, List<Integer> chosen) {
        double sum = 0;
        for (int i = 0; i < x.length; i++) {
            double nearest = Double.POSITIVE_INFINITY;
            for (int c : chosen) {
                nearest = Math.min(nearest, d[i][c]);
            }
            for (int f = x.length; f < x.length + fixed.length; f++) {
                nearest = Math.min(nearest, d[i][f]);
            }
            sum += nearest;
        }
        return sum;
    }
}
