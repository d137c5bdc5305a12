package org.scaledl.doe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class BudgetedDesignProperties {

    private static double[] costs(Random r, int n) {
        double[] c = new double[n];
        for (int i = 0; i < n; i++) {
            c[i] = 0.5 + 4 * r.nextDouble();
        }
        return c;
    }

    @Property(tries = 60)
    void staysWithinBudgetAndNothingMoreFits(@ForAll long seed, @ForAll @IntRange(min = 2, max = 5) int p,
            @ForAll @IntRange(min = 1, max = 30) int budgetTenths) {
        Random r = new Random(seed);
        double[][] x = FedorovExchangeProperties.random(r, 25, p);
        double[] c = costs(r, x.length);
        // at least the cheapest candidate (a budget below it is refused, tested elsewhere)
        double budget = Math.max(0.5 + budgetTenths, java.util.Arrays.stream(c).min().orElseThrow());
        BudgetedDesign bd = new BudgetedDesign(x, c, budget);
        Design d = bd.design();
        double spent = bd.cost(d.chosen());
        assertTrue(spent <= budget + 1e-9, spent + " > " + budget);
        assertEquals(d.chosen().size(), d.chosen().stream().distinct().count());
        for (int j = 0; j < x.length; j++) {
            if (!d.chosen().contains(j)) {
                assertTrue(spent + c[j] > budget, "candidate " + j + " still fits the remaining budget");
            }
        }
        assertEquals(new FedorovExchange(x, d.chosen().size()).logDet(d.chosen().stream().mapToInt(i -> i)
                .toArray()), d.logDet(), 1e-6 * Math.max(1, Math.abs(d.logDet())));
    }

    /** Slow reference: every subset within the budget, enumerated. */
    private static double exhaustive(double[][] x, double[] c, double budget, double ridge) {
        int n = x.length;
        double best = Double.NEGATIVE_INFINITY;
        for (int mask = 1; mask < 1 << n; mask++) {
            double spent = 0;
            List<Integer> rows = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if ((mask >> i & 1) == 1) {
                    spent += c[i];
                    rows.add(i);
                }
            }
            if (spent <= budget) {
                best = Math.max(best, new FedorovExchange(x, rows.size()).ridge(ridge)
                        .logDet(rows.stream().mapToInt(i -> i).toArray()));
            }
        }
        return best;
    }

    /** A small budgeted problem: 11 candidates in p columns, costs 0.5–4.5, a budget of 6–10 (2–8 runs). */
    private static double[][] smallProblem(Random r, int p) {
        return FedorovExchangeProperties.random(r, 11, p);
    }

    @Property(tries = 60)
    void closeToTheExhaustiveOptimum(@ForAll long seed, @ForAll @IntRange(min = 2, max = 3) int p) {
        Random r = new Random(seed);
        double[][] x = smallProblem(r, p);
        double[] c = costs(r, x.length);
        double budget = 6 + 4 * r.nextDouble();
        double optimum = exhaustive(x, c, budget, 1e-6);
        Design d = new BudgetedDesign(x, c, budget).ridge(1e-6).design();
        // With at most 16 candidates every subset within the budget is tried: the optimum. (The heuristic, which
        // larger problems take, missed this one: with the default starts, the seed -1568862 at p 3 stopped at a log
        // det of 2.32 where the optimum is 3.69; with 3 starts and none at the greedy size, before 0.1.0, 12 of
        // 3,000 problems missed by more than 0.3.)
        assertTrue(d.logDet() >= optimum - 0.5, d.logDet() + " vs optimum " + optimum);
    }

    /** The problem jqwik found the heuristic to miss, solved exactly (11 candidates: every subset tried). */
    @Test
    void aSmallProblemIsSolvedExactly() {
        Random r = new Random(-1568862L);
        double[][] x = smallProblem(r, 3);
        double[] c = costs(r, x.length);
        double budget = 6 + 4 * r.nextDouble();
        assertEquals(exhaustive(x, c, budget, 1e-6), new BudgetedDesign(x, c, budget).ridge(1e-6).design().logDet(),
                1e-9);
        assertTrue(new BudgetedDesign(x, c, budget).ridge(1e-6).starts(30).design().logDet()
                < exhaustive(x, c, budget, 1e-6) - 1, "the heuristic misses it, or this case tests nothing");
    }

    @Test
    void findsTheOptimumWhereTheGreedySizeHasALocalOptimum() {
        // A problem of the kind that failed: the greedy start and the exchange stop at rows {0, 3, 5} (log det 1.76);
        // the best three rows within the budget are {2, 3, 4} (3.79), reached only from other starts of size 3.
        Random r = new Random(208L * 7919 + 3);
        double[][] x = smallProblem(r, 3);
        double[] c = costs(r, x.length);
        double budget = 6 + 4 * r.nextDouble();
        Design d = new BudgetedDesign(x, c, budget).ridge(1e-6).design();
        assertEquals(exhaustive(x, c, budget, 1e-6), d.logDet(), 1e-9);
        assertTrue(new BudgetedDesign(x, c, budget).ridge(1e-6).starts(0).design().logDet() < d.logDet() - 1,
                "the greedy start alone must be the worse design here, or this case tests nothing");
    }

    @Property(tries = 30)
    void noFeasibleSwapOrAdditionImprovesTheResult(@ForAll long seed, @ForAll @IntRange(min = 2, max = 5) int p,
            @ForAll @IntRange(min = 3, max = 20) int budget) {
        Random r = new Random(seed);
        double[][] x = FedorovExchangeProperties.random(r, 30, p);
        double[] c = costs(r, x.length);
        BudgetedDesign bd = new BudgetedDesign(x, c, budget);
        Design d = bd.design();
        List<Integer> chosen = d.chosen();
        // Also with fewer runs than columns, where the ridge dominates log det and the rank-one scores alone
        // stopped short (by 0.94 in log det in a case found here).
        double spent = bd.cost(chosen);
        // Slow reference: every single addition, and every single exchange re-scored by Cholesky.
        for (int j = 0; j < x.length; j++) {
            if (!chosen.contains(j)) {
                assertTrue(spent + c[j] > budget, "candidate " + j + " still fits the budget");
            }
        }
        FedorovExchangeProperties.assertNoExchangeImproves(new FedorovExchange(x, chosen.size()), x.length, chosen,
                d.logDet(), 1e-8, (out, in) -> spent - c[out] + c[in] <= budget);
    }

    @Property(tries = 30)
    void beatsRandomSubsetsOfTheSameBudget(@ForAll long seed) {
        Random r = new Random(seed);
        double[][] x = FedorovExchangeProperties.random(r, 60, 4);
        double[] c = costs(r, x.length);
        double budget = 20;
        Design d = new BudgetedDesign(x, c, budget).design();
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < x.length; i++) {
            order.add(i);
        }
        Collections.shuffle(order, r);
        List<Integer> rnd = new ArrayList<>();
        double spent = 0;
        for (int i : order) {
            if (spent + c[i] <= budget) {
                rnd.add(i);
                spent += c[i];
            }
        }
        double randomLogDet = new FedorovExchange(x, rnd.size()).logDet(rnd.stream().mapToInt(i -> i).toArray());
        assertTrue(d.logDet() >= randomLogDet - 1e-9, d.logDet() + " < random " + randomLogDet);
    }

    @Property(tries = 20)
    void fixedRowsCountAndAreDeterministic(@ForAll long seed) {
        Random r = new Random(seed);
        double[][] x = FedorovExchangeProperties.random(r, 30, 3);
        double[][] measured = FedorovExchangeProperties.random(r, 4, 3);
        double[] c = costs(r, x.length);
        Design a = new BudgetedDesign(x, c, 8).fixed(measured).design();
        Design b = new BudgetedDesign(x, c, 8).fixed(measured).design();
        assertEquals(a.chosen(), b.chosen());
        Design without = new BudgetedDesign(x, c, 8).design();
        assertTrue(a.logDet() > without.logDet() - 1e-9, "measured rows must add information");
    }

    @Test
    void refusesBudgetsBelowTheCheapestAndBadCosts() {
        double[][] x = {{1, 0}, {0, 1}};
        assertThrows(IllegalArgumentException.class, () -> new BudgetedDesign(x, new double[] {2, 3}, 1));
        assertThrows(IllegalArgumentException.class, () -> new BudgetedDesign(x, new double[] {1}, 5));
        assertThrows(IllegalArgumentException.class, () -> new BudgetedDesign(x, new double[] {1, Double.NaN}, 5));
        assertThrows(IllegalArgumentException.class, () -> new BudgetedDesign(x, new double[] {1, -1}, 5));
        // a budget that is no number is said as such (it was "below the cheapest candidate's cost")
        IllegalArgumentException nan = assertThrows(IllegalArgumentException.class,
                () -> new BudgetedDesign(x, new double[] {1, 2}, Double.NaN));
        assertEquals("budget must be a number, got NaN", nan.getMessage());
    }

    @Test
    void cheapRowsWinWhenTheyCarryTheSameInformation() {
        // Two copies of each direction; one of each pair costs ten times more. A budget of 4 buys the cheap pair only.
        double[][] x = {{1, 0}, {0, 1}, {1, 0}, {0, 1}};
        double[] c = {10, 10, 1, 1};
        Design d = new BudgetedDesign(x, c, 4).design();
        assertEquals(List.of(2, 3), d.chosen());
    }
}
