package org.scaledl.doe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The representative design (k-medoids) chooses distinct rows, deterministically; one run is the exact medoid (the
 * slow reference: every candidate's total distance); no single swap of a chosen row for another lowers its distance;
 * a fixed row represents the candidates near it; its reported log det is the Fedorov exchange's of its rows.
 */
class RepresentativeDesignProperties {

    private static int[] rows(Design d) {
        return d.chosen().stream().mapToInt(Integer::intValue).toArray();
    }

    @Property(tries = 60)
    void distinctDeterministicAndNoSwapLowersItsDistance(@ForAll long seed, @ForAll @IntRange(min = 1, max = 5) int p,
            @ForAll @IntRange(min = 1, max = 6) int runs) {
        double[][] x = FedorovExchangeProperties.random(new Random(seed), 18, p);
        RepresentativeDesign rd = new RepresentativeDesign(x, runs);
        Design d = rd.design();
        assertEquals(runs, d.chosen().size());
        assertEquals(runs, d.chosen().stream().distinct().count());
        assertEquals(d.chosen().stream().sorted().toList(), d.chosen());
        assertEquals(d, new RepresentativeDesign(x, runs).design(), "deterministic");
        double at = rd.distance(rows(d));
        for (int k = 0; k < runs; k++) {
            for (int c = 0; c < x.length; c++) {
                if (d.chosen().contains(c)) {
                    continue;
                }
                int[] swapped = rows(d);
                swapped[k] = c;
                assertTrue(rd.distance(swapped) >= at - 1e-9 * (1 + at), "swapping row " + d.chosen().get(k)
                        + " for " + c + " lowers the distance");
            }
        }
        assertEquals(new FedorovExchange(x, runs).logDet(rows(d)), d.logDet(), 1e-9 * Math.max(1,
                Math.abs(d.logDet())));
    }

    @Property(tries = 60)
    void oneRunIsTheMedoid(@ForAll long seed, @ForAll @IntRange(min = 1, max = 5) int p) {
        double[][] x = FedorovExchangeProperties.random(new Random(seed), 15, p);
        RepresentativeDesign rd = new RepresentativeDesign(x, 1);
        // slow reference: every candidate's total distance to the others, the least first (ties: the lower index)
        int medoid = 0;
        double best = Double.POSITIVE_INFINITY;
        for (int c = 0; c < x.length; c++) {
            double total = 0;
            for (double[] other : x) {
                double s = 0;
                for (int j = 0; j < p; j++) {
                    s += (x[c][j] - other[j]) * (x[c][j] - other[j]);
                }
                total += Math.sqrt(s);
            }
            if (total < best) {
                best = total;
                medoid = c;
            }
        }
        assertEquals(List.of(medoid), rd.design().chosen());
        assertEquals(best, rd.distance(new int[] {medoid}), 1e-9 * (1 + best));
    }

    @Test
    void aFixedRowRepresentsTheCandidatesNearIt() {
        // two clusters: three rows near the origin, two near (10, 10); the medoid is one of the three
        double[][] x = {{0, 0}, {0.1, 0}, {0, 0.1}, {10, 10}, {10.1, 10}};
        Design alone = new RepresentativeDesign(x, 1).design();
        assertTrue(alone.chosen().get(0) < 3, alone.toString());
        // a run near the origin measured already: the one run to add is in the other cluster
        Design given = new RepresentativeDesign(x, 1).fixed(new double[][] {{0.05, 0.05}}).design();
        assertTrue(given.chosen().get(0) >= 3, given.toString());
        assertNotEquals(alone.chosen(), given.chosen());
        assertEquals(List.of(0, 1, 2, 3, 4), new RepresentativeDesign(x, 5).design().chosen());
    }

    /** Of more candidates than it searches, evenly spaced ones: distinct, within range, the design computed. */
    @Test
    void aLargeTableIsSearchedAmongEvenlySpacedCandidates() {
        double[][] x = FedorovExchangeProperties.random(new Random(5), RepresentativeDesign.MAX_SEARCHED * 3 + 7, 3);
        RepresentativeDesign rd = new RepresentativeDesign(x, 2);
        Design d = rd.design();
        assertEquals(2, d.chosen().stream().distinct().count());
        assertTrue(d.chosen().stream().allMatch(i -> i >= 0 && i < x.length));
        // the medoids of the sample sit near the centre of the Gaussian cloud: nearer it than a typical row
        for (int i : d.chosen()) {
            double r = Math.sqrt(x[i][0] * x[i][0] + x[i][1] * x[i][1] + x[i][2] * x[i][2]);
            assertTrue(r < 1.6, "row " + i + " at radius " + r);
        }
        // and represent the whole table better than its two outermost rows do
        Integer[] byRadius = new Integer[x.length];
        java.util.Arrays.setAll(byRadius, i -> i);
        java.util.Arrays.sort(byRadius, java.util.Comparator.comparingDouble(i -> -(x[i][0] * x[i][0]
                + x[i][1] * x[i][1] + x[i][2] * x[i][2])));
        assertTrue(rd.distance(rows(d)) < rd.distance(new int[] {byRadius[0], byRadius[1]}));
    }

    @Test
    void misuseIsRefused() {
        double[][] x = {{1, 2}, {3, 4}};
        assertThrows(IllegalArgumentException.class, () -> new RepresentativeDesign(x, 3));
        assertThrows(IllegalArgumentException.class, () -> new RepresentativeDesign(x, 0));
        assertThrows(IllegalArgumentException.class, () -> new RepresentativeDesign(new double[0][], 1));
        assertThrows(IllegalArgumentException.class, () -> new RepresentativeDesign(x, 1).fixed(new double[][] {{1}}));
        assertThrows(IllegalArgumentException.class, () -> new RepresentativeDesign(x, 1).distance(new int[] {2}));
        assertThrows(IllegalArgumentException.class,
                () -> new RepresentativeDesign(new double[][] {{Double.NaN, 1}}, 1));
    }
}
