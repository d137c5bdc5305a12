package org.scaledl.doe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.BiPredicate;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class FedorovExchangeProperties {

    static double[][] random(Random r, int rows, int p) {
        double[][] x = new double[rows][p];
        for (double[] row : x) {
            for (int j = 0; j < p; j++) {
                row[j] = r.nextGaussian();
            }
        }
        return x;
    }

    /** Best log det over all subsets of size n, by enumeration. */
    static double exhaustive(FedorovExchange fe, int total, int n) {
        double best = Double.NEGATIVE_INFINITY;
        int[] idx = new int[n];
        for (int i = 0; i < n; i++) {
            idx[i] = i;
        }
        while (true) {
            best = Math.max(best, fe.logDet(idx));
            int i = n - 1;
            while (i >= 0 && idx[i] == total - n + i) {
                i--;
            }
            if (i < 0) {
                return best;
            }
            idx[i]++;
            for (int j = i + 1; j < n; j++) {
                idx[j] = idx[j - 1] + 1;
            }
        }
    }

    @Property(tries = 60)
    void logDetNeverDecreasesAndMatchesRecomputation(@ForAll long seed, @ForAll @IntRange(min = 2, max = 5) int p,
            @ForAll @IntRange(min = 0, max = 6) int extra) {
        Random r = new Random(seed);
        int n = p + extra;
        double[][] x = random(r, n + 10, p);
        FedorovExchange fe = new FedorovExchange(x, n).seed(seed).starts(2);
        Design d = fe.design();
        List<Double> trace = d.logDetTrace();
        for (int i = 1; i < trace.size(); i++) {
            assertTrue(trace.get(i) >= trace.get(i - 1) - 1e-12, "log det decreased at exchange " + i);
        }
        int[] chosen = d.chosen().stream().mapToInt(Integer::intValue).toArray();
        assertEquals(fe.logDet(chosen), d.logDet(), 1e-9 * Math.max(1, Math.abs(d.logDet())));
        assertEquals(n, chosen.length);
        assertEquals(n, d.chosen().stream().distinct().count());
    }

    /**
     * The result is a local optimum of the exchange: no single exchange raises log det (slow reference: each one
     * re-scored by Cholesky). Also with fewer runs than columns, where the ridge dominates and the rank-one scores
     * alone stopped short (N = 300, p = 40, 15 runs: in 10 of 10 seeds, by 0.26 in log det on average).
     */
    @Property(tries = 25)
    void noSingleExchangeImprovesTheResult(@ForAll long seed, @ForAll @IntRange(min = 3, max = 12) int p,
            @ForAll @IntRange(min = 2, max = 16) int n, @ForAll @IntRange(min = 0, max = 3) int measured) {
        Random r = new Random(seed);
        double[][] x = random(r, 60, p);
        FedorovExchange fe = new FedorovExchange(x, n).fixed(random(r, measured, p)).ridge(1e-6).starts(2)
                .seed(seed);
        Design d = fe.design();
        double logDet = fe.logDet(d.chosen().stream().mapToInt(Integer::intValue).toArray());
        assertNoExchangeImproves(fe, x.length, d.chosen(), logDet, 1e-7 * Math.max(1, Math.abs(logDet)),
                (out, in) -> true);
    }

    /**
     * Slow reference for local optimality: every exchange of a chosen row for a candidate outside the design that
     * {@code allowed(row, candidate)} permits is re-scored by {@code scorer}'s Cholesky log det and must not exceed
     * {@code logDet + tolerance}.
     */
    static void assertNoExchangeImproves(FedorovExchange scorer, int candidates, List<Integer> chosen, double logDet,
            double tolerance, BiPredicate<Integer, Integer> allowed) {
        int[] rows = chosen.stream().mapToInt(Integer::intValue).toArray();
        for (int j = 0; j < candidates; j++) {
            if (chosen.contains(j)) {
                continue;
            }
            for (int i = 0; i < rows.length; i++) {
                int kept = rows[i];
                if (!allowed.test(kept, j)) {
                    continue;
                }
                rows[i] = j;
                double swapped = scorer.logDet(rows);
                rows[i] = kept;
                assertTrue(swapped <= logDet + tolerance, "exchanging row " + kept + " for " + j
                        + " raises log det from " + logDet + " to " + swapped);
            }
        }
    }

    @Test
    void smallInstancesReachTheExhaustiveOptimumInMostSeeds() {
        int optimal = 0;
        int trials = 40;
        for (int s = 0; s < trials; s++) {
            Random r = new Random(1000 + s);
            int total = 8 + r.nextInt(5);
            int p = 2 + r.nextInt(2);
            int n = p + r.nextInt(6 - p);
            double[][] x = random(r, total, p);
            FedorovExchange fe = new FedorovExchange(x, n).seed(s).starts(5);
            Design d = fe.design();
            double best = exhaustive(fe, total, n);
            assertTrue(d.logDet() <= best + 1e-9);
            if (d.logDet() >= best - 1e-9 * Math.max(1, Math.abs(best))) {
                optimal++;
            }
        }
        assertTrue(optimal >= trials * 3 / 4, "optimum reached in only " + optimal + " of " + trials);
    }

    @Property(tries = 40)
    void invariantToRowOrder(@ForAll long seed) {
        Random r = new Random(seed);
        double[][] x = random(r, 14, 3);
        List<Integer> perm = new ArrayList<>();
        for (int i = 0; i < x.length; i++) {
            perm.add(i);
        }
        Collections.shuffle(perm, r);
        double[][] y = new double[x.length][];
        int[] where = new int[x.length];
        for (int i = 0; i < x.length; i++) {
            y[i] = x[perm.get(i)];
            where[perm.get(i)] = i;
        }
        int[] start = {0, 5, 9, 12};
        int[] mapped = new int[start.length];
        for (int i = 0; i < start.length; i++) {
            mapped[i] = where[start[i]];
        }
        // From the same starting runs, listed in another order, the exchange reaches the same runs.
        Design a = new FedorovExchange(x, 4).exchange(start);
        Design b = new FedorovExchange(y, 4).exchange(mapped);
        assertEquals(a.logDet(), b.logDet(), 1e-9);
        List<Integer> back = new ArrayList<>();
        for (int i : b.chosen()) {
            back.add(perm.get(i));
        }
        Collections.sort(back);
        assertEquals(a.chosen(), back);
    }

    @Test
    void fixedRowsCountAndDEfficiencyIsSane() {
        Random r = new Random(3);
        double[][] x = random(r, 50, 4);
        Design all = new FedorovExchange(x, 50).design();
        assertEquals(1.0, all.dEfficiency(), 1e-9);
        Design d = new FedorovExchange(x, 8).design();
        assertTrue(d.dEfficiency() > 1.0, "a D-optimal subset is more informative per run than the average");
        Design withFixed = new FedorovExchange(x, 8).fixed(random(r, 3, 4)).design();
        assertTrue(withFixed.logDet() > d.logDet());
        assertThrows(IllegalArgumentException.class, () -> new FedorovExchange(x, 0));
        assertThrows(IllegalArgumentException.class, () -> new FedorovExchange(new double[][] {{1, Double.NaN}}, 1));
    }

    @Test
    void sequentialAugmentationPicksTheLargestVariance() {
        double[][] x = {{1, 0}, {0, 1}, {1, 1}, {0, 0.1}};
        double[][] measured = {{1, 0}, {1, 0.05}};
        List<Integer> next = SequentialDesign.next(x, measured, 2);
        assertEquals(1, next.get(0));
        assertEquals(2, next.size());
        assertTrue(!next.get(1).equals(next.get(0)));
    }

    @Property(tries = 40)
    void budgetIsNeverExceeded(@ForAll long seed) {
        Random r = new Random(seed);
        double[][] x = random(r, 30, 3);
        double[] costs = new double[30];
        for (int i = 0; i < 30; i++) {
            costs[i] = 1 + r.nextInt(10);
        }
        double cheapest = java.util.Arrays.stream(costs).sorted().limit(5).sum();
        if (cheapest > 20) {
            // no 5 runs fit the budget (a draw of few cheap candidates): refused, not exceeded
            assertThrows(IllegalArgumentException.class, () -> new FedorovExchange(x, 5).costs(costs, 20));
            return;
        }
        Design d = new FedorovExchange(x, 5).costs(costs, 20).seed(seed).design();
        double spent = d.chosen().stream().mapToDouble(i -> costs[i]).sum();
        assertTrue(spent <= 20, "spent " + spent);
        assertEquals(5, d.chosen().size());
        assertThrows(IllegalArgumentException.class, () -> new FedorovExchange(x, 5).costs(costs, 4.9));
    }
}
