package org.scaledl.doe;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.CholeskyDecomposition_F64;
import org.ejml.interfaces.decomposition.EigenDecomposition_F64;
import org.ejml.interfaces.decomposition.QRDecomposition;

/**
 * D-optimal design by Fedorov's exchange algorithm: chooses {@code n} distinct rows of a candidate matrix
 * {@code X} (N × p) that maximise {@code log det(XₙᵀXₙ + F ᵀF + ridge·I)}, where {@code F} are rows already
 * measured ("fixed").
 *
 * <pre>{@code
 * Design d = FedorovExchange.choose(x, 20);                                       // one-liner
 * Design e = new FedorovExchange(x, 20).fixed(measured).starts(8).seed(7).design(); // configured
 * }</pre>
 *
 * <p>Exchanges are scored with the variance function {@code d(x) = xᵀM⁻¹x} and the gain
 * {@code Δ(i, j) = d(xⱼ) − d(xᵢ) − d(xᵢ)d(xⱼ) + d(xᵢ, xⱼ)²}, so that {@code det} grows by the factor {@code 1 + Δ}.
 * Each pass visits every design row {@code i}, scores it against all candidates and applies its best exchange at
 * once (the modified Fedorov exchange of Cook and Nachtsheim, 1980): two Sherman–Morrison updates of {@code M⁻¹},
 * an {@code O(N·p)} update of every candidate's {@code d(x)}, and the matrix determinant lemma for {@code log det}
 * — no refactorisation. A pass costs {@code O(n·N·p)}. The search stops when no exchange improves {@code log det} by more than
 * {@link #tolerance(double)}; it restarts from several random designs ({@link #starts(int)}) and keeps the best.
 * The ridge keeps {@code M} invertible for rank-deficient starts. Where the design is ill-conditioned (fewer rows than
 * columns, or a row whose removal collapses a direction), the rank-one scores cancel to a few digits, so the
 * winning start ends with passes scored from a fresh QR factorisation instead: the result is then a local optimum of
 * the exchange, no single exchange raising {@code log det}. The result depends only on the inputs and the
 * seed.
 */
public final class FedorovExchange {
    private final double[][] x;
    private final int n;
    private double[][] fixed = new double[0][];
    private int starts = 5;
    private long seed = 1;
    private double ridge = 1e-8;
    private double tolerance = 1e-10;
    private double[] costs;
    private double budget = Double.POSITIVE_INFINITY;
    private int maxPasses = Integer.MAX_VALUE;

    /**
     * The largest magnitude a row's value may have ({@value}): the information matrix sums products of two values,
     * which beyond about 1e154 overflow a double.
     */
    public static final double MAX_VALUE = Rows.MAX_ABS;

    /**
     * Configures a search.
     *
     * @param candidates N × p candidate rows (copied; rows of one length, finite, of magnitude at most
     *                   {@link #MAX_VALUE})
     * @param runs       rows to choose, 1 ≤ runs ≤ N
     */
    public FedorovExchange(double[][] candidates, int runs) {
        if (!(java.util.Objects.requireNonNull(candidates, "candidates").length > 0)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "no candidates"));
        }
        double[][] rows = Rows.checkedCopy(candidates, "row", -1);
        if (!(runs >= 1 && runs <= candidates.length)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "runs must be in 1..%s, got %s", candidates.length, runs));
        }
        this.x = rows;
        this.n = runs;
    }

    /** Chooses with the defaults (5 random starts, seed 1). */
    public static Design choose(double[][] candidates, int runs) {
        return new FedorovExchange(candidates, runs).design();
    }

    /** Rows already measured: they count in the information matrix but are not chosen. */
    public FedorovExchange fixed(double[][] rows) {
        this.fixed = Rows.checkedCopy(rows, "fixed row", x[0].length);
        return this;
    }

    /** Random starts (at least 1). */
    public FedorovExchange starts(int value) {
        if (!(value >= 1)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "starts must be >= 1: %s", value));
        }
        this.starts = value;
        return this;
    }

    /** Seed of the random starts. */
    public FedorovExchange seed(long value) {
        this.seed = value;
        return this;
    }

    /** Ridge added to the information matrix (≥ 0; default 1e-8). */
    public FedorovExchange ridge(double value) {
        this.ridge = Rows.ridge(value);
        return this;
    }

    /** Smallest log det gain worth an exchange (default 1e-10). */
    public FedorovExchange tolerance(double value) {
        if (!(value >= 0)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "tolerance must be >= 0: %s", value));
        }
        this.tolerance = value;
        return this;
    }

    /**
     * Per-candidate costs (e.g. profiling seconds) and a budget for the chosen rows' total cost: random starts are
     * drawn within the budget and exchanges that would exceed it are skipped.
     *
     * @throws IllegalArgumentException if the lengths differ, a cost is negative, or even the cheapest
     *         {@code runs} candidates exceed the budget
     */
    public FedorovExchange costs(double[] perCandidate, double totalBudget) {
        if (!(perCandidate.length == x.length)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "%s costs for %s candidates", perCandidate.length, x.length));
        }
        for (double c : perCandidate) {
            if (!(c >= 0 && Double.isFinite(c))) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "costs must be finite and >= 0: %s", c));
            }
        }
        double[] sorted = perCandidate.clone();
        Arrays.sort(sorted);
        double cheapest = 0;
        for (int i = 0; i < n; i++) {
            cheapest += sorted[i];
        }
        if (!(cheapest <= totalBudget)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "budget %s is below the cost %s of the %s cheapest " + "candidates", totalBudget, cheapest, n));
        }
        this.costs = perCandidate.clone();
        this.budget = totalBudget;
        return this;
    }

    /** Caps the exchange passes per start (for benchmarks; default unlimited until convergence). */
    public FedorovExchange maxPasses(int value) {
        if (!(value >= 1)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "passes must be >= 1: %s", value));
        }
        this.maxPasses = value;
        return this;
    }

    /** Runs the search. */
    public Design design() {
        return design(true);
    }

    /** As {@link #design()}; {@code polish}: the winner ends with the stable passes where it needs them. */
    Design design(boolean polish) {
        Random random = new Random(seed);
        Design best = null;
        for (int s = 0; s < starts; s++) {
            int[] start = randomStart(random);
            Design d = exchange(start, false);
            if (best == null || d.logDet() > best.logDet() + 1e-12) {
                best = d;
            }
        }
        if (!polish) {
            return best;
        }
        // Only the winner is polished (the stable passes cost more than the rank-one ones).
        return polish(best);
    }

    /** {@code log det(rowsᵀrows + fixedᵀfixed + ridge·I)}, by Cholesky (for checks and reporting). */
    public double logDet(int[] rows) {
        for (int r : java.util.Objects.requireNonNull(rows, "rows")) {
            if (r < 0 || r >= x.length) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "row %d is not a candidate (0..%d)", r,
                        x.length - 1));
            }
        }
        return logDetOf(information(rows));
    }

    private int[] randomStart(Random random) {
        int total = x.length;
        int[] perm = new int[total];
        for (int i = 0; i < total; i++) {
            perm[i] = i;
        }
        for (int i = total - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        if (costs == null) {
            return Arrays.copyOf(perm, n);
        }
        // Random order, but only take a row when the cheapest completion still fits the budget.
        Integer[] byCost = new Integer[total];
        for (int i = 0; i < total; i++) {
            byCost[i] = i;
        }
        Arrays.sort(byCost, (a, b) -> Double.compare(costs[a], costs[b]));
        boolean[] taken = new boolean[total];
        int[] out = new int[n];
        int k = 0;
        double spent = 0;
        for (int idx : perm) {
            if (k == n) {
                break;
            }
            double completion = 0;
            int need = n - k - 1;
            for (int c = 0; c < total && need > 0; c++) {
                int j = byCost[c];
                if (!taken[j] && j != idx) {
                    completion += costs[j];
                    need--;
                }
            }
            if (spent + costs[idx] + completion <= budget) {
                taken[idx] = true;
                out[k++] = idx;
                spent += costs[idx];
            }
        }
        return out;
    }

    private DMatrixRMaj information(int[] rows) {
        int p = x[0].length;
        DMatrixRMaj m = new DMatrixRMaj(p, p);
        for (int r : rows) {
            addOuter(m, x[r], 1);
        }
        for (double[] f : fixed) {
            addOuter(m, f, 1);
        }
        for (int j = 0; j < p; j++) {
            m.add(j, j, ridge);
        }
        return m;
    }

    static void addOuter(DMatrixRMaj m, double[] v, double sign) {
        int p = v.length;
        for (int a = 0; a < p; a++) {
            if (v[a] == 0) {
                continue;
            }
            for (int b = 0; b < p; b++) {
                m.add(a, b, sign * v[a] * v[b]);
            }
        }
    }

    static double logDetOf(DMatrixRMaj m) {
        CholeskyDecomposition_F64<DMatrixRMaj> chol = DecompositionFactory_DDRM.chol(m.numRows, true);
        DMatrixRMaj copy = m.copy();
        if (!chol.decompose(copy)) {
            return Double.NEGATIVE_INFINITY;
        }
        DMatrixRMaj l = chol.getT(null);
        double s = 0;
        for (int i = 0; i < m.numRows; i++) {
            s += 2 * Math.log(l.get(i, i));
        }
        return s;
    }

    /** Runs the exchange from one starting design (distinct candidate indices). */
    Design exchange(int[] start) {
        return polish(exchange(start, false));
    }

    /** As {@link #exchange(int[])}; {@code polish}: end with the stable passes where the design needs them. */
    Design exchange(int[] start, boolean polish) {
        Design d = rankOneExchange(start);
        return polish ? polish(d) : d;
    }

    /** The design, or where it is ill-conditioned the design after the stable passes. */
    private Design polish(Design d) {
        int[] design = d.chosen().stream().mapToInt(Integer::intValue).toArray();
        if (!illConditioned(design)) {
            return d;
        }
        boolean[] inDesign = new boolean[x.length];
        for (int r : design) {
            inDesign[r] = true;
        }
        List<Double> trace = new ArrayList<>(d.logDetTrace());
        int made = stablePasses(design, inDesign, cost(design), trace);
        return made == 0 ? d : result(design, d.exchanges() + made, trace);
    }

    /** The total cost of design rows (0 without costs). */
    private double cost(int[] design) {
        double spent = 0;
        for (int r : design) {
            spent += costs == null ? 0 : costs[r];
        }
        return spent;
    }

    /** Whether candidate {@code j} may replace design row {@code out}: not in the design, and within the budget. */
    private boolean swappable(int j, int out, double spent, boolean[] inDesign) {
        return !inDesign[j] && (costs == null || spent - costs[out] + costs[j] <= budget);
    }

    /** Passes per search: {@link #maxPasses(int)}, bounded by {@code 100·n + 100}. */
    private int passLimit() {
        return (int) Math.min(maxPasses, 100L * n + 100);
    }

    /** The design as a result: rows ascending, log det and D-efficiency recomputed from scratch. */
    private Design result(int[] design, int exchanges, List<Double> trace) {
        int[] sorted = design.clone();
        Arrays.sort(sorted);
        List<Integer> chosen = new ArrayList<>();
        for (int r : sorted) {
            chosen.add(r);
        }
        return new Design(chosen, logDetOf(information(sorted)), dEfficiency(sorted), exchanges, trace);
    }

    /** The rank-one scored exchange from one start. */
    private Design rankOneExchange(int[] start) {
        int total = x.length;
        int p = x[0].length;
        int[] design = start.clone();
        boolean[] inDesign = new boolean[total];
        for (int r : design) {
            inDesign[r] = true;
        }
        DMatrixRMaj m = information(design);
        double logDet = logDetOf(m);
        DMatrixRMaj inv = new DMatrixRMaj(p, p);
        if (!CommonOps_DDRM.invert(m, inv)) {
            throw new IllegalStateException("information matrix is singular; increase the ridge");
        }
        List<Double> trace = new ArrayList<>();
        trace.add(logDet);
        double[] dAll = new double[total];
        for (int j = 0; j < total; j++) {
            dAll[j] = quad(inv, x[j], x[j]);
        }
        double[] mInvXi = new double[p];
        double[] u = new double[p];
        int exchanges = 0;
        double spent = cost(design);
        int passes = passLimit();
        for (int pass = 0; pass < passes; pass++) {
            boolean improved = false;
            // Modified Fedorov (Cook and Nachtsheim): visit each design row and apply its best exchange at once.
            for (int i = 0; i < n; i++) {
                mult(inv, x[design[i]], mInvXi);
                double di = dAll[design[i]];
                double bestGain = 0;
                int bestJ = -1;
                for (int j = 0; j < total; j++) {
                    if (!swappable(j, design[i], spent, inDesign)) {
                        continue;
                    }
                    double dij = dot(mInvXi, x[j]);
                    double delta = dAll[j] - di - di * dAll[j] + dij * dij;
                    double gain = Math.log1p(Math.max(delta, -1 + 1e-300));
                    if (gain > bestGain) {
                        bestGain = gain;
                        bestJ = j;
                    }
                }
                if (bestJ < 0 || bestGain <= tolerance) {
                    continue;
                }
                int out = design[i];
                if (costs != null) {
                    spent += costs[bestJ] - costs[out];
                }
                rankOne(inv, x[bestJ], 1, u, dAll);
                rankOne(inv, x[out], -1, u, dAll);
                inDesign[out] = false;
                inDesign[bestJ] = true;
                design[i] = bestJ;
                logDet += bestGain;
                trace.add(logDet);
                exchanges++;
                improved = true;
                if (exchanges % 50 == 0) {
                    // Refresh against rounding drift of the rank-one updates.
                    DMatrixRMaj fresh = information(design);
                    CommonOps_DDRM.invert(fresh, inv);
                    logDet = logDetOf(fresh);
                    for (int j = 0; j < total; j++) {
                        dAll[j] = quad(inv, x[j], x[j]);
                    }
                }
            }
            if (!improved) {
                break;
            }
        }
        return result(design, exchanges, trace);
    }

    /**
     * True when the rank-one scores cannot be trusted: fewer rows (chosen and fixed) than columns, or a design row
     * whose removal would collapse a direction ({@code d(xᵢ)} within 1e-3 of 1). There {@code M⁻¹} is dominated by
     * the ridge, {@code d(x)} reaches {@code |x|²/ridge} and {@code Δ}'s terms {@code d(xᵢ)d(xⱼ)} and
     * {@code d(xᵢ, xⱼ)²} cancel to a few digits or none.
     */
    private boolean illConditioned(int[] design) {
        int p = x[0].length;
        if (design.length + fixed.length < p) {
            return true;
        }
        CholeskyDecomposition_F64<DMatrixRMaj> chol = DecompositionFactory_DDRM.chol(p, true);
        if (!chol.decompose(information(design))) {
            return true;
        }
        DMatrixRMaj l = chol.getT(null);
        double[] z = new double[p];
        for (int r : design) {
            if (forwardSquares(l, x[r], z) > 1 - 1e-3) {
                return true;
            }
        }
        return false;
    }

    /**
     * Exchange passes scored without cancellation, for ill-conditioned designs. {@code M = AᵀA} with {@code A} the
     * design rows stacked on {@code U}, the Cholesky factor of {@code FᵀF + ridge·I} (fixed rows and ridge), so
     * {@code m = n + p} rows; a full Householder QR of {@code A} gives
     * {@code M = RᵀR}, {@code wⱼ = R⁻ᵀxⱼ}, and for design row {@code i} its complement
     * {@code cᵢ = 1 − xᵢᵀM⁻¹xᵢ} as the squared norm of row {@code i} of {@code Q}'s last {@code m − p} columns (the
     * rows of an orthogonal {@code Q} have norm 1). Exchanging {@code xᵢ} for {@code xⱼ} multiplies {@code det M} by
     * {@code cᵢ(1 + |wⱼ|²) + (wᵢ·wⱼ)²}: two non-negative terms, each accurate, where the rank-one form subtracts
     * numbers near {@code 1/ridge}. A pass costs {@code O(m²·p + N·p² + n·N·p)}, the first two again after each
     * exchange made.
     *
     * @return the number of exchanges made
     */
    private int stablePasses(int[] design, boolean[] inDesign, double spent, List<Double> trace) {
        int total = x.length;
        int p = x[0].length;
        int rows = n + p;
        // The fixed rows and the ridge enter only through FᵀF + ridge·I = UᵀU: its p-row factor U stands for them.
        DMatrixRMaj prior = new DMatrixRMaj(p, p);
        for (double[] f : fixed) {
            addOuter(prior, f, 1);
        }
        for (int k = 0; k < p; k++) {
            prior.add(k, k, ridge);
        }
        int passes = passLimit();
        CholeskyDecomposition_F64<DMatrixRMaj> priorChol = DecompositionFactory_DDRM.chol(p, false);
        if (!priorChol.decompose(prior)) {
            return 0;
        }
        DMatrixRMaj upper = priorChol.getT(null);
        int exchanges = 0;
        double logDet = trace.get(trace.size() - 1);
        double[][] w = new double[total][p];
        double[] norm = new double[total];
        double[] c = new double[n];
        QRDecomposition<DMatrixRMaj> qr = DecompositionFactory_DDRM.qr(rows, p);
        for (int pass = 0; pass < passes; pass++) {
            boolean improved = false;
            boolean stale = true;
            for (int i = 0; i < n; i++) {
                if (stale) {
                    DMatrixRMaj a = new DMatrixRMaj(rows, p);
                    for (int k = 0; k < n; k++) {
                        System.arraycopy(x[design[k]], 0, a.data, k * p, p);
                    }
                    System.arraycopy(upper.data, 0, a.data, n * p, p * p);
                    if (!qr.decompose(a)) {
                        return exchanges;
                    }
                    DMatrixRMaj q = qr.getQ(null, false);
                    DMatrixRMaj lower = CommonOps_DDRM.transpose(qr.getR(null, true), null);
                    for (int j = 0; j < total; j++) {
                        norm[j] = forwardSquares(lower, x[j], w[j]);
                    }
                    for (int k = 0; k < n; k++) {
                        double sum = 0;
                        for (int col = p; col < rows; col++) {
                            double v = q.get(k, col);
                            sum += v * v;
                        }
                        c[k] = sum;
                    }
                    stale = false;
                }
                double[] wi = w[design[i]];
                double bestGain = 0;
                int bestJ = -1;
                for (int j = 0; j < total; j++) {
                    if (!swappable(j, design[i], spent, inDesign)) {
                        continue;
                    }
                    double dij = dot(wi, w[j]);
                    double gain = Math.log(c[i] * (1 + norm[j]) + dij * dij);
                    if (gain > bestGain) {
                        bestGain = gain;
                        bestJ = j;
                    }
                }
                if (bestJ < 0 || bestGain <= Math.max(tolerance, 1e-12 * Math.abs(logDet))) {
                    continue;
                }
                if (costs != null) {
                    spent += costs[bestJ] - costs[design[i]];
                }
                inDesign[design[i]] = false;
                inDesign[bestJ] = true;
                design[i] = bestJ;
                logDet += bestGain;
                trace.add(logDet);
                exchanges++;
                improved = true;
                stale = true;
            }
            if (!improved) {
                break;
            }
        }
        return exchanges;
    }

    /** {@code |L⁻¹v|²} for lower-triangular {@code L}, by forward substitution into {@code z}. */
    private static double forwardSquares(DMatrixRMaj l, double[] v, double[] z) {
        int p = v.length;
        double[] ld = l.data;
        double sum = 0;
        for (int a = 0; a < p; a++) {
            double t = v[a];
            int row = a * p;
            for (int b = 0; b < a; b++) {
                t -= ld[row + b] * z[b];
            }
            t /= ld[row + a];
            z[a] = t;
            sum += t * t;
        }
        return sum;
    }

    /**
     * {@code inv ← (M ± vvᵀ)⁻¹} from {@code inv = M⁻¹} (Sherman–Morrison), and every candidate's variance
     * {@code d(x) = xᵀM⁻¹x} updated in {@code O(N·p)}: {@code d'(x) = d(x) ∓ (xᵀu)² / (1 ± vᵀu)}, {@code u = M⁻¹v}.
     */
    private void rankOne(DMatrixRMaj inv, double[] v, int sign, double[] u, double[] dAll) {
        int p = v.length;
        mult(inv, v, u);
        double denom = 1 + sign * dot(v, u);
        for (int a = 0; a < p; a++) {
            for (int b = 0; b < p; b++) {
                inv.add(a, b, -sign * u[a] * u[b] / denom);
            }
        }
        for (int j = 0; j < x.length; j++) {
            double xu = dot(x[j], u);
            dAll[j] -= sign * xu * xu / denom;
        }
    }

    /**
     * D-efficiency on the space the candidates can estimate: with {@code V} the eigenvectors of {@code XᵀX/N} whose
     * eigenvalues exceed 1e-10 of the largest (r of them), {@code (det(VᵀXₙᵀXₙV/n) / Π λ)^(1/r)}. For a
     * full-rank candidate set this is the textbook {@code (det(XₙᵀXₙ/n)/det(XᵀX/N))^(1/p)}.
     */
    double dEfficiency(int[] rows) {
        int p = x[0].length;
        DMatrixRMaj chosen = new DMatrixRMaj(p, p);
        for (int r : rows) {
            addOuter(chosen, x[r], 1.0);
        }
        DMatrixRMaj all = new DMatrixRMaj(p, p);
        for (double[] r : x) {
            addOuter(all, r, 1.0);
        }
        CommonOps_DDRM.scale(1.0 / rows.length, chosen);
        CommonOps_DDRM.scale(1.0 / x.length, all);
        EigenDecomposition_F64<DMatrixRMaj> eig = DecompositionFactory_DDRM.eig(p, true, true);
        if (!eig.decompose(all.copy())) {
            return Double.NaN;
        }
        double max = 0;
        for (int k = 0; k < p; k++) {
            max = Math.max(max, eig.getEigenvalue(k).getReal());
        }
        List<double[]> basis = new ArrayList<>();
        double logAll = 0;
        for (int k = 0; k < p; k++) {
            double lambda = eig.getEigenvalue(k).getReal();
            if (lambda > 1e-10 * max) {
                basis.add(eig.getEigenVector(k).getData().clone());
                logAll += Math.log(lambda);
            }
        }
        int r = basis.size();
        if (r == 0) {
            return Double.NaN;
        }
        DMatrixRMaj v = new DMatrixRMaj(p, r);
        for (int k = 0; k < r; k++) {
            for (int a = 0; a < p; a++) {
                v.set(a, k, basis.get(k)[a]);
            }
        }
        DMatrixRMaj tmp = new DMatrixRMaj(r, p);
        CommonOps_DDRM.multTransA(v, chosen, tmp);
        DMatrixRMaj projected = new DMatrixRMaj(r, r);
        CommonOps_DDRM.mult(tmp, v, projected);
        double logChosen = logDetOf(projected);
        return Double.isFinite(logChosen) ? Math.exp((logChosen - logAll) / r) : 0;
    }

    private static double quad(DMatrixRMaj m, double[] a, double[] b) {
        int p = a.length;
        double s = 0;
        for (int r = 0; r < p; r++) {
            if (a[r] == 0) {
                continue;
            }
            double row = 0;
            for (int c = 0; c < p; c++) {
                row += m.unsafe_get(r, c) * b[c];
            }
            s += a[r] * row;
        }
        return s;
    }

    static void mult(DMatrixRMaj m, double[] v, double[] out) {
        int p = v.length;
        for (int r = 0; r < p; r++) {
            double s = 0;
            for (int c = 0; c < p; c++) {
                s += m.unsafe_get(r, c) * v[c];
            }
            out[r] = s;
        }
    }

    static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }
}
