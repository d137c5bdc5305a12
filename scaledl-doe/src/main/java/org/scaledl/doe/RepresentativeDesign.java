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
 * design's ridge), so two designs can be compared; {@code exchanges} counts the swaps, and {@code logDetTrace} holds
 * the one log det (the swaps lower a distance, not a determinant). Of more than {@value #MAX_SEARCHED} candidates,
 * the medoids are searched among (and the distance summed over) {@value #MAX_SEARCHED} evenly spaced ones: the
 * distances of every pair are held (2,000 rows: 32 MB), and a table of layouts may hold tens of thousands.
 *
 * <pre>{@code
 * Design d = new RepresentativeDesign(rows, 3).fixed(measured).design();
 * }</pre>
 */
public final class RepresentativeDesign {
    /** The most candidates whose pairs' distances are held (beyond, evenly spaced ones stand for the rest). */
    public static final int MAX_SEARCHED = 2000;

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
        // computed row by row: no matrix of every pair (a table may hold tens of thousands)
        double sum = 0;
        for (double[] a : x) {
            double nearest = Double.POSITIVE_INFINITY;
            for (int c : chosen) {
                nearest = Math.min(nearest, euclid(a, x[c]));
            }
            for (double[] f : fixed) {
                nearest = Math.min(nearest, euclid(a, f));
            }
            sum += nearest;
        }
        return sum;
    }

    private static double euclid(double[] a, double[] b) {
        double s = 0;
        for (int k = 0; k < b.length; k++) {
            s += (a[k] - b[k]) * (a[k] - b[k]);
        }
        return Math.sqrt(s);
    }

    /** The candidates searched: every one, or {@link #MAX_SEARCHED} evenly spaced (the first and last among them). */
    private int[] searched() {
        int m = Math.min(x.length, Math.max(n, MAX_SEARCHED));
        int[] out = new int[m];
        for (int k = 0; k < m; k++) {
            out[k] = m == x.length ? k : (int) Math.round((double) k * (x.length - 1) / (m - 1));
        }
        return out;
    }

    /** Chooses. */
    public Design design() {
        int[] searched = searched();
        double[][] d = distances(searched);
        List<Integer> chosen = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int best = -1;
            double bestTotal = Double.POSITIVE_INFINITY;
            for (int c = 0; c < searched.length; c++) {
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
                for (int c = 0; c < searched.length && !improved; c++) {
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
        int[] rows = chosen.stream().mapToInt(k -> searched[k]).sorted().toArray();
        FedorovExchange report = new FedorovExchange(x, n).fixed(fixed).ridge(ridge);
        double logDet = report.logDet(rows);
        return new Design(Arrays.stream(rows).boxed().toList(), logDet, report.dEfficiency(rows), swaps,
                List.of(logDet));
    }

    /**
     * Distances between the candidates {@code rows} (their positions in it, both ways), and from each of them to the
     * fixed rows (columns after theirs).
     */
    private double[][] distances(int[] rows) {
        int m = rows.length;
        double[][] d = new double[m][m + fixed.length];
        for (int i = 0; i < m; i++) {
            double[] a = x[rows[i]];
            for (int j = 0; j < m + fixed.length; j++) {
                d[i][j] = euclid(a, j < m ? x[rows[j]] : fixed[j - m]);
            }
        }
        return d;
    }

    /** The rows' total distance to their nearest chosen (positions among the rows) or fixed row. */
    private double total(double[][] d, List<Integer> chosen) {
        int m = d.length;
        double sum = 0;
        for (int i = 0; i < m; i++) {
            double nearest = Double.POSITIVE_INFINITY;
            for (int c : chosen) {
                nearest = Math.min(nearest, d[i][c]);
            }
            for (int f = m; f < d[i].length; f++) {
                nearest = Math.min(nearest, d[i][f]);
            }
            sum += nearest;
        }
        return sum;
    }
}
