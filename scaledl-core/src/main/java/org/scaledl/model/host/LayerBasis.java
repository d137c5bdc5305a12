package org.scaledl.model.host;

import org.scaledl.model.comm.Collectives;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * The basis functions of the layer-wise model. A layer of family {@code f} costs
 *
 * <pre>
 *   t(layer) = Σ_k θ[f,k] · φ_k(layer),   θ ≥ 0
 * </pre>
 *
 * with the per-layer basis {@code φ} ({@link #LAYER_TERMS} terms, FLOPs and bytes include the backward pass in
 * training, {@code p} = threads per worker):
 * <ol>
 *   <li>{@code dispatch}: operator launches (1 forward, +1 backward when gradients flow), times the sequential steps
 *       of a recurrent cell (each step a small contraction the framework dispatches)</li>
 *   <li>{@code flops/p}: parallel compute</li>
 *   <li>{@code flops}: serial compute (with {@code flops/p}, an Amdahl split)</li>
 *   <li>{@code bytes/p}, {@code bytes}: memory traffic, likewise split</li>
 *   <li>{@code flops·F0/(F+F0)}: the extra per-FLOP cost of small operators ({@code F} = forward FLOPs,
 *       {@code F0} = 10⁶), which makes the cost a concave, saturating function of size</li>
 *   <li>{@code dispatch·(1−1/p)}, {@code flops·(1−1/p)}, {@code bytes·(1−1/p)}: the cost of threading itself
 *       (synchronisation, oversubscription, shared caches), which on small or shared machines can make more
 *       threads slower; with the terms above the thread count acts non-monotonically where the data say so. The
 *       factor saturates at 1, so however many threads, threading costs at most twice what it cost at two threads:
 *       an Amdahl-type bound, never a fitted blow-up</li>
 * </ol>
 * and workload-level terms ({@link #GLOBAL_TERMS}): a per-iteration overhead for each phase, the optimizer's
 * per-parameter and per-parameter-tensor cost in training, ring all-reduce bandwidth
 * ({@code 2(n−1)/n · gradient bytes}, which tends to twice the gradient bytes) and latency ({@code 2(n−1) · buckets},
 * linear in {@code n}) terms of {@link Collectives}, whose fitted coefficients absorb the share not overlapped with
 * backward, worker contention ({@code (1−1/n)·bytes}, {@code (1−1/n)·flops}: bounded by the work it slows) and a
 * data-parallel fixed cost. Every term is finite, non-negative and non-decreasing in the batch and the world size, so
 * predictions beyond the fitted range keep these asymptotics. A workload's <em>design row</em> sums each layer's basis into its family's block and
 * appends the workload terms, so the model is linear in θ: the whole-workload total is {@code row · θ}.
 *
 * <pre>{@code
 * double[] x = LayerBasis.standard().row(workload);   // width() values
 * }</pre>
 *
 * <p>Feature analysis is cached with each graph ({@link ModelGraph#memo}), and per (graph, batch, phase) the per-family sums that
 * a row is made of, so rows are cheap after the first call for a batch size; from the second batch of a graph and
 * phase on, the sums come from their affine form in the batch (a few operations per layer instead of re-deriving
 * every layer's features), checked against the layer walk when it is built. Thread-safe.
 */
public final class LayerBasis {
    /** Per-layer terms. */
    public static final List<String> LAYER_TERMS = List.of("dispatch", "flops/p", "flops", "bytes/p", "bytes",
            "small-op flops", "dispatch·(1-1/p)", "flops·(1-1/p)", "bytes·(1-1/p)");
    /** Workload-level terms. */
    public static final List<String> GLOBAL_TERMS = List.of("overhead:train", "overhead:infer", "optimizer:params",
            "optimizer:tensors", "allreduce:bytes", "allreduce:latency", "contention:bytes·(1-1/n)",
            "contention:flops·(1-1/n)", "ddp:fixed");
    /** The per-layer terms of the version-1 basis, whose threading terms grew linearly in {@code p − 1}. */
    static final List<String> V1_LAYER_TERMS = List.of("dispatch", "flops/p", "flops", "bytes/p", "bytes",
            "small-op flops", "dispatch·(p-1)", "flops·(p-1)", "bytes·(p-1)");
    /** The workload terms of the version-1 basis, whose contention grew linearly in {@code n − 1}. */
    static final List<String> V1_GLOBAL_TERMS = List.of("overhead:train", "overhead:infer", "optimizer:params",
            "optimizer:tensors", "allreduce:bytes", "allreduce:latency", "contention:bytes", "contention:flops",
            "ddp:fixed");
    static final double SMALL_OP_FLOPS = 1e6;

    private static final List<OpFamily> FAMILIES = List.of(OpFamily.values());

    /**
     * Cost groups of the current basis beyond the operator families: layers of one family that execute differently
     * enough to deserve their own coefficients (each still shrunk toward the shared centre).
     */
    enum Extra {
        /** 1×1 convolutions: a GEMM over pixels, without the im2col of a spatial window. */
        CONV_POINTWISE,
        /** Contractions of two activations (attention's {@code QKᵀ} and {@code AV}): no weight, batched. */
        DENSE_ACTIVATIONS,
        /**
         * 1×1 two-dimensional convolutions with stride 1 and no dilation, in a workload of fewer than
         * {@value #NATIVE_BATCH_LIMIT} samples per worker on one thread: PyTorch's CPU backend (1.x and 2.x,
         * {@code ConvParams::use_mkldnn}) runs exactly these on its native path instead of oneDNN, several times
         * slower per FLOP where oneDNN vectorises well (8× measured for a 128-channel 1×1 convolution on an
         * AVX-512 VM). Elsewhere such layers are {@link #CONV_POINTWISE}. Frameworks without that rule simply leave
         * this group's coefficients near the pointwise ones.
         */
        CONV_POINTWISE_NATIVE
    }

    /** The batch per worker from which PyTorch's CPU backend runs 1×1 convolutions on oneDNN even on one thread. */
    public static final int NATIVE_BATCH_LIMIT = 16;
    private static final LayerBasis STANDARD = new LayerBasis(true);
    private static final LayerBasis V1 = new LayerBasis(false);
    /** Bounded threading and contention factors ({@code 1 − 1/p}); false for the version-1 basis ({@code p − 1}). */
    private final boolean bounded;


    private record Analysis(FeatureExtractor extractor, long[] gradientStats, int[] group, boolean[] nativePath,
            Map<Phase, Optional<Affine>> affine, java.util.Set<Phase> walked) {
    }

    /** Per-family sums per graph and (batch, regime, phase). */
    private final org.scaledl.graph.GraphCache<Long, double[]> sumsCache =
            new org.scaledl.graph.GraphCache<>(MAX_CACHED_BATCHES);

    /** The batches an {@link Affine} form is read at (the first two) and checked at (all others). */
    private static final long[] AFFINE_CHECKS = {1, 2, 3, 64, 4096};

    /**
     * The per-family sums of one graph and phase as functions of the batch: every layer's dispatch, FLOPs and bytes
     * are affine in the batch (shapes are {@code perBatch · b + constant}), so their group sums are too, and only the
     * small-operator term, a ratio, needs a pass over the layers. This is the fast path of {@link #familySums}; it is
     * built only when every layer's terms match the affine form at each batch of {@link #AFFINE_CHECKS} (a product
     * of two batch-dependent sizes, or a maximum of two affine sizes that cross, fails there and keeps the exact
     * layer walk), and used for batches up to the largest checked: {@link #LARGE_BATCH} where the form holds there
     * too (and no size overflows), else 4096. An affine function that equals a convex piecewise-affine one (a
     * maximum of affine sizes) at 1, 2 and a larger batch equals it everywhere in between. Checked against the layer
     * walk by {@code LayerBasisProperties}.
     */
    private static final class Affine {
        static final long LARGE_BATCH = 1L << 24;
        final long maxBatch;
        /** Per regime (0: oneDNN, 1: native 1×1 path), per group: slope and intercept of dispatch, flops, bytes. */
        final double[][] slope;
        final double[][] intercept;
        /** Layers with FLOPs, their group per regime and the slope/intercept of their total and forward FLOPs. */
        final int[][] smallGroup;
        final double[] flopsA;
        final double[] flopsC;
        final double[] fwdA;
        final double[] fwdC;

        Affine(long maxBatch, double[][] slope, double[][] intercept, int[][] smallGroup, double[] flopsA,
                double[] flopsC, double[] fwdA, double[] fwdC) {
            this.maxBatch = maxBatch;
            this.slope = slope;
            this.intercept = intercept;
            this.smallGroup = smallGroup;
            this.flopsA = flopsA;
            this.flopsC = flopsC;
            this.fwdA = fwdA;
            this.fwdC = fwdC;
        }

        double[] sums(long batch, boolean nativeRegime, int groups) {
            int r = nativeRegime ? 1 : 0;
            double b = batch;
            double[] out = new double[groups * SUMS];
            double[] a = slope[r];
            double[] c = intercept[r];
            for (int k = 0; k < out.length; k++) {
                out[k] = a[k] * b + c[k];
            }
            int[] group = smallGroup[r];
            for (int k = 0; k < group.length; k++) {
                double flops = flopsA[k] * b + flopsC[k];
                out[group[k] * SUMS + 3] += flops * SMALL_OP_FLOPS / (fwdA[k] * b + fwdC[k] + SMALL_OP_FLOPS);
            }
            return out;
        }
    }

    /** Cached (batch, phase) entries per graph before the cache is cleared. */
    private static final int MAX_CACHED_BATCHES = 1024;
    /** Per-family sums kept per (graph, batch, phase): dispatch, flops, bytes, small-op flops. */
    private static final int SUMS = 4;

    /** This basis's key in a graph's cache ({@link ModelGraph#memo}): its own, which no caller holds. */
    private final Object memoKey = new Object();

    private LayerBasis(boolean bounded) {
        this.bounded = bounded;
    }

    /** The basis described above. */
    public static LayerBasis standard() {
        return STANDARD;
    }

    /**
     * The basis of version-1 model files, whose threading ({@code p − 1}) and contention ({@code n − 1}) terms grew
     * without bound: kept so that those files predict as they did.
     */
    static LayerBasis v1() {
        return V1;
    }

    /** The factor threading and contention terms scale with: {@code 1 − 1/x} (or {@code x − 1} in version 1). */
    private double excess(double x) {
        return bounded ? 1 - 1 / x : x - 1;
    }

    /** Cost groups: the operator families, then (current basis) {@link Extra}. */
    int groupCount() {
        return FAMILIES.size() + (bounded ? Extra.values().length : 0);
    }

    /** Number of columns of a design row. */
    public int width() {
        return groupCount() * LAYER_TERMS.size() + GLOBAL_TERMS.size();
    }

    /** Column index of a family's term (families come first in every version of the basis). */
    public static int column(OpFamily f, int term) {
        return f.ordinal() * LAYER_TERMS.size() + term;
    }

    /** Column index of a group's term. */
    int groupColumn(int group, int term) {
        return group * LAYER_TERMS.size() + term;
    }

    /** Column index of a workload-level term. */
    public int globalColumn(int term) {
        return groupCount() * LAYER_TERMS.size() + term;
    }

    /** The cost group of a layer in a workload (its family, or an {@link Extra} group). */
    int groupOf(Workload w, LayerFeatures lf) {
        Analysis a = analysis(w.graph());
        return groupOf(a, lf.layer(), nativeRegime(w));
    }

    private int groupOf(Analysis a, int layer, boolean nativeRegime) {
        return nativeRegime && a.nativePath()[layer] ? FAMILIES.size() + Extra.CONV_POINTWISE_NATIVE.ordinal()
                : a.group()[layer];
    }

    /** Whether a workload is in the regime where {@link Extra#CONV_POINTWISE_NATIVE} applies. */
    private boolean nativeRegime(Workload w) {
        return bounded && w.threads() == 1 && w.batch() < NATIVE_BATCH_LIMIT;
    }

    /** 1×1 two-dimensional convolutions with unit strides and dilations (the layers of the native path). */
    private boolean[] nativePath(ModelGraph g, int[] groups) {
        boolean[] out = new boolean[g.size()];
        int pointwise = FAMILIES.size() + Extra.CONV_POINTWISE.ordinal();
        for (int i = 0; i < g.size(); i++) {
            if (!bounded || groups[i] != pointwise) {
                continue;
            }
            org.scaledl.graph.Layer l = g.layer(i);
            long[] w = l.input(1).flatMap(g::tensor).flatMap(TensorInfo::shape).map(s -> s.at(1)).orElse(null);
            out[i] = w != null && w.length == 4 && allOnes(l, "strides") && allOnes(l, "dilations");
        }
        return out;
    }

    private static boolean allOnes(org.scaledl.graph.Layer l, String attribute) {
        long[] values = l.attribute(attribute).map(org.scaledl.graph.Attribute::asLongs).orElse(new long[0]);
        for (long v : values) {
            if (v != 1) {
                return false;
            }
        }
        return true;
    }

    private int[] groups(ModelGraph g, FeatureExtractor fx) {
        int[] out = new int[g.size()];
        for (int i = 0; i < g.size(); i++) {
            OpFamily f = fx.family(i);
            out[i] = f.ordinal();
            if (!bounded) {
                continue;
            }
            org.scaledl.graph.Layer l = g.layer(i);
            if (f == OpFamily.CONV && l.opType().equals("Conv") && l.longAttribute("group", 1) == 1
                    && kernelElements(g, l) == 1) {
                out[i] = FAMILIES.size() + Extra.CONV_POINTWISE.ordinal();
            } else if (f == OpFamily.DENSE && (l.opType().equals("MatMul") || l.opType().equals("Einsum"))
                    && l.inputs().stream().noneMatch(in -> g.tensor(in).map(t -> t.role() == TensorRole.PARAMETER
                            || t.role() == TensorRole.BUFFER).orElse(false))) {
                out[i] = FAMILIES.size() + Extra.DENSE_ACTIVATIONS.ordinal();
            }
        }
        return out;
    }

    private static long kernelElements(ModelGraph g, org.scaledl.graph.Layer l) {
        long[] w = l.input(1).flatMap(g::tensor).flatMap(TensorInfo::shape).map(s -> s.at(1)).orElse(null);
        if (w == null || w.length < 3) {
            return 0;
        }
        long k = 1;
        for (int d = 2; d < w.length; d++) {
            k *= w[d];
        }
        return k;
    }

    /** Names of all columns, e.g. {@code CONV:flops/p} or {@code allreduce:bytes}. */
    public List<String> columnNames() {
        List<String> out = new ArrayList<>();
        List<String> groups = new ArrayList<>();
        FAMILIES.forEach(f -> groups.add(f.name()));
        if (bounded) {
            for (Extra e : Extra.values()) {
                groups.add(e.name());
            }
        }
        for (String f : groups) {
            for (String t : bounded ? LAYER_TERMS : V1_LAYER_TERMS) {
                out.add(f + ":" + t);
            }
        }
        out.addAll(bounded ? GLOBAL_TERMS : V1_GLOBAL_TERMS);
        return List.copyOf(out);
    }

    /** The (cached) feature analysis of a graph. */
    public FeatureExtractor extractor(ModelGraph g) {
        return analysis(g).extractor();
    }

    private Analysis analysis(ModelGraph g) {
        return g.memo(memoKey, graph -> {
            FeatureExtractor fx = FeatureExtractor.of(graph);
            int[] groups = groups(graph, fx);
            return new Analysis(fx, gradientStats(graph), groups, nativePath(graph, groups),
                    new ConcurrentHashMap<>(), ConcurrentHashMap.newKeySet());
        });
    }

    /** Layer features of a workload. */
    public List<LayerFeatures> features(Workload w) {
        return extractor(w.graph()).extract(w.batch(), w.phase());
    }

    /**
     * The per-layer basis {@code φ} of one layer into {@code out[0..LAYER_TERMS)}.
     *
     * @param lf  the layer's features
     * @param w   the workload (threads, phase)
     * @param out receives the terms (modified)
     */
    public void layerTerms(LayerFeatures lf, Workload w, double[] out) {
        oneThreadTerms(lf, out);
        double p = w.threads();
        out[1] = out[2] / p;
        out[3] = out[4] / p;
        double e = excess(p);
        out[6] = out[0] * e;
        out[7] = out[2] * e;
        out[8] = out[4] * e;
    }

    /** The design row of a workload: per-family sums of {@link #layerTerms} followed by the workload terms. */
    public double[] row(Workload w) {
        double[] sums = familySums(w);
        double[] row = new double[width()];
        double p = w.threads();
        double e = excess(p);
        double flops = 0;
        double bytes = 0;
        for (int f = 0; f < groupCount(); f++) {
            groupTerms(sums, f, p, e, row, f * LAYER_TERMS.size());
            flops += sums[f * SUMS + 1];
            bytes += sums[f * SUMS + 2];
        }
        globalTerms(w, flops, bytes, row);
        return row;
    }

    /** The {@link #LAYER_TERMS} of group {@code f} from its sums, into {@code out[at..)}. */
    private static void groupTerms(double[] sums, int f, double p, double e, double[] out, int at) {
        double dispatch = sums[f * SUMS];
        double fl = sums[f * SUMS + 1];
        double by = sums[f * SUMS + 2];
        out[at] = dispatch;
        out[at + 1] = fl / p;
        out[at + 2] = fl;
        out[at + 3] = by / p;
        out[at + 4] = by;
        out[at + 5] = sums[f * SUMS + 3];
        out[at + 6] = dispatch * e;
        out[at + 7] = fl * e;
        out[at + 8] = by * e;
    }

    /**
     * Per-family sums of the thread-independent layer terms (dispatch, FLOPs, bytes, small-op FLOPs) for the
     * workload's graph, batch and phase. Every other layer term is these divided or multiplied by a function of the
     * thread count, so the sums are cached per (graph, batch, phase): a scheduler scoring many placements of one
     * model pays for the layer walk once.
     */
    private double[] familySums(Workload w) {
        Analysis a = analysis(w.graph());
        boolean nativeRegime = nativeRegime(w);
        long key = (long) w.batch() << 2 | (nativeRegime ? 2 : 0) | (w.phase() == Phase.TRAIN ? 1 : 0);
        return sumsCache.get(w.graph(), key, () -> {
            // The first batch of a graph and phase walks the layers (a graph queried once pays one walk); the second
            // builds the affine form, which every later batch uses (bit-identical to the walk: LayerBasisProperties).
            Optional<Affine> affine = a.walked().add(w.phase()) ? Optional.empty()
                    : a.affine().computeIfAbsent(w.phase(), ph -> affine(a, ph));
            return affine.isPresent() && w.batch() <= affine.get().maxBatch
                    ? affine.get().sums(w.batch(), nativeRegime, groupCount())
                    : exactSums(a, w.batch(), w.phase(), nativeRegime);
        });
    }

    /** The per-family sums by walking every layer's features (the reference the affine form is checked against). */
    private double[] exactSums(Analysis a, long batch, Phase phase, boolean nativeRegime) {
        double[] sums = new double[groupCount() * SUMS];
        double[] t = new double[LAYER_TERMS.size()];
        for (LayerFeatures lf : a.extractor().extract(batch, phase)) {
            oneThreadTerms(lf, t);
            int base = groupOf(a, lf.layer(), nativeRegime) * SUMS;
            sums[base] += t[0];
            sums[base + 1] += t[2];
            sums[base + 2] += t[4];
            sums[base + 3] += t[5];
        }
        return sums;
    }

    /** {@link #layerTerms} on one thread (the thread-independent terms the sums keep). */
    private void oneThreadTerms(LayerFeatures lf, double[] t) {
        if (!lf.executes()) {
            Arrays.fill(t, 0, LAYER_TERMS.size(), 0);
            return;
        }
        double flops = lf.flopsFwd() + lf.flopsBwd();
        t[0] = (1 + (lf.flopsBwd() > 0 || lf.bytesBwd() > 0 ? 1 : 0)) * (bounded ? lf.steps() : 1);
        t[2] = flops;
        t[4] = lf.bytesFwd() + lf.bytesBwd();
        t[5] = flops * SMALL_OP_FLOPS / (lf.flopsFwd() + SMALL_OP_FLOPS);
    }

    /** The affine form of a graph's sums in one phase, or empty where a layer is not affine in the batch. */
    private Optional<Affine> affine(Analysis a, Phase phase) {
        int n = a.group().length;
        double[] x0 = layerValues(a, AFFINE_CHECKS[0], phase);
        double[] x1 = layerValues(a, AFFINE_CHECKS[1], phase);
        if (x0 == null || x1 == null) {
            return Optional.empty();
        }
        double[] slope = new double[4 * n];
        double[] intercept = new double[4 * n];
        for (int k = 0; k < 4 * n; k++) {
            slope[k] = x1[k] - x0[k];
            intercept[k] = x0[k] - slope[k];
        }
        for (int j = 2; j < AFFINE_CHECKS.length; j++) {
            if (!onLine(layerValues(a, AFFINE_CHECKS[j], phase), AFFINE_CHECKS[j], slope, intercept)) {
                return Optional.empty();
            }
        }
        double[][] groupSlope = new double[2][groupCount() * SUMS];
        double[][] groupIntercept = new double[2][groupCount() * SUMS];
        List<Integer> withFlops = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            for (int r = 0; r < 2; r++) {
                int base = groupOf(a, i, r == 1) * SUMS;
                for (int q = 0; q < 3; q++) {
                    groupSlope[r][base + q] += slope[4 * i + q];
                    groupIntercept[r][base + q] += intercept[4 * i + q];
                }
            }
            if (x0[4 * i + 1] != 0 || slope[4 * i + 1] != 0) {
                withFlops.add(i);
            }
        }
        int m = withFlops.size();
        int[][] smallGroup = new int[2][m];
        double[] flopsA = new double[m];
        double[] flopsC = new double[m];
        double[] fwdA = new double[m];
        double[] fwdC = new double[m];
        for (int k = 0; k < m; k++) {
            int i = withFlops.get(k);
            smallGroup[0][k] = groupOf(a, i, false);
            smallGroup[1][k] = groupOf(a, i, true);
            flopsA[k] = slope[4 * i + 1];
            flopsC[k] = intercept[4 * i + 1];
            fwdA[k] = slope[4 * i + 3];
            fwdC[k] = intercept[4 * i + 3];
        }
        long maxBatch = onLine(layerValues(a, Affine.LARGE_BATCH, phase), Affine.LARGE_BATCH, slope, intercept)
                ? Affine.LARGE_BATCH : AFFINE_CHECKS[AFFINE_CHECKS.length - 1];
        return Optional.of(new Affine(maxBatch, groupSlope, groupIntercept, smallGroup, flopsA, flopsC, fwdA, fwdC));
    }

    /**
     * Per layer, the values the sums are made of at a batch: dispatch, FLOPs, bytes and forward FLOPs (four per
     * layer, by layer index); null where a size overflows.
     */
    private double[] layerValues(Analysis a, long batch, Phase phase) {
        double[] v = new double[4 * a.group().length];
        double[] t = new double[LAYER_TERMS.size()];
        try {
            for (LayerFeatures lf : a.extractor().extract(batch, phase)) {
                oneThreadTerms(lf, t);
                int i = lf.layer();
                v[4 * i] = t[0];
                v[4 * i + 1] = t[2];
                v[4 * i + 2] = t[4];
                v[4 * i + 3] = lf.executes() ? lf.flopsFwd() : 0;
            }
        } catch (ArithmeticException overflow) {
            return null;
        }
        return v;
    }

    /** Whether values (null: none) equal {@code slope · batch + intercept}, to 10⁻⁹ relative. */
    private static boolean onLine(double[] v, long batch, double[] slope, double[] intercept) {
        if (v == null) {
            return false;
        }
        for (int k = 0; k < v.length; k++) {
            double got = slope[k] * batch + intercept[k];
            if (Math.abs(got - v[k]) > 1e-9 * Math.max(1, Math.abs(v[k]))) {
                return false;
            }
        }
        return true;
    }

    /** Per-family sums by the layer walk, for {@code LayerBasisProperties} to check the fast path against. */
    double[] exactFamilySums(Workload w) {
        return exactSums(analysis(w.graph()), w.batch(), w.phase(), nativeRegime(w));
    }

    /** Per-family sums as {@link #row} uses them (the affine fast path where it applies). */
    double[] familySumsForTest(Workload w) {
        return familySums(w).clone();
    }

    /** Whether the affine fast path applies to a graph in a phase (at least for batches up to 4096). */
    boolean hasAffineForm(ModelGraph g, Phase phase) {
        Analysis a = analysis(g);
        return a.affine().computeIfAbsent(phase, ph -> affine(a, ph)).isPresent();
    }

    /**
     * {@code row(w) · theta} without building the row: the same products added in the same column order (so the same
     * value to the last bit), skipping groups the graph does not have. The repeated-query path of a prediction.
     */
    double dot(Workload w, double[] theta) {
        double[] sums = familySums(w);
        double p = w.threads();
        double e = excess(p);
        double t = 0;
        double flops = 0;
        double bytes = 0;
        int terms = LAYER_TERMS.size();
        double[] x = new double[terms];
        for (int f = 0; f < groupCount(); f++) {
            int s0 = f * SUMS;
            if (sums[s0] != 0 || sums[s0 + 1] != 0 || sums[s0 + 2] != 0 || sums[s0 + 3] != 0) {
                groupTerms(sums, f, p, e, x, 0);
                int b = f * terms;
                for (int k = 0; k < terms; k++) {
                    t += x[k] * theta[b + k];
                }
            }
            flops += sums[s0 + 1];
            bytes += sums[s0 + 2];
        }
        double[] g = new double[GLOBAL_TERMS.size()];
        globalTerms(w, flops, bytes, g, 0);
        int c = globalColumn(0);
        for (int k = 0; k < g.length; k++) {
            t += g[k] * theta[c + k];
        }
        return t;
    }

    /** Workload-level terms into {@code row} from the global columns on. */
    void globalTerms(Workload w, double flops, double bytes, double[] row) {
        globalTerms(w, flops, bytes, row, globalColumn(0));
    }

    /** Workload-level terms into {@code row} from index {@code g} on. */
    private void globalTerms(Workload w, double flops, double bytes, double[] row, int g) {
        boolean train = w.phase() == Phase.TRAIN;
        long[] grad = analysis(w.graph()).gradientStats();
        double n = w.worldSize();
        row[g] = train ? 1 : 0;
        row[g + 1] = train ? 0 : 1;
        row[g + 2] = train ? grad[0] : 0;
        row[g + 3] = train ? grad[1] : 0;
        boolean dp = train && n > 1;
        int ranks = w.worldSize();
        row[g + 4] = dp ? Collectives.ringVolume(ranks) * grad[2] : 0;
        row[g + 5] = dp ? Collectives.ringSteps(ranks) * Collectives.buckets(grad[2]) : 0;
        row[g + 6] = excess(n) * bytes;
        row[g + 7] = excess(n) * flops;
        row[g + 8] = dp ? 1 : 0;
    }

    /** {parameters, parameter tensors, gradient bytes} of a graph. */
    private static long[] gradientStats(ModelGraph g) {
        long params = 0;
        long tensors = 0;
        long bytes = 0;
        for (TensorInfo t : g.tensors().values()) {
            if (t.role() == TensorRole.PARAMETER) {
                params += t.elements(1);
                tensors++;
                bytes += t.bytes(1);
            }
        }
        return new long[] {params, tensors, bytes};
    }
}
