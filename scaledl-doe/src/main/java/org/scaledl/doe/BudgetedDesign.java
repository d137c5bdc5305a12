package org.scaledl.doe;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;

/**
 * D-optimal design under a cost budget, with the number of runs free: chooses distinct candidate rows whose total cost
 * is at most the budget and whose {@code log det(XₙᵀXₙ + FᵀF + ridge·I)} is as large as it can find. Profiling is paid
 * in seconds, not runs: a plan of many cheap runs can carry more information than a few expensive ones.
 *
 * <pre>{@code
 * Design d = new BudgetedDesign(x, secondsPerCandidate, 600).fixed(measured).design();
 * }</pre>
 *
 * <p>Two steps, repeated until the design stops growing. First a greedy fill: while some candidate fits the remaining
 * budget, add the one of largest {@code log(1 + d(x)) / cost}, the log det gained per unit of cost
 * ({@code d(x) = xᵀM⁻¹x}, updated by Sherman–Morrison). Then Fedorov's exchange ({@link FedorovExchange}) at that
 * number of runs, restricted to exchanges that keep the design within the budget, improves it further; an exchange that
 * frees budget lets the next fill add runs. Random starts at the greedy design's size and its neighbours guard against
 * a greedy start that commits to the wrong rows or the wrong number of runs. The greedy ratio rule is the classical heuristic for budgeted
 * (knapsack-constrained) D-optimality; the exchange removes most of its myopia. The result depends only on the inputs and the seed.
 */
public final class BudgetedDesign {
    private static final double MIN_COST = 1e-12;
    private final double[][] x;
    private final double[] costs;
    private final double budget;
    private double[][] fixed = new double[0][];
    private double ridge = 1e-8;
    /** Random starts per design size; -1 = {@link #defaultStarts(int)}. */
    private int starts = -1;
    /** Work (candidates × runs × columns) the default starts may spend per design size and pass (≈ 5 ms). */
    private static final double START_WORK = 2e6;
    private static final int MIN_STARTS = 3;
    private static final int MAX_STARTS = 30;
    private long seed = 1;
    private static final int SIZE_SPREAD = 3;

    /**
     * Configures a search.
     *
     * @param candidates N × p candidate rows (not modified)
     * @param costs      cost of each candidate (finite, ≥ 0), e.g. the seconds its measurement takes
     * @param budget     the most the chosen rows may cost in total
     * @throws IllegalArgumentException if the lengths differ, a value is not finite, or no candidate fits the budget
     */
    public BudgetedDesign(double[][] candidates, double[] costs, double budget) {
        if (candidates.length == 0) {
            throw new IllegalArgumentException("no candidates");
        }
        if (costs.length != candidates.length) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "%d costs for %d candidates", costs.length,
                    candidates.length));
        }
        double[][] rows = Rows.checkedCopy(candidates, "row", -1);
        double cheapest = Double.POSITIVE_INFINITY;
        for (int i = 0; i < candidates.length; i++) {
            if (!(costs[i] >= 0 && Double.isFinite(costs[i]))) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "cost of row %d must be finite and >= 0:"
                        + " %s", i, costs[i]));
            }
            cheapest = Math.min(cheapest, costs[i]);
        }
        if (Double.isNaN(budget)) {
            // (NaN is below nothing: said as what it is)
            throw new IllegalArgumentException("budget must be a number, got NaN");
        }
        if (!(budget >= cheapest)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "budget %s is below the cheapest candidate's "
                    + "cost %s", fourDigits(budget), fourDigits(cheapest)));
        }
        this.x = rows;
        this.costs = costs.clone();
        this.budget = budget;
    }

    /** Rows already measured: they count in the information matrix but are not chosen and cost nothing. */
    public BudgetedDesign fixed(double[][] rows) {
        this.fixed = Rows.checkedCopy(rows, "fixed row", x[0].length);
        return this;
    }

    /** Ridge added to the information matrix (≥ 0; default 1e-8), which makes small designs Bayesian D-optimal. */
    public BudgetedDesign ridge(double value) {
        this.ridge = Rows.ridge(value);
        return this;
    }

    /** The total cost of the given rows. */
    public double cost(List<Integer> rows) {
        double s = 0;
        for (int r : rows) {
            if (r < 0 || r >= costs.length) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "row %d is not a candidate (0..%d)", r,
                        costs.length - 1));
            }
            s += costs[r];
        }
        return s;
    }

    /**
     * Random starts of the exchange at each design size tried (0 = greedy start only). The default adapts to the
     * problem: 3 for large candidate sets, up to 30 where an exchange is cheap, since small budgeted problems have the
     * most local optima (the cost budget cuts the exchange neighbourhood).
     */
    public BudgetedDesign starts(int value) {
        if (!(value >= 0)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "starts must be >= 0: %s", value));
        }
        this.starts = value;
        return this;
    }

    /** Seed of the random starts. */
    public BudgetedDesign seed(long value) {
        this.seed = value;
        return this;
    }

    /**
     * Runs the search: with at most {@value #MAX_EXACT_CANDIDATES} candidates and the default starts, every subset
     * within the budget (the optimum); else the greedy start first, then random starts at design sizes around the
     * greedy one ({@link #starts(int)} each), each exchanged and filled; the best log det wins.
     */
    public Design design() {
        if (starts < 0 && x.length <= MAX_EXACT_CANDIDATES) {
            // few enough candidates to try every subset within the budget: the optimum, not a local one (the cost
            // budget cuts the exchange's neighbourhood, and of 11 candidates a greedy size of 4 and its exchanges
            // missed the best 3 by a log det of 1.4)
            return improve(exact(), true);
        }
        Design best = improve(new ArrayList<>(), false);
        int perSize = starts >= 0 ? starts : defaultStarts(best.chosen().size());
        if (perSize == 0) {
            return improve(new ArrayList<>(best.chosen()), true);
        }
        double[] sorted = costs.clone();
        Arrays.sort(sorted);
        int size = best.chosen().size();
        for (int n = Math.max(1, size - SIZE_SPREAD); n <= Math.min(x.length, size + SIZE_SPREAD); n++) {
            double cheapest = 0;
            for (int i = 0; i < n; i++) {
                cheapest += sorted[i];
            }
            if (cheapest > budget) {
                continue;
            }
            Design d = new FedorovExchange(x, n).fixed(fixed).ridge(ridge).costs(costs, budget).starts(perSize)
                    .seed(seed + n).design(false);
            d = improve(new ArrayList<>(d.chosen()), false);
            if (d.logDet() > best.logDet() + 1e-12) {
                best = d;
            }
        }
        // The winner only ends with the exchange's stable passes (see FedorovExchange), which cost more.
        return improve(new ArrayList<>(best.chosen()), true);
    }

    /** The most candidates whose every subset within the budget is tried ({@link #design()}): 2^16 subsets. */
    static final int MAX_EXACT_CANDIDATES = 16;

    /**
     * The subset of the candidates within the budget of the largest log det, every subset tried (ties: the first
     * in the order of their bit masks, so deterministic); the empty list where no candidate fits.
     */
    private List<Integer> exact() {
        int n = x.length;
        // one scorer of every subset (its log det does not depend on the runs it was made for)
        FedorovExchange scorer = new FedorovExchange(x, 1).fixed(fixed).ridge(ridge);
        double bestLogDet = Double.NEGATIVE_INFINITY;
        int bestMask = 0;
        for (int mask = 1; mask < 1 << n; mask++) {
            double spent = 0;
            int size = Integer.bitCount(mask);
            int[] rows = new int[size];
            int k = 0;
            for (int i = 0; i < n && spent <= budget; i++) {
                if ((mask >> i & 1) == 1) {
                    spent += costs[i];
                    rows[k++] = i;
                }
            }
            if (spent > budget) {
                continue;
            }
            double ld = scorer.logDet(rows);
            if (ld > bestLogDet + 1e-12) {
                bestLogDet = ld;
                bestMask = mask;
            }
        }
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if ((bestMask >> i & 1) == 1) {
                out.add(i);
            }
        }
        return out;
    }

    private int defaultStarts(int size) {
        double work = (double) x.length * Math.max(1, size) * x[0].length;
        return (int) Math.max(MIN_STARTS, Math.min(MAX_STARTS, START_WORK / work));
    }

    /** Fill and exchange from {@code chosen} until the design stops growing ({@code polish}: stable passes too). */
    private Design improve(List<Integer> chosen, boolean polish) {
        boolean[] taken = new boolean[x.length];
        for (int r : chosen) {
            taken[r] = true;
        }
        Design last = null;
        for (int round = 0; round < 20; round++) {
            int before = chosen.size();
            fill(chosen, taken);
            if (last != null && chosen.size() == before) {
                return last;
            }
            int[] start = chosen.stream().mapToInt(Integer::intValue).toArray();
            FedorovExchange fe = new FedorovExchange(x, start.length).fixed(fixed).ridge(ridge).costs(costs, budget);
            last = fe.exchange(start, polish);
            Arrays.fill(taken, false);
            chosen.clear();
            for (int r : last.chosen()) {
                taken[r] = true;
                chosen.add(r);
            }
        }
        return last;
    }

    /** Greedy fill by log det gain per cost until nothing more fits. */
    private void fill(List<Integer> chosen, boolean[] taken) {
        int p = x[0].length;
        DMatrixRMaj m = new DMatrixRMaj(p, p);
        for (double[] f : fixed) {
            FedorovExchange.addOuter(m, f, 1);
        }
        for (int r : chosen) {
            FedorovExchange.addOuter(m, x[r], 1);
        }
        for (int j = 0; j < p; j++) {
            m.add(j, j, ridge);
        }
        DMatrixRMaj inv = new DMatrixRMaj(p, p);
        if (!CommonOps_DDRM.invert(m, inv)) {
            throw new IllegalStateException("information matrix is singular; increase the ridge");
        }
        double[] d = new double[x.length];
        double[] u = new double[p];
        for (int j = 0; j < x.length; j++) {
            FedorovExchange.mult(inv, x[j], u);
            d[j] = FedorovExchange.dot(x[j], u);
        }
        double spent = cost(chosen);
        while (true) {
            int best = -1;
            double bestRatio = 0;
            for (int j = 0; j < x.length; j++) {
                if (taken[j] || spent + costs[j] > budget) {
                    continue;
                }
                double ratio = Math.log1p(Math.max(d[j], 0)) / Math.max(costs[j], MIN_COST);
                if (best < 0 || ratio > bestRatio) {
                    best = j;
                    bestRatio = ratio;
                }
            }
            if (best < 0) {
                return;
            }
            taken[best] = true;
            chosen.add(best);
            spent += costs[best];
            FedorovExchange.mult(inv, x[best], u);
            double denom = 1 + FedorovExchange.dot(x[best], u);
            for (int a = 0; a < p; a++) {
                for (int b = 0; b < p; b++) {
                    inv.add(a, b, -u[a] * u[b] / denom);
                }
            }
            for (int j = 0; j < x.length; j++) {
                double xu = FedorovExchange.dot(x[j], u);
                d[j] -= xu * xu / denom;
            }
        }
    }

    /** A figure of a message to four significant digits, in plain notation where that is short. */
    private static String fourDigits(double x) {
        return Double.isFinite(x) ? new java.math.BigDecimal(x).round(new java.math.MathContext(4))
                .stripTrailingZeros().toString() : String.valueOf(x);
    }
}
